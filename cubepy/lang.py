"""The names a kernel uses: annotations, position builtins and intrinsics.

These objects only mark meaning for the frontend, which resolves a name in a kernel to
one of them by identity (so `import cubepy as cp; cp.ABSOLUTE_POS` works too). Calling an
intrinsic outside a @cube function raises a TypeError.
"""
from __future__ import annotations

from typing import Any

from .ir.batched_dataclass import build_pending, dataclass
from .ir.types import DType, Generic, f32


# ----------------------------------------------------------------------------- annotations

@dataclass(frozen=True)
class LineOf:
    """`Line[T]`: a vector element type whose size is chosen at launch."""

    elem: Any  # DType or Generic


@dataclass(frozen=True)
class BufferAnnotation:
    """`Tensor[T]` or `Array[T]` as written in a parameter annotation."""

    kind: str  # "tensor" or "array"
    elem: Any  # DType, Generic or LineOf


@dataclass(frozen=True)
class ComptimeAnnotation:
    """`Comptime[int]` (or bool, float, str): a value fixed at compile time."""

    pytype: type


class MatrixElement:
    """An element type that exists only inside matrix-unit fragments (`tf32`: TensorFloat
    32, stored as f32, multiplied with 10 mantissa bits). Not a DType: buffers, values and
    casts cannot have it."""

    def __init__(self, name: str, storage: DType):
        self.name = name
        self.storage = storage

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name} is only the element type of a cmma fragment "
                        f"(cmma.Matrix(cmma.A, 16, 16, 8, {self.name}, ...)), not a cast")

    def __repr__(self) -> str:
        return self.name


tf32 = MatrixElement("tf32", f32)


class _BufferFactory:
    def __init__(self, kind: str):
        self.kind = kind

    def __getitem__(self, elem) -> BufferAnnotation:
        if isinstance(elem, MatrixElement):
            raise TypeError(f"{self.kind.capitalize()}[{elem.name}]: {elem.name} is only "
                            f"the element type of a cmma fragment; its buffers hold "
                            f"{elem.storage.name}")
        if not isinstance(elem, (DType, Generic, LineOf)):
            raise TypeError(f"{self.kind.capitalize()}[...] takes a dtype, a generic "
                            f"placeholder or Line[...], not {elem!r}")
        return BufferAnnotation(self.kind, elem)

    def __repr__(self) -> str:
        return self.kind.capitalize()


class _LineFactory:
    def __getitem__(self, elem) -> LineOf:
        return LineOf(elem)


class _ComptimeFactory:
    def __getitem__(self, pytype) -> ComptimeAnnotation:
        if pytype not in (int, bool, float, str):
            raise TypeError("Comptime[...] takes int, bool, float or str")
        return ComptimeAnnotation(pytype)


Tensor = _BufferFactory("tensor")
Array = _BufferFactory("array")
Line = _LineFactory()
Comptime = _ComptimeFactory()


# ----------------------------------------------------------------------------- builtins

@dataclass(frozen=True)
class BuiltinVar:
    """A position builtin such as ABSOLUTE_POS (a u32 inside kernels)."""

    name: str  # one of ir.nodes.BUILTINS

    def __repr__(self) -> str:
        return self.name.upper()


build_pending()  # the methods of the dataclasses above, compiled in one batch
ABSOLUTE_POS = BuiltinVar("absolute_pos")
ABSOLUTE_POS_X = BuiltinVar("absolute_pos_x")
ABSOLUTE_POS_Y = BuiltinVar("absolute_pos_y")
ABSOLUTE_POS_Z = BuiltinVar("absolute_pos_z")
UNIT_POS = BuiltinVar("unit_pos")
UNIT_POS_X = BuiltinVar("unit_pos_x")
UNIT_POS_Y = BuiltinVar("unit_pos_y")
UNIT_POS_Z = BuiltinVar("unit_pos_z")
CUBE_POS = BuiltinVar("cube_pos")
CUBE_POS_X = BuiltinVar("cube_pos_x")
CUBE_POS_Y = BuiltinVar("cube_pos_y")
CUBE_POS_Z = BuiltinVar("cube_pos_z")
CUBE_DIM = BuiltinVar("cube_dim")
CUBE_DIM_X = BuiltinVar("cube_dim_x")
CUBE_DIM_Y = BuiltinVar("cube_dim_y")
CUBE_DIM_Z = BuiltinVar("cube_dim_z")
CUBE_COUNT = BuiltinVar("cube_count")
CUBE_COUNT_X = BuiltinVar("cube_count_x")
CUBE_COUNT_Y = BuiltinVar("cube_count_y")
CUBE_COUNT_Z = BuiltinVar("cube_count_z")
PLANE_DIM = BuiltinVar("plane_dim")
UNIT_POS_PLANE = BuiltinVar("unit_pos_plane")


# ----------------------------------------------------------------------------- intrinsics

class Intrinsic:
    """A function callable only inside kernels; the frontend dispatches on `name`."""

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name}() can only be called inside a @cube function")

    def __repr__(self) -> str:
        return f"<cubepy intrinsic {self.name}>"


terminate = Intrinsic("terminate", "Ends the calling unit (like `return` in a kernel).")
sync_cube = Intrinsic("sync_cube", "Waits until every unit of the cube reaches this point; "
                      "shared-memory writes before it are visible after it.")
SharedMemory = Intrinsic("SharedMemory", "SharedMemory(dtype, size): an array shared by "
                         "the units of one cube; size is a compile-time int.")
unroll = Intrinsic("unroll", "for i in unroll(range(N)): the loop is expanded at compile "
                   "time (N must be known then).")
select = Intrinsic("select", "select(cond, a, b): a where cond holds, else b (both "
                   "evaluated).")

_ATOMIC_DOC = "atomic_{0}(buffer, index, value): atomically applies {0} and returns the old value."
atomic_add = Intrinsic("atomic_add", _ATOMIC_DOC.format("add"))
atomic_sub = Intrinsic("atomic_sub", _ATOMIC_DOC.format("sub"))
atomic_min = Intrinsic("atomic_min", _ATOMIC_DOC.format("min"))
atomic_max = Intrinsic("atomic_max", _ATOMIC_DOC.format("max"))
atomic_and = Intrinsic("atomic_and", _ATOMIC_DOC.format("and"))
atomic_or = Intrinsic("atomic_or", _ATOMIC_DOC.format("or"))
atomic_xor = Intrinsic("atomic_xor", _ATOMIC_DOC.format("xor"))
atomic_exchange = Intrinsic("atomic_exchange", "atomic_exchange(buffer, index, value): "
                            "stores value and returns the old one.")
atomic_compare_exchange = Intrinsic(
    "atomic_compare_exchange", "atomic_compare_exchange(buffer, index, expected, value): "
    "stores value if the element equals expected; returns the old value.")
atomic_load = Intrinsic("atomic_load", "atomic_load(buffer, index): the element, read "
                        "atomically (relaxed; never cached in a register).")
atomic_store = Intrinsic("atomic_store", "atomic_store(buffer, index, value): stores "
                         "value atomically (relaxed); gives no value.")
atomic_inc = Intrinsic("atomic_inc", "atomic_inc(buffer, index, limit): u32 only; stores "
                       "0 if the element is >= limit, else element + 1 (CUDA's atomicInc); "
                       "returns the old value.")
atomic_dec = Intrinsic("atomic_dec", "atomic_dec(buffer, index, limit): u32 only; stores "
                       "limit if the element is 0 or > limit, else element - 1 (CUDA's "
                       "atomicDec); returns the old value.")

# name -> docstring (docs/LANGUAGE.md, "Plane operations", has the semantics)
_PLANE_DOCS = {
    "plane_sum": "plane_sum(v): the sum of v over the plane's active units, to every one.",
    "plane_prod": "plane_prod(v): the product of v over the plane's active units.",
    "plane_min": "plane_min(v): the minimum of v over the plane's active units.",
    "plane_max": "plane_max(v): the maximum of v over the plane's active units.",
    "plane_all": "plane_all(c): whether c holds on every active unit of the plane.",
    "plane_any": "plane_any(c): whether c holds on any active unit of the plane.",
    "plane_broadcast": "plane_broadcast(v, lane): v of unit `lane` (uniform), to every unit.",
    "plane_shuffle": "plane_shuffle(v, lane): v of unit `lane` (may differ per unit).",
    "plane_shuffle_xor": "plane_shuffle_xor(v, mask): v of unit `UNIT_POS_PLANE ^ mask`.",
    "plane_shuffle_up": "plane_shuffle_up(v, delta): v of unit `UNIT_POS_PLANE - delta`.",
    "plane_shuffle_down": "plane_shuffle_down(v, delta): v of unit `UNIT_POS_PLANE + delta`.",
    "plane_inclusive_sum": "plane_inclusive_sum(v): the sum of v over the lanes up to and "
                           "including this one.",
    "plane_exclusive_sum": "plane_exclusive_sum(v): the sum of v over the lanes before this "
                           "one (0 on the first).",
}
_PLANE_NAMES = tuple(_PLANE_DOCS)
plane_sum, plane_prod, plane_min, plane_max, plane_all, plane_any, plane_broadcast, \
    plane_shuffle, plane_shuffle_xor, plane_shuffle_up, plane_shuffle_down, \
    plane_inclusive_sum, plane_exclusive_sum = (
        Intrinsic(name, doc) for name, doc in _PLANE_DOCS.items())
plane_inclusive_prod = Intrinsic(
    "plane_inclusive_prod", "plane_inclusive_prod(v): the product of v over the lanes up "
    "to and including this one.")
plane_exclusive_prod = Intrinsic(
    "plane_exclusive_prod", "plane_exclusive_prod(v): the product of v over the lanes "
    "before this one (1 on the first).")
plane_ballot = Intrinsic(
    "plane_ballot", "plane_ballot(c): a Line of 4 u32 words, the mask of the active lanes "
    "where c holds (lane i is bit i % 32 of word i // 32).")
plane_elect = Intrinsic("plane_elect", "plane_elect(): true on exactly one active unit of "
                        "the plane, the lowest lane.")
sync_plane = Intrinsic("sync_plane", "Waits until every unit of the plane reaches this "
                       "point; shared-memory writes before it are visible after it.")
fence_cube = Intrinsic("fence_cube", "Memory fence: this unit's memory writes before it "
                       "are seen by the units of its cube before its writes after it.")
fence_device = Intrinsic("fence_device", "Memory fence: this unit's memory writes before "
                         "it are seen by every unit of the launch before its writes after it.")

LocalArray = Intrinsic("LocalArray", "LocalArray(dtype, size): an array of each unit "
                       "(registers or private memory), zero-filled at kernel start; size "
                       "is a compile-time int. LocalArray(Line[T], size, line_size) holds "
                       "lines.")
DynamicSharedMemory = Intrinsic(
    "DynamicSharedMemory", "DynamicSharedMemory(dtype): shared memory sized at launch by "
    "kernel.launch(..., shared_mem=<bytes>); len() is shared_mem // sizeof(dtype). "
    "DynamicSharedMemory(Line[T], line_size) holds lines.")
# Integer and bit functions (docs/LANGUAGE.md, "Integer and bit operations"); the
# CubeCL and Numba names are the same objects under a second name.
popcount = Intrinsic("popcount", "popcount(x): the number of 1 bits of an integer (u32).")
clz = Intrinsic("clz", "clz(x): the number of leading 0 bits of an integer (u32; the "
                "width for 0).")
ctz = Intrinsic("ctz", "ctz(x): the number of trailing 0 bits of an integer (u32; the "
                "width for 0).")
ffs = Intrinsic("ffs", "ffs(x): the 1-based position of the lowest 1 bit (u32; 0 for 0), "
                "as CUDA's __ffs.")
reverse_bits = Intrinsic("reverse_bits", "reverse_bits(x): x with its bits in reverse "
                         "order (same type).")
mul_hi = Intrinsic("mul_hi", "mul_hi(a, b): the high half of the full product a * b "
                   "(signed for signed types).")
saturating_add = Intrinsic("saturating_add", "saturating_add(a, b): a + b clamped to the "
                           "type's range.")
saturating_sub = Intrinsic("saturating_sub", "saturating_sub(a, b): a - b clamped to the "
                           "type's range.")
bitcast = Intrinsic("bitcast", "bitcast(T, x): the bits of x read as type T, which has "
                    "x's size (f32 <-> i32/u32, f64 <-> i64/u64, ...).")
count_ones = popc = popcount  # CubeCL, Numba
leading_zeros = clz  # CubeCL
trailing_zeros = ctz  # CubeCL
find_first_set = ffs  # CubeCL
brev = reverse_bits  # Numba (CUDA's __brev)
mulhi = mul_hi  # CUDA's __mulhi, Metal's mulhi

INTRINSICS: dict[str, Intrinsic] = {
    obj.name: obj for obj in list(globals().values()) if isinstance(obj, Intrinsic)}

# `Line.fill(value, size)` (CubeCL's `Line::empty(size).fill(value)`): an attribute of
# `Line`, not a top-level name, so it stays out of INTRINSICS (frontend/values.py
# registers it).
_LineFactory.fill = Intrinsic(  # type: ignore[attr-defined]
    "Line.fill", "Line.fill(value, size): a line of `size` copies of value (size known at "
                 "compile time, e.g. x.line_size(); 1 gives value itself).")
