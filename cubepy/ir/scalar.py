"""The scalar semantics of docs/LANGUAGE.md, written once: constant folding
(ir/passes/consteval.py) and the cpu runtime (runtime/cpu_ops.py) both call these, so a
folded constant and a computed value cannot drift apart.

Each function takes Python scalars or numpy arrays (`np.asarray` in, the same rule);
integers wrap by bit width, `a // 0 == 0`, `a % 0 == a`, shift amounts are taken modulo
the width, float -> int conversions truncate toward zero and saturate, NaN -> 0.
"""
from __future__ import annotations

import math

import numpy as np

from .dtype_facts import int_range, wrap
from .types import DType

_FLOAT_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _is_array(*xs) -> bool:
    return any(isinstance(x, np.ndarray) and x.ndim for x in xs)


def round_float(value, t: DType):
    """`value` rounded to the float type `t` (a Python float for a scalar, an array of
    `t`'s numpy type for an array); None for bf16, which numpy cannot round to."""
    np_type = _FLOAT_NP.get(t.name)
    if np_type is None:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        if _is_array(value):
            return np.asarray(value).astype(np_type)
        return float(np_type(value))


def int_floordiv(a, b, t: DType):
    """Floor division in the integer type `t`: a // 0 == 0, MIN // -1 == MIN."""
    if _is_array(a, b):
        return np.floor_divide(a, b)  # numpy already gives 0 and MIN for these
    a, b = int(a), int(b)
    return 0 if b == 0 else wrap(a // b, t)


def int_mod(a, b, t: DType):
    """Floor modulo in the integer type `t` (the sign of b): a % 0 == a."""
    if _is_array(a, b):
        return np.where(np.asarray(b) == 0, a, np.remainder(a, b))
    a, b = int(a), int(b)
    return a if b == 0 else wrap(a % b, t)


def shift(op: str, a, b, t: DType):
    """`a << b` (op "shl") or `a >> b` ("shr", arithmetic for signed `t`), the amount
    taken modulo the width of `t`."""
    if _is_array(a, b):
        amount = (np.asarray(b) & (t.bits - 1)).astype(np.asarray(a).dtype)
        return np.left_shift(a, amount) if op == "shl" else np.right_shift(a, amount)
    a, amount = int(a), int(b) % t.bits
    return wrap(a << amount if op == "shl" else a >> amount, t)


def float_to_int(x, t: DType):
    """A float converted to the integer type `t`: truncated toward zero, saturated to
    `t`'s range, NaN -> 0."""
    lo, hi = int_range(t)
    if _is_array(x):
        xf = np.trunc(np.asarray(x, np.float64))
        out = np.where(np.isnan(xf), 0.0, xf)
        big, small = out >= float(hi) + 1.0, out < float(lo)
        np_type = np.dtype(t.numpy)
        r = np.where(big | small, 0.0, out).astype(np_type)
        return np.where(big, np_type.type(hi), np.where(small, np_type.type(lo), r))
    v = float(x)
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return hi if v > 0 else lo
    return max(lo, min(hi, math.trunc(v)))
