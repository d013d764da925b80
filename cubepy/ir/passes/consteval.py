"""Compile-time evaluation with exactly the semantics of docs/LANGUAGE.md.

Each function returns the folded Python value, or NOFOLD when folding is not certain to
match every target (float division, transcendental math, bf16, ...). Integers wrap by
bit width; signed `//` and `%` floor; `a // 0 == 0`, `a % 0 == a`; shift amounts are
taken modulo the width; float->int casts truncate toward zero and saturate, NaN -> 0.
Float results are rounded to their type through numpy (IEEE, as the GPUs compute).
"""
from __future__ import annotations

import math

import numpy as np

from .. import scalar
from ..dtype_facts import wrap
from ..types import DType

NOFOLD = object()

_FLOAT_NP = scalar.FLOAT_TYPES  # f16, f32, f64 -> numpy's rounding types


def to_float(value, ty: DType):
    """`value` rounded to the float type `ty`, as a Python float (NOFOLD for bf16)."""
    rounded = scalar.round_float(value, ty)
    return NOFOLD if rounded is None else rounded


def int_floordiv(a: int, b: int, ty: DType) -> int:
    return scalar.int_floordiv(a, b, ty)  # Python floors; MIN // -1 wraps back to MIN


def int_mod(a: int, b: int, ty: DType) -> int:
    return scalar.int_mod(a, b, ty)


def binary(op: str, ty: DType, a, b):
    """The folded value of `a op b` of type `ty`, or NOFOLD."""
    if ty.is_bool:
        table = {"bitand": a and b, "bitor": a or b, "bitxor": a != b,
                 "max": a or b, "min": a and b}
        return bool(table[op]) if op in table else NOFOLD
    if ty.is_int:
        a, b = int(a), int(b)
        if op in ("shl", "shr"):
            return scalar.shift(op, a, b, ty)  # arithmetic >> for signed (a is signed)
        if op == "floordiv":
            return int_floordiv(a, b, ty)
        if op == "mod":
            return int_mod(a, b, ty)
        if op == "pow":
            return wrap(pow(a, b, 1 << ty.bits), ty) if b >= 0 else NOFOLD
        simple = {"add": a + b, "sub": a - b, "mul": a * b, "bitand": a & b,
                  "bitor": a | b, "bitxor": a ^ b, "max": max(a, b), "min": min(a, b)}
        return wrap(simple[op], ty) if op in simple else NOFOLD
    if ty.name not in _FLOAT_NP:
        return NOFOLD
    a, b = float(a), float(b)
    if op in ("max", "min"):
        if math.isnan(a):
            return b
        if math.isnan(b):
            return a
        if a == b:  # 0.0 vs -0.0 may differ between targets
            return a if math.copysign(1, a) == math.copysign(1, b) else NOFOLD
        return max(a, b) if op == "max" else min(a, b)
    np_type = _FLOAT_NP[ty.name]
    x, y = np_type(a), np_type(b)
    with np.errstate(all="ignore"):
        # `//` and `%` are exact on every target (numpy's float divmod in the type itself:
        # f16 through f32 as numpy's half and every target do, f32 in f32, no double rounding)
        exact = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
                 "floordiv": lambda: np.floor_divide(x, y), "mod": lambda: np.remainder(x, y)}
        if op not in exact:
            return NOFOLD  # division, pow: leave to the target
        return float(exact[op]())


def unary(op: str, ty: DType, a):
    if op == "not":
        return not a
    if ty.is_bool:
        return NOFOLD
    if ty.is_int:
        a = int(a)
        table = {"neg": -a, "bitnot": ~a, "abs": abs(a)}
        return wrap(table[op], ty) if op in table else NOFOLD
    if ty.name not in _FLOAT_NP:
        return NOFOLD
    if op == "neg":
        return -float(a)
    if op == "abs":
        return abs(float(a))
    return NOFOLD


def compare(op: str, a, b, ty: DType | None = None) -> bool:
    """`a op b` for constants of type `ty` (floats rounded to it first)."""
    if ty is not None and ty.is_float:
        a, b = to_float(a, ty), to_float(b, ty)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
            "ge": a >= b}[op]


def cast(value, src: DType, dst: DType):
    """The value of casting a constant of type `src` to `dst`, or NOFOLD."""
    if dst.is_bool:
        if src.is_float:
            return NOFOLD  # NaN -> bool differs between C and WGSL
        return bool(value)
    if src.is_bool:
        value = int(bool(value))
        src_is_float = False
    else:
        src_is_float = src.is_float
    if dst.is_int:
        if src_is_float:
            if src.name not in _FLOAT_NP:
                return NOFOLD
            v = to_float(value, src)  # the literal as the target rounds it
            return scalar.float_to_int(v, dst)
        return wrap(int(value), dst)
    return to_float(value, dst)
