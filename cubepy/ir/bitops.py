"""The integer and bit functions on Python ints: the semantics every target shares
(docs/LANGUAGE.md, "Integer and bit operations"), used by the constant folder.

Values are the integers of an IR type (signed ones negative where the sign bit is set);
each function works on the two's-complement bit pattern of the type's width.
"""
from __future__ import annotations

import math
import struct

from .dtype_facts import int_range, wrap
from .passes.consteval import NOFOLD
from .types import DType


def _pattern(value: int, ty: DType) -> int:
    """The bits of `value` as an unsigned number of the type's width."""
    return int(value) & ((1 << ty.bits) - 1)


def popcount(value: int, ty: DType) -> int:
    return bin(_pattern(value, ty)).count("1")


def clz(value: int, ty: DType) -> int:
    return ty.bits - _pattern(value, ty).bit_length()


def ctz(value: int, ty: DType) -> int:
    u = _pattern(value, ty)
    return ty.bits if u == 0 else (u & -u).bit_length() - 1


def ffs(value: int, ty: DType) -> int:
    """1-based index of the lowest set bit; 0 for 0 (CUDA's __ffs)."""
    u = _pattern(value, ty)
    return 0 if u == 0 else ctz(u, ty) + 1


def reverse_bits(value: int, ty: DType) -> int:
    text = format(_pattern(value, ty), f"0{ty.bits}b")
    return wrap(int(text[::-1], 2), ty)


def mul_hi(a: int, b: int, ty: DType) -> int:
    """The high half of the full (2 x width) product, signed for signed types."""
    return wrap((int(a) * int(b)) >> ty.bits, ty)


def saturating_add(a: int, b: int, ty: DType) -> int:
    lo, hi = int_range(ty)
    return min(max(int(a) + int(b), lo), hi)


def saturating_sub(a: int, b: int, ty: DType) -> int:
    lo, hi = int_range(ty)
    return min(max(int(a) - int(b), lo), hi)


_FLOAT_FORMATS = {"f32": ("<f", "<I"), "f64": ("<d", "<Q")}


def float_bits(value: float, ty: DType) -> int | None:
    """The unsigned bit pattern of a finite f32/f64 value or infinity (None for NaN,
    whose bits differ between targets' literals, and for other float types)."""
    formats = _FLOAT_FORMATS.get(ty.name)
    if formats is None or math.isnan(value):
        return None
    try:  # packing rounds to the type, as the target rounds the literal
        return struct.unpack(formats[1], struct.pack(formats[0], float(value)))[0]
    except (OverflowError, struct.error):
        return None


_UNARY = {"popcount": popcount, "clz": clz, "ctz": ctz, "ffs": ffs,
          "reverse_bits": reverse_bits}
_BINARY = {"mul_hi": mul_hi, "saturating_add": saturating_add,
           "saturating_sub": saturating_sub}


def fold_bits(op: str, ty: DType, operand_ty: DType, values: tuple):
    """Bit function `op` on constant `values` of `operand_ty` (result type `ty`), or
    NOFOLD where a constant cannot stand for the result (a bitcast to a float: NaN bits
    and subnormals are the target's; a bitcast of a NaN)."""
    if operand_ty.is_float or ty.is_float:
        if op == "bitcast" and ty.is_int:
            bits = float_bits(values[0], operand_ty)
            return NOFOLD if bits is None else wrap(bits, ty)
        return NOFOLD
    if op == "bitcast":
        return wrap(int(values[0]), ty)
    if op in _UNARY:
        return _UNARY[op](values[0], operand_ty)
    return _BINARY[op](values[0], values[1], operand_ty)
