"""Facts about each element type, kept in one place: integer ranges and wrapping, the
largest finite float, the numpy type, the struct code of the launch ABI and the spelling
in each source language family. The folder, the verifier, the ABI, the host checks and the
code generators read these instead of keeping tables of their own.

Target facts (which types a target has, how wide it stores a bool) live in
cubepy/targets/; this module knows nothing of targets.
"""
from __future__ import annotations


from .batched_dataclass import dataclass  # (frozen classes, cheap to create)
from .types import ALL_DTYPES, DType


@dataclass(frozen=True)
class DTypeFacts:
    """What the compiler needs to know about one element type."""

    dtype: DType
    lo: int | None  # integer range (None for floats and bool)
    hi: int | None
    float_max: float | None  # largest finite value of a float type
    numpy_name: str | None  # the numpy type holding it on the host (None: bf16, fp8)
    struct_code: str | None  # `struct` code of a scalar in the info struct (bool travels
    # as u32; bf16 and fp8 have none: abi.scalar_storage sends them as f32)


_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38,
              "f64": 1.7976931348623157e308, "e4m3": 448.0, "e5m2": 57344.0}
NUMPY_NAMES = {"f16": "float16", "f32": "float32", "f64": "float64", "i32": "int32",
                "i64": "int64", "u32": "uint32", "u64": "uint64", "bool": "bool"}
_STRUCT_CODES = {"f16": "e", "f32": "f", "f64": "d", "i32": "i", "i64": "q",
                 "u32": "I", "u64": "Q", "bool": "I"}


def _range(t: DType) -> tuple[int | None, int | None]:
    if not t.is_int:
        return None, None
    if t.is_signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def _make(t: DType) -> DTypeFacts:
    lo, hi = _range(t)
    return DTypeFacts(t, lo, hi, _FLOAT_MAX.get(t.name), NUMPY_NAMES.get(t.name),
                      _STRUCT_CODES.get(t.name))


FACTS: dict[str, DTypeFacts] = {t.name: _make(t) for t in ALL_DTYPES}

# Spelling of each type per source-language family; a type missing from a family's
# table does not exist there (the legalize pass rejects it before code generation).
SPELLING: dict[str, dict[str, str]] = {
    "c": {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float", "f64": "double",
          "i32": "int", "i64": "long long", "u32": "unsigned int",
          "u64": "unsigned long long", "bool": "bool", "e4m3": "__nv_fp8_e4m3",
          "e5m2": "__nv_fp8_e5m2"},
    "msl": {"f16": "half", "bf16": "bfloat", "f32": "float", "i32": "int", "i64": "long",
            "u32": "uint", "u64": "ulong", "bool": "bool"},
    "wgsl": {"f32": "f32", "f16": "f16", "i32": "i32", "u32": "u32", "bool": "bool"},
    "numpy": {name: f"np.{np_name}" for name, np_name in NUMPY_NAMES.items()},
}


def facts(t: DType) -> DTypeFacts:
    """The facts of element type `t`."""
    return FACTS[t.name]


def int_range(t: DType) -> tuple[int, int]:
    """(lowest, highest) value of the integer type `t`; ValueError for other types."""
    f = FACTS[t.name]
    if f.lo is None or f.hi is None:
        raise ValueError(f"{t.name} is not an integer type")
    return f.lo, f.hi


def wrap(value: int, t: DType) -> int:
    """`value` wrapped to the integer type `t` (two's complement): the one wrap rule of
    constant folding, the cpu runtime and the host checks."""
    value = int(value) & ((1 << t.bits) - 1)
    if t.is_signed and value >> (t.bits - 1):
        value -= 1 << t.bits
    return value


def fits(value: int, t: DType) -> bool:
    """Whether the integer `value` is representable in the integer type `t`."""
    lo, hi = int_range(t)
    return lo <= value <= hi


def spell(family: str, t: DType) -> str | None:
    """The spelling of `t` in the language `family` ("c", "msl", "wgsl", "numpy"), or
    None when the family has no such type."""
    return SPELLING[family].get(t.name)
