"""What a call inside a kernel can name besides a buffer method: @cube device functions
(recognised through a registration hook, so the frontend never imports kernel.py and,
through it, the runtimes)."""
from __future__ import annotations

from typing import Any, Callable

_INLINABLE: list[type] = []  # classes whose instances are inlined when called (CubeFunction)
_DECORATORS: list[Callable] = []  # the decorators that make one (`cube`)


def register_inlinable(cls: type, decorator: Callable | None = None) -> None:
    """Declares `cls` (kernel.CubeFunction) as a device function the builder inlines, and
    `decorator` (kernel.cube) as the one decorator a @cube function may carry. kernel.py
    registers them when it is imported, which happens before any kernel can be parsed."""
    if cls not in _INLINABLE:
        _INLINABLE.append(cls)
    if decorator is not None and decorator not in _DECORATORS:
        _DECORATORS.append(decorator)


def is_inlinable(obj: Any) -> bool:
    """True for a @cube function (inlined at its call sites)."""
    return isinstance(obj, tuple(_INLINABLE))


def is_cube_decorator(obj: Any) -> bool:
    """True for the `@cube` decorator itself (the only decorator a kernel may have)."""
    return any(obj is d for d in _DECORATORS)
