"""Immutable, interned types of the cubepy IR.

`DType` is an element type (f32, u32, bool...). `Generic` is a placeholder such as
`Float`, bound to a concrete DType per specialisation. `LineType` is a vector of a DType
(reserved for vectorisation). Types compare by identity: every DType exists once.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from .batched_dataclass import build_pending, dataclass

FLOAT, INT, UINT, BOOL = "float", "int", "uint", "bool"


@dataclass(frozen=True, eq=False)
class DType:
    """A scalar element type. Use the module constants (f32, u32, ...); never build one."""

    name: str
    kind: str  # FLOAT, INT, UINT or BOOL
    bits: int

    _registry: ClassVar[dict[str, "DType"]] = {}

    @property
    def is_float(self) -> bool:
        return self.kind == FLOAT

    @property
    def is_int(self) -> bool:
        """True for signed and unsigned integers (not bool)."""
        return self.kind in (INT, UINT)

    @property
    def is_signed(self) -> bool:
        return self.kind in (INT, FLOAT)

    @property
    def is_bool(self) -> bool:
        return self.kind == BOOL

    @property
    def itemsize(self) -> int:
        return max(self.bits // 8, 1)

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype holding this type on the host (bf16, e4m3 and e5m2 have none:
        raises; the host sees their values as f32)."""
        np_name = _numpy_names().get(self.name)
        if np_name is None:
            raise TypeError(f"numpy has no {self.name} dtype")
        return np.dtype(np_name)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name}(...) is a cast usable only inside a @cube function")

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):  # keep identity through pickling (disk caches)
        return (dtype_from_name, (self.name,))


def _make(name: str, kind: str, bits: int) -> DType:
    t = DType(name, kind, bits)
    DType._registry[name] = t
    return t


f16 = _make("f16", FLOAT, 16)
bf16 = _make("bf16", FLOAT, 16)
f32 = _make("f32", FLOAT, 32)
f64 = _make("f64", FLOAT, 64)
i32 = _make("i32", INT, 32)
i64 = _make("i64", INT, 64)
u32 = _make("u32", UINT, 32)
u64 = _make("u64", UINT, 64)
bool_ = _make("bool", BOOL, 8)
# 8-bit floats (OCP FP8, PyTorch's float8_e4m3fn and float8_e5m2): storage types only.
# A kernel loads, stores, selects and converts them; arithmetic needs a cast to a wider
# float first (docs/LANGUAGE.md, "8-bit floats").
e4m3 = _make("e4m3", FLOAT, 8)
e5m2 = _make("e5m2", FLOAT, 8)

ALL_DTYPES: tuple[DType, ...] = (f16, bf16, f32, f64, i32, i64, u32, u64, bool_, e4m3, e5m2)
FP8_DTYPES: frozenset[DType] = frozenset({e4m3, e5m2})
# the types numpy lacks: the host holds their values as f32 (uploads round them)
F32_ON_HOST: frozenset[DType] = frozenset({bf16, e4m3, e5m2})


def _numpy_names() -> dict[str, str]:
    """DType name -> numpy type name, from ir/dtype_facts.py (which imports this module,
    hence the import here)."""
    from .dtype_facts import NUMPY_NAMES
    return NUMPY_NAMES


def dtype_from_name(name: str) -> DType:
    """The DType called `name` ("f32", "u32", "bool", ...); KeyError if there is none."""
    if name == "bool_":
        name = "bool"
    return DType._registry[name]


def dtype_from_numpy(dt) -> DType:
    """The DType matching a numpy dtype; TypeError when cubepy has none."""
    dt = np.dtype(dt)
    for name, np_name in _numpy_names().items():
        if dt == np.dtype(np_name):
            return DType._registry[name]
    raise TypeError(f"numpy dtype {dt} has no cubepy equivalent")


@dataclass(frozen=True)
class Generic:
    """A generic placeholder (`Float`, `Int`, ...) bound to one DType per specialisation.

    `bound` lists the DTypes it may take. Inside a kernel `Float(x)` casts to the bound
    type; outside a kernel it is only a marker used in annotations.
    """

    name: str
    bound: tuple[DType, ...]

    def accepts(self, dtype: DType) -> bool:
        return dtype in self.bound

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name}(...) is a cast usable only inside a @cube function")

    def __repr__(self) -> str:
        return self.name


Float = Generic("Float", (f16, bf16, f32, f64))
Int = Generic("Int", (i32, i64))
UInt = Generic("UInt", (u32, u64))
Numeric = Generic("Numeric", (f16, bf16, f32, f64, i32, i64, u32, u64))


def generic(name: str, bound: "tuple[DType, ...] | Generic | list[DType]") -> Generic:
    """A new generic placeholder called `name` whose values are limited to `bound`."""
    if isinstance(bound, Generic):
        bound = bound.bound
    return Generic(name, tuple(bound))


@dataclass(frozen=True, eq=False)
class LineType:
    """A vector of `size` elements of `elem` (vectorised access; the line size is fixed
    at launch). Interned like DType: `LineType(f32, 4) is LineType(f32, 4)`.

    Only the frontend's IR holds line types: the `scalarize_lines` pass rewrites every
    line value into `size` scalars before any code generator sees it. The kind queries
    (is_float, ...) answer for the element type, so element rules apply to lines.
    """

    elem: DType
    size: int

    _registry: ClassVar[dict[tuple[str, int], "LineType"]] = {}

    def __new__(cls, elem: DType, size: int):
        key = (elem.name, int(size))
        t = cls._registry.get(key)
        if t is None:
            t = object.__new__(cls)
            cls._registry[key] = t
        return t

    @property
    def name(self) -> str:
        """The IR text name: `f32x4` is a line of 4 f32 (one identifier, like a dtype)."""
        return f"{self.elem.name}x{self.size}"

    @property
    def kind(self) -> str:
        return self.elem.kind

    @property
    def bits(self) -> int:
        return self.elem.bits

    @property
    def is_float(self) -> bool:
        return self.elem.is_float

    @property
    def is_int(self) -> bool:
        return self.elem.is_int

    @property
    def is_signed(self) -> bool:
        return self.elem.is_signed

    @property
    def is_bool(self) -> bool:
        return self.elem.is_bool

    def __repr__(self) -> str:
        return f"Line[{self.elem.name}]x{self.size}"

    def __reduce__(self):
        return (LineType, (self.elem, self.size))


def elem_of(t) -> DType:
    """The element type of a DType (itself) or of a LineType."""
    return t.elem if isinstance(t, LineType) else t


def type_from_name(name: str) -> "DType | LineType":
    """A DType by name, or a LineType written `f32x4`; KeyError if there is none."""
    try:
        return dtype_from_name(name)
    except KeyError:
        head, sep, size = name.rpartition("x")
        if sep and size.isdigit() and int(size) > 1 and head in DType._registry:
            return LineType(DType._registry[head], int(size))
        raise


Type = DType  # the type of every value after scalarize_lines (LineType only before it)


build_pending()  # the methods of the dataclasses above not yet built by a first instance
