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

from .dtype_facts import FACTS, int_range, wrap
from .types import DType

# float type name -> the numpy type that rounds to it (bf16 has none)
FLOAT_TYPES = {name: np.dtype(f.numpy_name).type for name, f in FACTS.items()
               if f.dtype.is_float and f.numpy_name is not None}


def _is_array(*xs) -> bool:
    return any(isinstance(x, np.ndarray) and x.ndim for x in xs)


def _is_numpy(*xs) -> bool:
    """Values of the cpu runtime (numpy arrays or scalars): computed with numpy, keeping
    their numpy types; Python ints are constant folding's, computed exactly."""
    return any(isinstance(x, (np.ndarray, np.generic)) for x in xs)


def round_float(value, t: DType):
    """`value` rounded to the float type `t` (a Python float for a scalar, an array of
    `t`'s numpy type for an array; f32 values for e4m3 and e5m2, which the cpu runtime
    holds as f32); None for bf16, which numpy cannot round to."""
    np_type = FLOAT_TYPES.get(t.name)
    if np_type is None:
        if t.name not in ("e4m3", "e5m2"):
            return None
        from ..fp8 import round_to  # (CUDA's saturating, round-to-nearest-even cast)
        rounded = round_to(value, t.name)
        return rounded if _is_array(value) else float(rounded)
    with np.errstate(over="ignore", invalid="ignore"):
        if _is_array(value):
            return np.asarray(value).astype(np_type)
        return float(np_type(value))


def int_floordiv(a, b, t: DType | None = None):
    """Floor division in the integer type `t`: a // 0 == 0, MIN // -1 == MIN (numpy
    values need no `t`: numpy already gives 0 and MIN for these)."""
    if _is_numpy(a, b):
        return np.floor_divide(a, b)
    a, b = int(a), int(b)
    return 0 if b == 0 else wrap(a // b, t)


def int_mod(a, b, t: DType | None = None):
    """Floor modulo in the integer type `t` (the sign of b): a % 0 == a."""
    if _is_numpy(a, b):
        r = np.remainder(a, b)
        if _is_array(a, b):
            return np.where(b == 0, a, r)
        return a if b == 0 else r
    a, b = int(a), int(b)
    return a if b == 0 else wrap(a % b, t)


def shift(op: str, a, b, t: DType, np_type=None):
    """`a << b` (op "shl") or `a >> b` ("shr", arithmetic for signed `t`), the amount
    taken modulo the width of `t`; numpy values are shifted in `np_type` (default:
    `t`'s numpy type)."""
    if _is_numpy(a, b):
        amount = (b & (t.bits - 1)).astype(np_type or t.numpy)
        return np.left_shift(a, amount) if op == "shl" else np.right_shift(a, amount)
    a, amount = int(a), int(b) % t.bits
    return wrap(a << amount if op == "shl" else a >> amount, t)


def float_to_int(x, t: DType, np_type=None):
    """A float converted to the integer type `t`: truncated toward zero, saturated to
    `t`'s range, NaN -> 0. Numpy values give `np_type` (default: `t`'s numpy type)."""
    lo, hi = int_range(t)
    if _is_array(x):
        np_type = np.dtype(np_type or t.numpy)
        xf = np.trunc(np.asarray(x).astype(np.float64))
        big, small = xf >= float(hi) + 1.0, xf < float(lo)  # the first value out of range
        bad = big | small | np.isnan(xf)
        r = np.where(bad, 0.0, xf).astype(np_type)
        if bad.any():
            r = np.where(big, np_type.type(hi), np.where(small, np_type.type(lo), r))
        return r
    v = float(x)
    if math.isnan(v):
        out = 0
    elif math.isinf(v):
        out = hi if v > 0 else lo
    else:
        out = max(lo, min(hi, math.trunc(v)))
    return np.dtype(np_type).type(out) if _is_numpy(x) or np_type is not None else out
