"""What a kernel expression can denote while the IR is built, and the tables that give
meaning to the Python objects a kernel names (resolved by identity)."""
from __future__ import annotations

import builtins
import math as pymath
from typing import Any, Optional

from ..cmma import CMMA_INTRINSICS
from ..pipeline import PIPELINE_INTRINSICS
from ..ir.batched_dataclass import dataclass
from ..ir.nodes import BufferRef, MatrixDecl
from ..ir.types import LineType
from ..lang import INTRINSICS, Line, tf32
from ..math import MATH_INTRINSICS


@dataclass(frozen=True)
class Py:
    """A value known at compile time: a number, bool, str (comptime), or any Python
    object a kernel names (a module, a dtype, an intrinsic, a @cube function...)."""

    value: Any


@dataclass(frozen=True)
class Buf:
    """A buffer: a Tensor/Array parameter, a SharedMemory or a LocalArray."""

    ref: BufferRef
    kind: str  # "tensor", "array", "shared" or "local"
    size: Optional[int] = None  # shared memory and local arrays only (in lines)
    line: int = 1  # the line size of a Tensor[Line[T]] / Array[Line[T]] (1: scalars)
    shape: Optional[tuple[int, ...]] = None  # SharedMemory(T, (rows, cols)): its shape
    start: Optional[Any] = None  # a view x[a:b]: its first element in `ref` (a u32 Expr)
    length: Optional[Any] = None  # a view: its number of elements (a u32 Expr)

    @property
    def dims(self) -> tuple[int, ...]:
        """The compile-time shape of shared memory ((size,) when 1-D)."""
        return self.shape if self.shape is not None else (self.size,)

    @property
    def is_kernel_array(self) -> bool:
        """A SharedMemory or LocalArray: declared in the kernel, its size known at compile
        time, lines stored as their elements (the IR has lines only in global buffers)."""
        return self.kind in ("shared", "local")

    @property
    def value_type(self):
        """The type of `buf[i]`: the element type, or a LineType for a line buffer."""
        return LineType(self.ref.elem, self.line) if self.line > 1 else self.ref.elem


@dataclass(frozen=True)
class Tup:
    """Several values made together (`frexp(x)`, a device function returning `a, b`):
    unpacked by `m, e = ...`. Each item is a Py, a Buf or an IR expression that is safe
    to read more than once (a constant or a load of a variable)."""

    items: tuple


@dataclass(frozen=True)
class Rec:
    """A @cubepy.struct value (records.py): its class, its path for messages (`cfg`,
    `cfg.inner`) and each field's value: an n.Var (a scalar parameter), a Buf or a
    nested Rec. Its fields are read-only, so device functions take it by reference."""

    cls: type
    path: str
    fields: tuple[tuple[str, Any], ...]

    def get(self, name: str) -> Any:
        """The value of field `name`, or None when the struct has no such field."""
        for key, value in self.fields:
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class FragVal:
    """A cmma fragment (cmma.Matrix), or element `index` (a u32 IR expression) of an
    array of them. Not a value: only the cmma calls take it."""

    decl: MatrixDecl
    index: Optional[Any] = None


@dataclass(frozen=True)
class FragArray:
    """An array of cmma fragments (cmma.Matrices): `frags[i]` is one."""

    decl: MatrixDecl


@dataclass(frozen=True)
class Dead:
    """A loop variable after its loop (reading it is an error)."""

    name: str


def is_number(v: Any) -> bool:
    return isinstance(v, (bool, int, float))


# The callables a kernel may call by name, by identity -> their key in the intrinsic
# registry (frontend/intrinsics.py): cubepy intrinsics and Line under their own name,
# math functions (cubepy.math and Python's math module alike) as "math.<name>", Python
# builtins as "builtins.<name>".
CALLABLE_NAMES: dict[int, str] = {id(o): name for name, o in INTRINSICS.items()}
CALLABLE_NAMES[id(Line)] = "Line"
CALLABLE_NAMES[id(Line.fill)] = "Line.fill"
CALLABLE_NAMES.update({id(o): name for name, o in CMMA_INTRINSICS.items()})
CALLABLE_NAMES.update({id(o): name for name, o in PIPELINE_INTRINSICS.items()})
CALLABLE_NAMES[id(tf32)] = "tf32"
CALLABLE_NAMES.update({id(o): f"math.{name}" for name, o in MATH_INTRINSICS.items()})
CALLABLE_NAMES.update({id(getattr(pymath, name)): f"math.{name}"
                       for name in MATH_INTRINSICS if hasattr(pymath, name)})
CALLABLE_NAMES[id(pymath.gamma)] = "math.tgamma"
CALLABLE_NAMES.update({id(getattr(builtins, name)): f"builtins.{name}"
                       for name in ("range", "len", "max", "min", "abs", "round", "int",
                                    "float", "bool", "divmod")})


def short_name(key: str) -> str:
    """The name a registry key is called by in messages ("math.exp" -> "exp")."""
    if key.startswith(("cmma.", "pipeline.")):
        return key
    return key.rpartition(".")[2]
