"""What the frontend inlines and the one decorator it accepts: kernel.py registers
`CubeFunction` and `cube` here when it is imported, without loading the frontend's
intrinsics (and through them the whole frontend) at `import cubepy`."""
from __future__ import annotations

from typing import Any, Callable

_INLINABLE: tuple[type, ...] = ()  # classes whose instances are inlined (CubeFunction)
_DECORATORS: list[Callable] = []  # the decorators that make one (`cube`)


def register_inlinable(cls: type, decorator: Callable | None = None) -> None:
    """Declares `cls` (kernel.CubeFunction) as a device function the builder inlines, and
    `decorator` (kernel.cube) as the one decorator a @cube function may carry. kernel.py
    registers them when it is imported, which happens before any kernel can be parsed."""
    global _INLINABLE
    if cls not in _INLINABLE:
        _INLINABLE = (*_INLINABLE, cls)
    if decorator is not None and decorator not in _DECORATORS:
        _DECORATORS.append(decorator)


def is_inlinable(obj: Any) -> bool:
    """True for a @cube function (inlined at its call sites)."""
    return isinstance(obj, _INLINABLE)


def is_cube_decorator(obj: Any) -> bool:
    """True for the `@cube` decorator itself (the only decorator a kernel may have)."""
    return any(obj is d for d in _DECORATORS)
