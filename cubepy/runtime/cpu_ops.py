"""Runtime helpers of the cpu runtime: lane masks, bounds-checked memory access and the
integer/float semantics of docs/LANGUAGE.md, on numpy values.

A value is either a numpy scalar (uniform: the same for every lane) or a 1-D numpy
array with one entry per lane. Numpy's fixed-width dtypes give wrapping integer
arithmetic and per-operation f16 rounding, as on a GPU.

A *mask* says which lanes execute a statement: None (every lane), False (no lane) or a
bool array. Helpers normalise masks so that the common cases stay cheap: an all-true
array becomes None (plain assignments, no np.where) and an all-false one becomes False
(the statement is skipped).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import scalar
from ..ir.types import dtype_from_numpy, i32, i64

ndarray = np.ndarray


def ufuncs(kind) -> dict:
    """IR op name -> numpy ufunc, for the ops of the enum `kind` whose cpu spelling
    (ir/ops.py, through the cpu Target) is a numpy function such as "np.add"."""
    from ..targets import get_target
    cpu = get_target("cpu")
    return {op.value: getattr(np, spelled[3:]) for op in kind
            if isinstance(spelled := cpu.spelling(op), str) and spelled.startswith("np.")}


# ----------------------------------------------------------------------------- masks

def mnorm(c):
    """A mask from a condition value (np.bool_, bool array) or a mask."""
    if c is None or c is False:
        return c
    if not isinstance(c, ndarray) or c.ndim == 0:
        return None if c else False
    if c.all():
        return None
    if not c.any():
        return False
    return c


def mand(a, b):
    """Lanes in mask/condition `a` and in `b`."""
    if a is False or b is False:
        return False
    if a is None:
        return mnorm(b)
    if b is None:
        return mnorm(a)
    if not isinstance(b, ndarray) or b.ndim == 0:
        return a if b else False
    if not isinstance(a, ndarray) or a.ndim == 0:
        return mnorm(b) if a else False
    return mnorm(a & b)


def mandnot(a, b):
    """Lanes in `a` and not in `b` (masks or conditions)."""
    if a is False or b is None:
        return False
    if b is False:
        return a
    if not isinstance(b, ndarray) or b.ndim == 0:
        return False if b else a
    if a is None:
        return mnorm(~b)
    return mnorm(a & ~b)


def mor(a, b):
    """Lanes in `a` or in `b` (masks)."""
    if a is None or b is None:
        return None
    if a is False:
        return b
    if b is False:
        return a
    return mnorm(a | b)


def where(m, new, old):
    """`old` replaced by `new` on the lanes of mask `m` (a masked assignment)."""
    if m is None:
        return new
    if m is False:
        return old
    return np.where(m, new, old)


def select(c, a, b):
    """`a if c else b` per lane."""
    if isinstance(c, ndarray) and c.ndim:
        return np.where(c, a, b)
    return a if c else b


# ----------------------------------------------------------------------------- memory

def _zero(buf):
    return buf.dtype.type(0)


def load(buf, idx):
    """`buf[idx]`, 0 where idx is out of range (negative or >= len(buf))."""
    n = buf.shape[0]
    if isinstance(idx, ndarray) and idx.ndim:
        if idx.dtype.kind == "u":
            if idx.max() < n:  # the common case: one reduction, no temporary
                return buf.take(idx)
            ok = idx < n
        else:
            ok = (idx >= 0) & (idx < n)
            if ok.all():
                return buf.take(idx)
        if n == 0:
            return np.zeros(idx.shape, buf.dtype)
        return np.where(ok, buf.take(np.where(ok, idx, 0)), _zero(buf))
    i = int(idx)
    return buf[i] if 0 <= i < n else _zero(buf)


def load_shared(buf, size, base, idx):
    """A shared-memory read: `buf` holds `size` elements per cube; lane l reads element
    `idx` of its cube, whose first element is at `base[l]`."""
    if isinstance(idx, ndarray) and idx.ndim:
        ok = (idx >= 0) & (idx < size) if idx.dtype.kind == "i" else idx < size
        if ok.all():
            return buf.take(base + idx)
        return np.where(ok, buf.take(base + np.where(ok, idx, 0)), _zero(buf))
    i = int(idx)
    if 0 <= i < size:
        return buf.take(base + i)
    return np.zeros(base.shape, buf.dtype)


def _lane_selection(idx, n, m, lanes):
    """(lane indices that write, their indices as int64) for a store under mask m."""
    idx = np.broadcast_to(idx, (lanes,))
    ok = (idx >= 0) & (idx < n) if idx.dtype.kind == "i" else idx < n
    if m is not None:
        ok = ok & m
    sel = np.flatnonzero(ok)
    return sel, idx[sel].astype(np.int64)


def store(buf, idx, val, m, lanes):
    """`buf[idx] = val` on the lanes of mask m, dropped where idx is out of range. When
    several lanes store to one element the highest lane wins (a GPU leaves it open)."""
    if m is False:
        return
    n = buf.shape[0]
    if m is None and not (isinstance(idx, ndarray) and idx.ndim) \
            and not (isinstance(val, ndarray) and val.ndim):
        i = int(idx)
        if 0 <= i < n:
            buf[i] = val
        return
    sel, where_ = _lane_selection(idx, n, m, lanes)
    if sel.size:
        buf[where_] = val[sel] if isinstance(val, ndarray) and val.ndim else val


def store_shared(buf, size, base, idx, val, m, lanes):
    """A shared-memory store (see load_shared), dropped where idx >= size."""
    if m is False:
        return
    sel, where_ = _lane_selection(idx, size, m, lanes)
    if sel.size:
        buf[base[sel] + where_] = val[sel] if isinstance(val, ndarray) and val.ndim else val


def meta(values, dim):
    """Entry `dim` of a shape/stride table (padded with a trailing 0, which is what an
    out-of-range dimension reads)."""
    last = values.shape[0] - 1
    if isinstance(dim, ndarray) and dim.ndim:
        d = dim.astype(np.int64)
        return values.take(np.where((d < 0) | (d > last), last, d))
    d = int(dim)
    return values[d if 0 <= d < last else last]


# ----------------------------------------------------------------------------- integers

def ifloordiv(a, b):
    """Integer floor division: a // 0 == 0, MIN // -1 == MIN (ir/scalar.py)."""
    return scalar.int_floordiv(a, b)


def imod(a, b):
    """Integer floor modulo: the sign of b; a % 0 == a, MIN % -1 == 0 (ir/scalar.py)."""
    return scalar.int_mod(a, b)


def ffloordiv(a, b):
    """Float floor division, exact: numpy's (CPython's divmod) quotient; x // 0 is +-inf
    (nan for 0 // 0), as numpy gives, where Python would raise."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.floor_divide(a, b)


def fmod(a, b):
    """Float modulo, exact: fmod(a, b) moved to the sign of b (numpy's remainder);
    x % 0 is nan, as numpy gives, where Python would raise."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.remainder(a, b)


def shl(a, b, dtype, bits):
    """a << (b mod bits), in a's type (ir/scalar.py)."""
    return scalar.shift("shl", a, b, _INT_OF_BITS[bits], dtype)


def shr(a, b, dtype, bits):
    """a >> (b mod bits), in a's type (arithmetic for signed types, as C and WGSL)."""
    return scalar.shift("shr", a, b, _INT_OF_BITS[bits], dtype)


_INT_OF_BITS = {32: i32, 64: i64}  # only the width matters to a shift amount


def ipow(a, b, dtype):
    """Integer power with wrapping; a negative exponent gives 0 (or 1/-1 for a = 1/-1)."""
    a_arr = np.asarray(a, dtype)
    b_arr = np.asarray(b).astype(np.int64)
    shape = np.broadcast_shapes(a_arr.shape, b_arr.shape)
    result = np.ones(shape, dtype)
    base = np.broadcast_to(a_arr, shape).copy()
    exp = np.broadcast_to(b_arr, shape).copy()
    neg = exp < 0
    exp[neg] = 0
    while exp.any():
        odd = (exp & 1) == 1
        result = np.where(odd, result * base, result)
        base = base * base
        exp >>= 1
    if neg.any():
        one = base.dtype.type(1)
        a_b = np.broadcast_to(a_arr, shape)
        neg_val = np.where(a_b == one, one, 0).astype(dtype)
        if dtype.kind == "i":
            odd_exp = (np.broadcast_to(b_arr, shape) & 1) == 1
            neg_val = np.where(a_b == -1, np.where(odd_exp, -1, 1), neg_val).astype(dtype)
        result = np.where(neg, neg_val, result)
    return result if shape else result[()]


# ----------------------------------------------------------------------------- casts

def f2i(x, dtype, bits, signed):
    """Float to integer: truncate toward zero, saturate, NaN -> 0 (ir/scalar.py)."""
    return scalar.float_to_int(x, dtype_from_numpy(dtype), dtype)


def astype(x, dtype):
    """A conversion that wraps (integers) or rounds (floats), as C casts do."""
    return x.astype(dtype)


# ----------------------------------------------------------------------------- math

def rsqrt(x):
    return x.dtype.type(1) / np.sqrt(x)


_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    if isinstance(x, ndarray) and x.ndim:
        return _ERF(x.astype(np.float64)).astype(x.dtype)
    return x.dtype.type(math.erf(float(x)))


def fma(a, b, c):
    """a * b + c with one rounding for f16/f32 (computed in f64)."""
    dtype = np.result_type(a, b, c)
    if dtype == np.float64:
        return a * b + c
    r = (np.asarray(a, np.float64) * b + np.asarray(c, np.float64)).astype(dtype)
    return r if r.ndim else r[()]


def clamp(x, lo, hi):
    """min(max(x, lo), hi); for floats a NaN bound is ignored and NaN x gives lo."""
    if np.result_type(x).kind == "f":
        return np.fmin(np.fmax(x, lo), hi)
    return np.minimum(np.maximum(x, lo), hi)


from .cpu_math import (degrees, erfc, frexp_exp, ldexp, lgamma, radians,  # noqa: E402,F401
                       remainder, tgamma)
