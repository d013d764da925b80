"""What a kernel expression can denote while the IR is built, and the tables that give
meaning to the Python objects a kernel names (resolved by identity)."""
from __future__ import annotations

import builtins
import math as pymath
from dataclasses import dataclass
from typing import Any, Optional

from ..ir.nodes import MATH_FUNCS, BufferRef
from ..ir.types import LineType
from ..lang import INTRINSICS
from ..math import MATH_INTRINSICS


@dataclass(frozen=True)
class Py:
    """A value known at compile time: a number, bool, str (comptime), or any Python
    object a kernel names (a module, a dtype, an intrinsic, a @cube function...)."""

    value: Any


@dataclass(frozen=True)
class Buf:
    """A buffer: a Tensor/Array parameter or a SharedMemory array."""

    ref: BufferRef
    kind: str  # "tensor", "array" or "shared"
    size: Optional[int] = None  # shared memory only
    line: int = 1  # the line size of a Tensor[Line[T]] / Array[Line[T]] (1: scalars)

    @property
    def value_type(self):
        """The type of `buf[i]`: the element type, or a LineType for a line buffer."""
        return LineType(self.ref.elem, self.line) if self.line > 1 else self.ref.elem


@dataclass(frozen=True)
class Dead:
    """A loop variable after its loop (reading it is an error)."""

    name: str


def is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float))


# Python builtins a kernel may call.
PY_BUILTINS: dict[int, str] = {id(getattr(builtins, n)): n
                               for n in ("range", "len", "max", "min", "abs", "round",
                                         "int", "float", "bool")}

# Python's math functions with a cubepy.math counterpart.
PY_MATH: dict[int, str] = {id(getattr(pymath, n)): n for n in MATH_FUNCS if hasattr(pymath, n)}

# cubepy intrinsics: id -> ("lang" | "math", name)
INTRINSIC_IDS: dict[int, tuple[str, str]] = {id(o): ("lang", n) for n, o in INTRINSICS.items()}
INTRINSIC_IDS.update({id(o): ("math", n) for n, o in MATH_INTRINSICS.items()})
