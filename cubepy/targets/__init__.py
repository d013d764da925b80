"""The target registry: one `Target` record per code-generation target, holding
everything the compiler needs to know about it (element types, atomics, plane
operations, line sizes, shared memory, launch ABI, reserved names, op spellings, its
emitter and the runtimes that run its code).

The frontend, passes, ABI, code generators, runtimes, CLI and `cubepy info` read this
registry; none keeps its own list of targets or capabilities. Emitters are named by
dotted path and imported on first use, so importing the registry imports no code
generator and no runtime.

A new target is one `register(Target(...))` (see docs/ARCHITECTURE.md, "Adding a
C-like target"); tests register toy targets inside `with registered(target):`.
"""
from __future__ import annotations

import importlib
from contextlib import contextmanager
from dataclasses import field
from types import MappingProxyType
from typing import Callable, Iterator, Mapping, Union

from ..ir.batched_dataclass import build_pending, dataclass  # (frozen classes, cheap to create)
from ..errors import OptionError
from ..ir.ops import LOWERED, OPS, AtomicOp, OpInfo, PlaneOp, Spelling, SyncOp
from ..ir.types import ALL_DTYPES, FP8_DTYPES, DType, dtype_from_name

Emitter = Union[str, Callable]


@dataclass(frozen=True)
class Target:
    """What one code-generation target supports, and how it is spelled and emitted."""

    name: str  # "cuda", "wgsl", "metal", "cpu"
    title: str  # for messages: "CUDA", "WGSL", "Metal", "the cpu runtime"
    family: str  # spelling family of types and ops: "c", "msl", "wgsl", "numpy"
    short: str  # a two-letter tag (explore's line links)
    lexer: str  # pygments lexer of its source (explore)
    shows_source: bool  # Kernel.source(), `cubepy emit` and explore offer its source
    dtypes: frozenset[str]  # element types it has (DType names)
    replacements: Mapping[str, str]  # a missing type -> the advice in the error message
    atomic_dtypes: Mapping[str, frozenset[str]]  # atomic op -> element types
    plane_ops: frozenset[str]
    plane_dtypes: frozenset[str]  # (all/any take bool; shuffles also move bools)
    line_sizes: tuple[int, ...]
    bool_storage_bytes: int  # bytes of one bool element in a buffer
    default_shared_bytes: int  # shared memory per cube when the device does not say
    needs_cube_count: bool  # the launch ABI passes the cube count (WGSL has no builtin)
    reserved: frozenset[str]  # identifiers a user name may not keep in its source
    emitter: Emitter  # "module:function" (imported on first use) or a callable:
    # fn(kernel, abi, checked) -> source (or a codegen Compiled record)
    runtimes: tuple[str, ...]  # runtimes that run its code
    op_overrides: Mapping[str, Spelling] = field(default_factory=dict)  # "kind.op" -> spelling
    unroll_pragma: str = ""  # written before a loop marked unroll ("#pragma unroll")
    # barriers and fences (SyncOp values) that must be reached in uniform control flow
    uniform_syncs: frozenset[str] = frozenset({"sync_cube"})
    op_advice: Mapping[str, str] = field(default_factory=dict)  # missing op -> why, what instead
    # matrix units (cmma): (A/B element, accumulator element) -> the (m, n, k) shapes of
    # its matrix multiply ("tf32" A/B load from f32 buffers); empty: none. Why a target
    # has none is its op_advice["cmma"].
    matrix_shapes: Mapping[tuple[str, str], frozenset[tuple[int, int, int]]] = field(
        default_factory=dict)
    # the warpgroup matrix multiply (cmma.WarpgroupAccumulator, cmma.wg_mma: CUDA's
    # wgmma, sm_90 only, which the cuda runtime checks at compile time)
    warpgroup_mma: bool = False

    def matrix_elems(self, ident: str, m: int, n: int, k: int) -> frozenset[str]:
        """The element types a fragment `ident` ("a", "b" or "accumulator") of shape
        m x n x k may have on this target."""
        side = 1 if ident == "accumulator" else 0
        return frozenset(pair[side] for pair, shapes in self.matrix_shapes.items()
                         if (m, n, k) in shapes)
    # whole-line accesses (LoadLine/StoreLine) reach its emitter, which makes them vector
    # loads and stores; without, the lower_line_access pass splits them into elements
    vector_lines: bool = False
    # asynchronous global-to-shared copies (pipeline.memcpy_async) reach its emitter;
    # without, the lower_async_copies pass makes them plain copies
    async_copies: bool = False

    def spelling(self, op) -> Spelling | None:
        """How this target spells `op` (an ir.ops enum member): its override, else its
        family's default; None when neither exists."""
        row: OpInfo = OPS[op]
        key = f"{row.kind}.{op.value}"
        if key in self.op_overrides:
            return self.op_overrides[key]
        return row.spell.get(self.family)

    def supports_op(self, op) -> bool:
        """Whether kernels using `op` can be generated for this target."""
        if isinstance(op, AtomicOp):
            return bool(self.atomic_dtypes.get(op.value))
        if isinstance(op, PlaneOp):
            return op.value in self.plane_ops
        if op is SyncOp.SYNC_PLANE and not self.plane_ops:
            return False  # no planes: nothing to synchronise within one
        return self.spelling(op) is not None

    def supports_dtype(self, name: str) -> bool:
        return name in self.dtypes

    def dtype_set(self) -> frozenset[DType]:
        """The element types it has, as DTypes (a runtime's `DeviceLimits.dtypes` is
        this, less what the device lacks)."""
        return frozenset(dtype_from_name(n) for n in self.dtypes)

    def atomic_dtype_set(self) -> frozenset[DType]:
        """Every element type some atomic op supports (`DeviceLimits.atomic_dtypes`)."""
        return frozenset(dtype_from_name(n) for names in self.atomic_dtypes.values()
                         for n in names)

    def emit_function(self) -> Callable:
        """The emitter as a callable (importing its module on first use)."""
        if callable(self.emitter):
            return self.emitter
        module, _, fn = self.emitter.partition(":")
        return getattr(importlib.import_module(module), fn)

    def __hash__(self) -> int:
        return hash(self.name)


_REGISTRY: dict[str, Target] = {}


def register(target: Target, *, replace: bool = False) -> Target:
    """Adds `target` to the registry (ValueError if its name is taken, unless
    `replace`)."""
    if target.name in _REGISTRY and not replace:
        raise ValueError(f"target {target.name!r} is already registered")
    _REGISTRY[target.name] = target
    return target


def unregister(name: str) -> None:
    """Removes the target called `name` (KeyError if there is none)."""
    del _REGISTRY[name]


@contextmanager
def registered(target: Target) -> Iterator[Target]:
    """Registers `target` for the duration of the block (tests' toy targets)."""
    previous = _REGISTRY.get(target.name)
    register(target, replace=True)
    try:
        yield target
    finally:
        if previous is None:
            _REGISTRY.pop(target.name, None)
        else:
            _REGISTRY[target.name] = previous


def get_target(name: str) -> Target:
    """The target called `name`; an OptionError listing the registered ones otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise OptionError(f"unknown target {name!r}: expected one of "
                          f"{', '.join(_REGISTRY)}") from None


def all_targets() -> tuple[Target, ...]:
    """Every registered target, in registration order (cuda, wgsl, metal, cpu first)."""
    return tuple(_REGISTRY.values())


def target_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def source_targets() -> tuple[str, ...]:
    """The targets whose generated source the user can see (`shows_source`)."""
    return tuple(t.name for t in _REGISTRY.values() if t.shows_source)


def targets_for_runtime(runtime: str) -> tuple[Target, ...]:
    """The targets whose code `runtime` runs."""
    return tuple(t for t in _REGISTRY.values() if runtime in t.runtimes)


# -- shared values of the built-in records ---------------------------------------------

ALL_TYPE_NAMES = frozenset(t.name for t in ALL_DTYPES)
INTS32 = frozenset({"i32", "u32"})
# Atomic ops an f32 element supports on every built-in target (native or a CAS loop).
ATOMIC_FLOAT_OPS = ("add", "sub", "exchange", "min", "max", "load", "store")
# atomic_inc/atomic_dec wrap at a limit (CUDA's atomicInc/atomicDec): u32 only.
_WRAPPING_OPS = ("inc", "dec")
STANDARD_ATOMICS: Mapping[str, frozenset[str]] = MappingProxyType({
    op.value: (frozenset({"u32"}) if op.value in _WRAPPING_OPS else
               INTS32 | ({"f32"} if op.value in ATOMIC_FLOAT_OPS else set()))
    for op in AtomicOp})
# What CUDA adds: 64-bit integers (every op but inc/dec), f64 (add/sub native, sm_60+;
# min/max as 64-bit CAS loops; exchange, load, store), f16/bf16 add/sub (atomicAdd on
# __half sm_70+, __nv_bfloat16 sm_80+). The cpu runtime has the same, bf16 aside.
_WIDE_ATOMICS = {"add": {"i64", "u64", "f64", "f16", "bf16"},
                 "sub": {"i64", "u64", "f64", "f16", "bf16"},
                 "min": {"i64", "u64", "f64"}, "max": {"i64", "u64", "f64"},
                 "and": {"i64", "u64"}, "or": {"i64", "u64"}, "xor": {"i64", "u64"},
                 "exchange": {"i64", "u64", "f64"},
                 "compare_exchange": {"i64", "u64"},
                 "load": {"i64", "u64", "f64"}, "store": {"i64", "u64", "f64"}}
WIDE_ATOMICS: Mapping[str, frozenset[str]] = MappingProxyType({
    op: types | _WIDE_ATOMICS.get(op, set()) for op, types in STANDARD_ATOMICS.items()})
ALL_PLANE_OPS = frozenset(op.value for op in PlaneOp)
STANDARD_PLANE_DTYPES = frozenset({"i32", "u32", "f32", "f16", "bool"})
WIDE_PLANE_DTYPES = frozenset({"f64", "i64", "u64"})  # where the target has them
STANDARD_LINE_SIZES = (1, 2, 4, 8)  # (a line of 8-bit floats may also hold 16: 16 bytes)
DEFAULT_SHARED_BYTES = 48 * 1024
# CUDA's wmma shapes (nvcuda::wmma, sm_70+; bf16 and tf32 sm_80+): f16 and bf16 A/B take
# three shapes, tf32 one. fp8 has no wmma form (it needs mma.sync PTX).
_WMMA_SHAPES = frozenset({(16, 16, 16), (32, 8, 16), (8, 32, 16)})
WMMA_SHAPES: Mapping[tuple[str, str], frozenset[tuple[int, int, int]]] = MappingProxyType({
    ("f16", "f32"): _WMMA_SHAPES, ("f16", "f16"): _WMMA_SHAPES,
    ("bf16", "f32"): _WMMA_SHAPES, ("tf32", "f32"): frozenset({(16, 16, 8)})})
# wmma's memory rules (load/store_matrix_sync): a tile pointer 32-byte aligned, a row
# pitch (ldm) a multiple of 16 bytes. A checked launch stages tiles instead, one staging
# tile per plane of CUDA_PLANE units (a warp).
WMMA_TILE_ALIGN = 32
WMMA_STRIDE_ALIGN = 16
CUDA_PLANE = 32


def cmma_staging_bytes(units_per_cube: int, tile_bytes: int) -> int:
    """Shared memory a checked CUDA launch adds for cmma: a tile of `tile_bytes` for
    each plane of the cube."""
    return -(-units_per_cube // CUDA_PLANE) * tile_bytes


# Metal's simdgroup_matrix: 8x8 tiles of half or float, one type throughout.
SIMDGROUP_SHAPES: Mapping[tuple[str, str], frozenset[tuple[int, int, int]]] = \
    MappingProxyType({("f16", "f16"): frozenset({(8, 8, 8)}),
                      ("f32", "f32"): frozenset({(8, 8, 8)})})


@dataclass(frozen=True)
class Portable:
    """What the target-independent frontend allows: the capabilities every built-in
    target shares. Frozen at import, so registering a toy target cannot change what
    the frontend accepts."""

    atomic_dtypes: Mapping[str, frozenset[str]]
    plane_ops: frozenset[str]
    plane_dtypes: frozenset[str]
    line_sizes: tuple[int, ...]
    # atomic op -> element types some built-in target has (the frontend accepts these;
    # the legalize pass names the target that lacks one)
    atomic_dtypes_anywhere: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: MappingProxyType({}))
    # element types some built-in target's plane operations take (the frontend accepts
    # these; a target lacking one says so in its legalisation)
    plane_dtypes_any: frozenset[str] = frozenset()
    # cmma: (A/B element, accumulator element) -> shapes some built-in target has
    matrix_shapes_anywhere: Mapping[tuple[str, str], frozenset[tuple[int, int, int]]] = \
        field(default_factory=lambda: MappingProxyType({}))


def _portable(targets: tuple[Target, ...]) -> Portable:
    atomics = {op.value: frozenset.intersection(*(t.atomic_dtypes.get(op.value, frozenset())
                                                 for t in targets)) for op in AtomicOp}
    anywhere = {op.value: frozenset().union(*(t.atomic_dtypes.get(op.value, frozenset())
                                              for t in targets)) for op in AtomicOp}
    sizes = set.intersection(*(set(t.line_sizes) for t in targets))
    return Portable(MappingProxyType(atomics),
                    frozenset.intersection(*(t.plane_ops for t in targets)),
                    frozenset.intersection(*(t.plane_dtypes for t in targets)),
                    tuple(sorted(sizes)), MappingProxyType(anywhere),
                    frozenset.union(*(t.plane_dtypes for t in targets)),
                    MappingProxyType(_union_shapes(targets)))


def _union_shapes(targets: tuple[Target, ...]) -> dict:
    out: dict[tuple[str, str], frozenset] = {}
    for t in targets:
        for pair, shapes in t.matrix_shapes.items():
            out[pair] = out.get(pair, frozenset()) | shapes
    return out


from . import cuda, wgsl, metal, cpu  # noqa: E402,F401  (registers the built-in targets)

PORTABLE: Portable = _portable(all_targets())


def line_sizes_for(elem, portable: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The line sizes a line of `elem` (a DType, or a placeholder: the portable sizes)
    may have: `portable` (default PORTABLE.line_sizes), and 16 for the 8-bit floats."""
    sizes = PORTABLE.line_sizes if portable is None else portable
    return sizes + (16,) if elem in FP8_DTYPES and 16 not in sizes else sizes


__all__ = ["Target", "register", "unregister", "registered", "get_target", "all_targets",
           "target_names", "source_targets", "targets_for_runtime", "PORTABLE", "Portable",
           "LOWERED", "line_sizes_for"]


build_pending()  # (the frozen classes above)
