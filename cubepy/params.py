"""`ParamInfo`: a parameter of a @cube function, as launches check arguments against.

It lives outside the frontend so that a signature read back from the disk cache
(cubepy/spec_cache.py) needs no parsing.
"""
from __future__ import annotations

from typing import Any, Optional

from .ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)
from .ir.loc import Loc


@dataclass(frozen=True)
class ParamInfo:
    """A parameter of a @cube function.

    kind: "tensor", "array", "scalar" or "comptime" ("struct" for a device-function
    parameter annotated with a @cubepy.struct, `elem` then being the class). `elem` is
    the element (or scalar) type: a DType, a Generic placeholder, a LineOf, or None
    (comptime, or an unannotated device-function parameter). `pytype` is the Python type
    of a comptime. A field of a kernel's struct parameter is a parameter of its own,
    named by its path (`cfg.scale`), with the identifier `symbol` (`cfg_scale`).
    """

    name: str
    kind: str
    elem: Any
    pytype: Optional[type]
    loc: Loc
    symbol: Optional[str] = None

    @property
    def ir_name(self) -> str:
        """The parameter's name in the IR and the launch ABI."""
        return self.symbol or self.name
