"""The IR's operators as enums, with one table row per op: arity, result typing, how it
folds, and its default spelling in each source-language family.

The enums are `str`-valued, so an op compares equal to its IR name
(`BinaryOp.ADD == "add"`): IR nodes, the IR text format and code that writes
`op="add"` keep working. A target spells an op through `Target.spelling(op)`: its own
override if it has one, else the family default below.

Spellings: a string is the operator or function name in that family (`"+"`, `"expf"`,
`"np.exp"`); a `Helper` names a helper function the generator adds when used;
`LOWERED` means the family's emitter writes the op as code of its own (a helper
function, a compare-and-swap loop, NaN-aware min/max) rather than by a name;
a missing family means the family lacks the op (the coverage test and
`Target.supports_op` see it). Adding a math function: one `_math(...)` row below (plus a
helper body in the numpy or WGSL helpers only where no builtin exists).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from enum import Enum
from typing import Callable, Iterator, Union

from .batched_dataclass import dataclass  # (frozen classes, cheap to create)
from .types import DType, bool_, u32

LOWERED = "<lowered>"  # written as code by the family's emitter (see the module docstring)


class Helper(str):
    """A spelling that names a helper function the family's generator adds to the
    source when used (WGSL's prelude: `pow`, `erf`, `hypot`); its body lives with that
    generator's other helpers (codegen/wgsl_prelude.py)."""

    __slots__ = ()
FAMILIES = ("c", "msl", "wgsl", "numpy")


class BinaryOp(str, Enum):
    ADD = "add"; SUB = "sub"; MUL = "mul"; DIV = "div"; FLOORDIV = "floordiv"  # noqa: E702
    MOD = "mod"; POW = "pow"; BITAND = "bitand"; BITOR = "bitor"  # noqa: E702
    BITXOR = "bitxor"; SHL = "shl"; SHR = "shr"; MAX = "max"; MIN = "min"  # noqa: E702

    __str__ = str.__str__


class CompareOp(str, Enum):
    EQ = "eq"; NE = "ne"; LT = "lt"; LE = "le"; GT = "gt"; GE = "ge"  # noqa: E702

    __str__ = str.__str__


class UnaryOp(str, Enum):
    NEG = "neg"; BITNOT = "bitnot"; NOT = "not"; ABS = "abs"  # noqa: E702

    __str__ = str.__str__


class LogicalOp(str, Enum):
    AND = "and"; OR = "or"  # noqa: E702  (short-circuit)

    __str__ = str.__str__


class MathFn(str, Enum):
    EXP = "exp"; EXP2 = "exp2"; LOG = "log"; LOG2 = "log2"; SQRT = "sqrt"  # noqa: E702
    RSQRT = "rsqrt"; SIN = "sin"; COS = "cos"; TAN = "tan"; TANH = "tanh"  # noqa: E702
    ASIN = "asin"; ACOS = "acos"; ATAN = "atan"; ATAN2 = "atan2"; SINH = "sinh"  # noqa: E702
    COSH = "cosh"; POW = "pow"; HYPOT = "hypot"; FLOOR = "floor"; CEIL = "ceil"  # noqa: E702
    ROUND = "round"; TRUNC = "trunc"; ERF = "erf"; FMA = "fma"; CLAMP = "clamp"  # noqa: E702
    ISNAN = "isnan"; ISINF = "isinf"  # noqa: E702
    ASINH = "asinh"; ACOSH = "acosh"; ATANH = "atanh"; EXPM1 = "expm1"  # noqa: E702
    LOG1P = "log1p"; LOG10 = "log10"; CBRT = "cbrt"; COPYSIGN = "copysign"  # noqa: E702
    FMOD = "fmod"; REMAINDER = "remainder"; FABS = "fabs"; ERFC = "erfc"  # noqa: E702
    LGAMMA = "lgamma"; TGAMMA = "tgamma"; DEGREES = "degrees"  # noqa: E702
    RADIANS = "radians"; ISFINITE = "isfinite"; NEXTAFTER = "nextafter"  # noqa: E702
    LDEXP = "ldexp"; FREXP_EXP = "frexp_exp"  # noqa: E702

    __str__ = str.__str__


# Math ops with a bool result, and the one with an i32 result (frexp's exponent).
BOOL_MATH = frozenset({"isnan", "isinf", "isfinite"})
INT_MATH = frozenset({"frexp_exp"})
# IR-only math ops: frontends build them (math.frexp), kernels do not call them by name.
INTERNAL_MATH = frozenset({"frexp_exp"})


class AtomicOp(str, Enum):
    ADD = "add"; SUB = "sub"; MIN = "min"; MAX = "max"; AND = "and"; OR = "or"  # noqa: E702
    XOR = "xor"; EXCHANGE = "exchange"; COMPARE_EXCHANGE = "compare_exchange"  # noqa: E702
    # relaxed load/store; inc/dec wrap at a limit as CUDA's atomicInc/atomicDec do
    LOAD = "load"; STORE = "store"; INC = "inc"; DEC = "dec"  # noqa: E702

    __str__ = str.__str__


class PlaneOp(str, Enum):
    SUM = "sum"; PROD = "prod"; MIN = "min"; MAX = "max"; ALL = "all"; ANY = "any"  # noqa: E702
    INCLUSIVE_SUM = "inclusive_sum"; EXCLUSIVE_SUM = "exclusive_sum"  # noqa: E702
    BROADCAST = "broadcast"; SHUFFLE = "shuffle"; SHUFFLE_XOR = "shuffle_xor"  # noqa: E702
    SHUFFLE_UP = "shuffle_up"; SHUFFLE_DOWN = "shuffle_down"  # noqa: E702
    INCLUSIVE_PROD = "inclusive_prod"; EXCLUSIVE_PROD = "exclusive_prod"  # noqa: E702
    BALLOT = "ballot"; ELECT = "elect"  # noqa: E702

    __str__ = str.__str__


class BitOp(str, Enum):
    """Integer and bit functions (`cubepy.popcount`, ...): the IR's `Bits` node."""

    POPCOUNT = "popcount"; CLZ = "clz"; CTZ = "ctz"; FFS = "ffs"  # noqa: E702
    REVERSE_BITS = "reverse_bits"; MUL_HI = "mul_hi"  # noqa: E702
    SATURATING_ADD = "saturating_add"; SATURATING_SUB = "saturating_sub"  # noqa: E702
    BITCAST = "bitcast"


class SyncOp(str, Enum):
    """Barriers and memory fences (the `op` of an IR Barrier statement)."""

    SYNC_CUBE = "sync_cube"; SYNC_PLANE = "sync_plane"  # noqa: E702
    FENCE_CUBE = "fence_cube"; FENCE_DEVICE = "fence_device"  # noqa: E702

    __str__ = str.__str__


OpEnum = Union[BinaryOp, CompareOp, UnaryOp, LogicalOp, MathFn, AtomicOp, PlaneOp, BitOp,
               SyncOp]
KINDS: dict[str, type[Enum]] = {"binary": BinaryOp, "compare": CompareOp, "unary": UnaryOp,
                                "logical": LogicalOp, "math": MathFn, "atomic": AtomicOp,
                                "plane": PlaneOp, "bits": BitOp, "sync": SyncOp}
Spelling = Union[str, Callable]


@dataclass(frozen=True)
class OpInfo:
    """One op's row: what it takes, what it gives, how it folds, how it is spelled."""

    op: OpEnum
    arity: int
    typing: Callable[[list[DType]], DType]  # operand types -> result type
    fold: Callable | None  # (op, result type, *constant values) -> value or NOFOLD
    spell: Mapping[str, Spelling] = field(default_factory=dict)  # family -> spelling
    takes_lane: bool = False  # plane ops with a lane, mask or delta argument

    @property
    def kind(self) -> str:
        return next(k for k, cls in KINDS.items() if isinstance(self.op, cls))


def _first(types: list[DType]) -> DType:
    return types[0]


def _boolean(types: list[DType]) -> DType:
    return bool_


def _first_float(types: list[DType]) -> DType:
    return next((t for t in types if t.is_float), types[0])


def _int32(types: list[DType]) -> DType:
    from .types import i32
    return i32


def _fold_binary(op, ty, a, b):
    from .passes import consteval  # lazy: the passes import this module
    return consteval.binary(str(op.value), ty, a, b)


def _fold_unary(op, ty, a):
    from .passes import consteval
    return consteval.unary(str(op.value), ty, a)


def _fold_compare(op, ty, a, b):
    from .passes import consteval
    return consteval.compare(str(op.value), a, b, ty)


class _OpTable(Mapping):
    """OPS: a mapping from every op enum member to its OpInfo. Members of different
    enums that share a value ("max" is a binary, an atomic and a plane op) are kept
    apart, which a plain dict keyed by str-valued enums could not do."""

    def __init__(self, rows: list[OpInfo]):
        self._rows = {(type(r.op), r.op.value): r for r in rows}

    def __getitem__(self, op) -> OpInfo:
        return self._rows[(type(op), op.value)]

    def __iter__(self) -> Iterator[OpEnum]:
        return (r.op for r in self._rows.values())

    def __len__(self) -> int:
        return len(self._rows)


def _binary() -> list[OpInfo]:
    c = {"add": "+", "sub": "-", "mul": "*", "div": "/", "bitand": "&", "bitor": "|",
         "bitxor": "^", "shl": "<<", "shr": ">>"}
    wgsl = {"add": "+", "sub": "-", "mul": "*", "div": "/", "bitand": "&", "bitor": "|",
            "bitxor": "^"}
    numpy = {"add": "+", "sub": "-", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^"}
    rows = []
    for op in BinaryOp:
        v = op.value
        rows.append(OpInfo(op, 2, _first, _fold_binary, {
            "c": c.get(v, LOWERED), "msl": c.get(v, LOWERED),
            "wgsl": wgsl.get(v, LOWERED), "numpy": numpy.get(v, LOWERED)}))
    return rows


def _compare() -> list[OpInfo]:
    sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
    return [OpInfo(op, 2, _boolean, _fold_compare, {f: sym[op.value] for f in FAMILIES})
            for op in CompareOp]


def _unary() -> list[OpInfo]:
    c = {"neg": "-", "bitnot": "~", "not": "!", "abs": LOWERED}
    numpy = {"neg": "-", "bitnot": "~", "not": LOWERED, "abs": LOWERED}
    return [OpInfo(op, 1, _boolean if op is UnaryOp.NOT else _first, _fold_unary,
                   {"c": c[op.value], "msl": c[op.value], "wgsl": c[op.value],
                    "numpy": numpy[op.value]}) for op in UnaryOp]


def _logical() -> list[OpInfo]:
    sym = {"and": "&&", "or": "||"}
    return [OpInfo(op, 2, _boolean, None, {"c": sym[op.value], "msl": sym[op.value],
                                           "wgsl": sym[op.value], "numpy": LOWERED})
            for op in LogicalOp]


def _math(op: MathFn, arity: int, c: str, msl: str, wgsl: str, numpy: str) -> OpInfo:
    """One math function: its C (single-precision name; double drops the `f`), MSL,
    WGSL and numpy spellings."""
    typing = (_boolean if op.value in BOOL_MATH else _int32 if op.value in INT_MATH
              else _first_float)
    return OpInfo(op, arity, typing, None, {"c": c, "msl": msl, "wgsl": wgsl, "numpy": numpy})


_M = MathFn
_MATH_ROWS = [
    _math(_M.EXP, 1, "expf", "exp", "exp", "np.exp"),
    _math(_M.EXP2, 1, "exp2f", "exp2", "exp2", "np.exp2"),
    _math(_M.LOG, 1, "logf", "log", "log", "np.log"),
    _math(_M.LOG2, 1, "log2f", "log2", "log2", "np.log2"),
    _math(_M.SQRT, 1, "sqrtf", "sqrt", "sqrt", "np.sqrt"),
    _math(_M.RSQRT, 1, "rsqrtf", "rsqrt", "inverseSqrt", "_ops.rsqrt"),
    _math(_M.SIN, 1, "sinf", "sin", "sin", "np.sin"),
    _math(_M.COS, 1, "cosf", "cos", "cos", "np.cos"),
    _math(_M.TAN, 1, "tanf", "tan", "tan", "np.tan"),
    _math(_M.TANH, 1, "tanhf", "tanh", "tanh", "np.tanh"),
    _math(_M.ASIN, 1, "asinf", "asin", "asin", "np.arcsin"),
    _math(_M.ACOS, 1, "acosf", "acos", "acos", "np.arccos"),
    _math(_M.ATAN, 1, "atanf", "atan", "atan", "np.arctan"),
    # WGSL: a helper brings the operands into the range its division is accurate in
    _math(_M.ATAN2, 2, "atan2f", "atan2", Helper("atan2"), "np.arctan2"),
    _math(_M.SINH, 1, "sinhf", "sinh", "sinh", "np.sinh"),
    _math(_M.COSH, 1, "coshf", "cosh", "cosh", "np.cosh"),
    _math(_M.POW, 2, "powf", "pow", Helper("pow"), "np.power"),
    _math(_M.HYPOT, 2, "hypotf", LOWERED, Helper("hypot"), "np.hypot"),
    _math(_M.FLOOR, 1, "floorf", "floor", "floor", "np.floor"),
    _math(_M.CEIL, 1, "ceilf", "ceil", "ceil", "np.ceil"),
    # half to even everywhere (C's roundf rounds halves away from zero)
    _math(_M.ROUND, 1, "rintf", "rint", "round", "np.rint"),
    _math(_M.TRUNC, 1, "truncf", "trunc", "trunc", "np.trunc"),
    _math(_M.ERF, 1, "erff", LOWERED, Helper("erf"), "_ops.erf"),
    _math(_M.FMA, 3, "fmaf", "fma", "fma", "_ops.fma"),
    _math(_M.CLAMP, 3, LOWERED, LOWERED, "clamp", "_ops.clamp"),
    # CUDA writes isnan(x)/isinf(x) in code (no f/double forms); WGSL uses bit tests
    _math(_M.ISNAN, 1, LOWERED, "isnan", LOWERED, "np.isnan"),
    _math(_M.ISINF, 1, LOWERED, "isinf", LOWERED, "np.isinf"),
    # The math library (docs/LANGUAGE.md, Math: precision per target). WGSL's asinh,
    # acosh, atanh and log10 lose precision near 0 / 1 (their formulas), so the prelude
    # computes them from an accurate log1p; Metal lacks the LOWERED ones (helpers of
    # codegen/float_helpers.py, shared with the WGSL prelude).
    _math(_M.ASINH, 1, "asinhf", "asinh", Helper("asinh"), "np.arcsinh"),
    _math(_M.ACOSH, 1, "acoshf", "acosh", Helper("acosh"), "np.arccosh"),
    _math(_M.ATANH, 1, "atanhf", "atanh", Helper("atanh"), "np.arctanh"),
    _math(_M.EXPM1, 1, "expm1f", LOWERED, Helper("expm1"), "np.expm1"),
    _math(_M.LOG1P, 1, "log1pf", LOWERED, Helper("log1p"), "np.log1p"),
    _math(_M.LOG10, 1, "log10f", "log10", Helper("log10"), "np.log10"),
    _math(_M.CBRT, 1, "cbrtf", LOWERED, Helper("cbrt"), "np.cbrt"),
    _math(_M.COPYSIGN, 2, "copysignf", "copysign", Helper("copysign"), "np.copysign"),
    _math(_M.FMOD, 2, "fmodf", "precise::fmod", Helper("fmod"), "np.fmod"),
    _math(_M.REMAINDER, 2, "remainderf", LOWERED, Helper("remainder"), "_ops.remainder"),
    _math(_M.FABS, 1, "fabsf", "fabs", "abs", "np.fabs"),
    _math(_M.ERFC, 1, "erfcf", LOWERED, Helper("erfc"), "_ops.erfc"),
    _math(_M.LGAMMA, 1, "lgammaf", LOWERED, Helper("lgamma"), "_ops.lgamma"),
    _math(_M.TGAMMA, 1, "tgammaf", LOWERED, Helper("tgamma"), "_ops.tgamma"),
    _math(_M.DEGREES, 1, LOWERED, LOWERED, "degrees", "_ops.degrees"),
    _math(_M.RADIANS, 1, LOWERED, LOWERED, "radians", "_ops.radians"),
    _math(_M.ISFINITE, 1, LOWERED, "isfinite", LOWERED, "np.isfinite"),
    _math(_M.NEXTAFTER, 2, "nextafterf", LOWERED, Helper("nextafter"), "np.nextafter"),
    # ldexp(x, e): e is an i32 (every other math op takes one type throughout)
    _math(_M.LDEXP, 2, "ldexpf", "ldexp", Helper("ldexp"), "_ops.ldexp"),
    # frexp's exponent as an i32 (0 for 0, inf and NaN); the mantissa is ldexp(x, -e)
    _math(_M.FREXP_EXP, 1, LOWERED, LOWERED, Helper("frexp_exp"), "_ops.frexp_exp"),
]


def _atomic() -> list[OpInfo]:
    c = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
         "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor", "exchange": "atomicExch",
         "compare_exchange": "atomicCAS", "load": LOWERED, "store": LOWERED,
         "inc": "atomicInc", "dec": "atomicDec"}  # load/store: volatile accesses
    msl = {v: f"atomic_fetch_{v}_explicit" for v in ("add", "sub", "min", "max", "and",
                                                       "or", "xor")}
    msl.update(exchange="atomic_exchange_explicit",
               compare_exchange="atomic_compare_exchange_weak_explicit",
               load="atomic_load_explicit", store="atomic_store_explicit",
               inc=LOWERED, dec=LOWERED)
    wgsl = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
            "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor",
            "exchange": "atomicExchange", "compare_exchange": LOWERED,
            "load": "atomicLoad", "store": "atomicStore", "inc": LOWERED, "dec": LOWERED}
    # min/max on floats: np.fmin/np.fmax in cpu_atomics (a NaN operand is ignored)
    numpy = {"add": "np.add", "sub": "np.subtract", "min": "np.minimum",
             "max": "np.maximum", "and": "np.bitwise_and", "or": "np.bitwise_or",
             "xor": "np.bitwise_xor", "exchange": LOWERED, "compare_exchange": LOWERED,
             "load": LOWERED, "store": LOWERED, "inc": LOWERED, "dec": LOWERED}
    arity = {AtomicOp.COMPARE_EXCHANGE: 3, AtomicOp.LOAD: 1}
    return [OpInfo(op, arity.get(op, 2), _first, None,
                   {"c": c[op.value], "msl": msl[op.value], "wgsl": wgsl[op.value],
                    "numpy": numpy[op.value]}) for op in AtomicOp]


_LANE_OPS = frozenset({PlaneOp.BROADCAST, PlaneOp.SHUFFLE, PlaneOp.SHUFFLE_XOR,
                       PlaneOp.SHUFFLE_UP, PlaneOp.SHUFFLE_DOWN,
                       PlaneOp.BALLOT})  # ballot's argument: which u32 word of the mask


def _plane() -> list[OpInfo]:
    # CUDA: shuffles are intrinsics, reductions and scans cooperative-groups calls
    c = {"broadcast": "__shfl_sync", "shuffle": "__shfl_sync",
         "shuffle_xor": "__shfl_xor_sync", "shuffle_up": "__shfl_up_sync",
         "shuffle_down": "__shfl_down_sync"}
    msl = {"sum": "simd_sum", "prod": "simd_product", "min": "simd_min", "max": "simd_max",
           "all": "simd_all", "any": "simd_any",
           "inclusive_sum": "simd_prefix_inclusive_sum",
           "exclusive_sum": "simd_prefix_exclusive_sum", "broadcast": "simd_broadcast",
           "shuffle": "simd_shuffle", "shuffle_xor": "simd_shuffle_xor",
           "shuffle_up": "simd_shuffle_up", "shuffle_down": "simd_shuffle_down",
           "inclusive_prod": "simd_prefix_inclusive_product",
           "exclusive_prod": "simd_prefix_exclusive_product", "ballot": "simd_ballot",
           "elect": "simd_is_first"}
    wgsl = {"sum": "subgroupAdd", "prod": "subgroupMul", "min": "subgroupMin",
            "max": "subgroupMax", "all": "subgroupAll", "any": "subgroupAny",
            "inclusive_sum": "subgroupInclusiveAdd", "exclusive_sum": "subgroupExclusiveAdd",
            "broadcast": "subgroupBroadcast", "shuffle": "subgroupShuffle",
            "shuffle_xor": "subgroupShuffleXor", "shuffle_up": "subgroupShuffleUp",
            "shuffle_down": "subgroupShuffleDown", "inclusive_prod": "subgroupInclusiveMul",
            "exclusive_prod": "subgroupExclusiveMul", "ballot": "subgroupBallot",
            # naga has no subgroupElect: the lane whose subgroupExclusiveAdd(1u) is 0
            "elect": LOWERED}
    # the cpu runtime reduces with these ufuncs (NaN-aware min/max and scans in code)
    numpy = {"sum": "np.add", "prod": "np.multiply", "all": "np.logical_and",
             "any": "np.logical_or"}
    return [OpInfo(op, 2 if op in _LANE_OPS else 1, _plane_typing(op), None,
                   {"c": c.get(op.value, LOWERED), "msl": msl[op.value],
                    "wgsl": wgsl[op.value], "numpy": numpy.get(op.value, LOWERED)},
                   takes_lane=op in _LANE_OPS)
            for op in PlaneOp]


def _plane_typing(op: PlaneOp) -> Callable[[list[DType]], DType]:
    """A ballot word is a u32 and elect a bool; every other plane op gives its value's
    type."""
    if op is PlaneOp.BALLOT:
        return lambda types: u32
    return _boolean if op is PlaneOp.ELECT else _first


def _sync() -> list[OpInfo]:
    """Barriers and fences. CUDA and Metal have a statement for each; WGSL has no
    standalone fence, so fence_cube is written as its two barriers (uniform control flow
    only) and fence_device, which nothing in WGSL gives across workgroups, is missing;
    the cpu runtime runs lanes in lockstep, where every one is a no-op."""
    c = {"sync_cube": "__syncthreads", "sync_plane": "__syncwarp",
         "fence_cube": "__threadfence_block", "fence_device": "__threadfence"}
    msl = {"sync_cube": "threadgroup_barrier", "sync_plane": "simdgroup_barrier",
           "fence_cube": "atomic_thread_fence", "fence_device": "atomic_thread_fence"}
    wgsl = {"sync_cube": LOWERED, "sync_plane": "subgroupBarrier", "fence_cube": LOWERED}
    return [OpInfo(op, 0, _first, None,
                   {"c": c[op.value], "msl": msl[op.value], "numpy": LOWERED}
                   | ({"wgsl": wgsl[op.value]} if op.value in wgsl else {}))
            for op in SyncOp]



def _count(types: list[DType]) -> DType:
    """popcount/clz/ctz/ffs give a u32 count (as CubeCL and Rust; a line of them for a
    line)."""
    from .types import LineType, u32
    t = types[0]
    return LineType(u32, t.size) if isinstance(t, LineType) else u32


COUNT_OPS = (BitOp.POPCOUNT, BitOp.CLZ, BitOp.CTZ, BitOp.FFS)  # their result is a u32


def _bit(op: BitOp, arity: int, c: str, msl: str, wgsl: str, numpy: str) -> OpInfo:
    """One integer/bit function: the C family's is CUDA's 32-bit intrinsic (the 64-bit
    and unsigned forms are picked in codegen/clike_bits.py), the others as named.
    `bitcast`'s result type is the type it names (its row types by the operand; the
    frontend and the verifier check the sizes). The fold pass folds them through
    ir/bitops.py, which needs the operand type as well."""
    return OpInfo(op, arity, _count if op in COUNT_OPS else _first, None,
                  {"c": c, "msl": msl, "wgsl": wgsl, "numpy": numpy})


_B = BitOp
_BIT_ROWS = [
    _bit(_B.POPCOUNT, 1, "__popc", "popcount", "countOneBits", "_bits.popcount"),
    _bit(_B.CLZ, 1, "__clz", "clz", "countLeadingZeros", "_bits.clz"),
    # CUDA has no ctz: __clz(__brev(x)) (32 for 0, as the others)
    _bit(_B.CTZ, 1, LOWERED, "ctz", "countTrailingZeros", "_bits.ctz"),
    # Metal: ctz(x) + 1 (0 for 0) in a helper; WGSL: firstTrailingBit(x) + 1
    _bit(_B.FFS, 1, "__ffs", LOWERED, "firstTrailingBit", "_bits.ffs"),
    _bit(_B.REVERSE_BITS, 1, "__brev", "reverse_bits", "reverseBits", "_bits.reverse_bits"),
    _bit(_B.MUL_HI, 2, "__mulhi", "mulhi", Helper("mul_hi"), "_bits.mul_hi"),
    _bit(_B.SATURATING_ADD, 2, LOWERED, "addsat", Helper("saturating_add"),
         "_bits.saturating_add"),
    _bit(_B.SATURATING_SUB, 2, LOWERED, "subsat", Helper("saturating_sub"),
         "_bits.saturating_sub"),
    # CUDA: __float_as_int, __int_as_float, __double_as_longlong, ... by the types
    _bit(_B.BITCAST, 1, LOWERED, "as_type", "bitcast", "_bits.bitcast"),
]



OPS: Mapping = _OpTable(_binary() + _compare() + _unary() + _logical() + _MATH_ROWS
                        + _atomic() + _plane() + _sync() + _BIT_ROWS)


def info(op, kind: str | None = None) -> OpInfo:
    """The table row of `op`: an enum member, or an IR op name with its `kind`
    ("binary", "compare", "unary", "logical", "math", "atomic", "plane", "bits",
    "sync")."""
    if kind is not None:
        op = KINDS[kind](op)
    elif not isinstance(op, Enum):
        raise TypeError(f"info({op!r}): a bare op name needs its kind, e.g. kind='binary'")
    return OPS[op]


def ops_of(kind: str) -> tuple[OpEnum, ...]:
    """Every op of one kind, in table order."""
    return tuple(KINDS[kind])
