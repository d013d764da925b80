"""The integer and bit functions of the cpu runtime, bit-exact with the GPU targets
(docs/LANGUAGE.md, "Integer and bit operations"; ir/bitops.py is the scalar reference).

Each takes numpy values (a scalar of the kernel's type, uniform over the lanes, or a
1-D array with one entry per lane) and gives the same kind back. The work is done on
the unsigned bit pattern with vectorised bit tricks: numpy has a popcount
(`np.bitwise_count`) only from 2.0, and cubepy supports numpy 1.24.
"""
from __future__ import annotations

import numpy as np

_UNSIGNED = {4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
_SIGNED = {4: np.dtype(np.int32), 8: np.dtype(np.int64)}


def _pattern(x) -> tuple[np.ndarray, bool]:
    """(the bits of x as a 1-D unsigned array, whether x was a scalar)."""
    arr = np.asarray(x)
    scalar = arr.ndim == 0
    return np.atleast_1d(arr).view(_UNSIGNED[arr.dtype.itemsize]), scalar


def _back(result: np.ndarray, scalar: bool, dtype=None):
    """`result` as x's kind (a numpy scalar for a scalar x), viewed as `dtype`."""
    if dtype is not None:
        result = result.view(dtype)
    return result[0] if scalar else result


def _ones(u: np.ndarray) -> np.ndarray:
    """popcount of each unsigned element (SWAR: bit counts of 2, 4, 8 bits, then a
    multiply that adds the byte counts into the top byte)."""
    t = u.dtype.type
    bits = u.dtype.itemsize * 8
    m1, m2, m4, h01 = (t(int(pattern * (bits // 8), 16)) for pattern in ("55", "33", "0f", "01"))
    v = u - ((u >> t(1)) & m1)
    v = (v & m2) + ((v >> t(2)) & m2)
    v = (v + (v >> t(4))) & m4
    return ((v * h01) >> t(bits - 8)).astype(np.uint32)


_NATIVE_POPCOUNT = getattr(np, "bitwise_count", None)  # numpy >= 2.0


def _count_ones(u: np.ndarray) -> np.ndarray:
    if _NATIVE_POPCOUNT is not None:
        return _NATIVE_POPCOUNT(u).astype(np.uint32)
    return _ones(u)


def popcount(x):
    u, scalar = _pattern(x)
    return _back(_count_ones(u), scalar)


def _smear(u: np.ndarray) -> np.ndarray:
    """Every bit below the highest set bit set too (so its popcount is the bit length)."""
    t = u.dtype.type
    v = u.copy()
    shift = 1
    while shift < u.dtype.itemsize * 8:
        v |= v >> t(shift)
        shift *= 2
    return v


def clz(x):
    u, scalar = _pattern(x)
    bits = np.uint32(u.dtype.itemsize * 8)
    return _back(bits - _count_ones(_smear(u)), scalar)


def ctz(x):
    u, scalar = _pattern(x)
    # the bits below the lowest set bit (all of them for 0)
    return _back(_count_ones(~u & (u - u.dtype.type(1))), scalar)


def ffs(x):
    u, scalar = _pattern(x)
    below = _count_ones(~u & (u - u.dtype.type(1)))
    return _back(np.where(u == 0, np.uint32(0), below + np.uint32(1)).astype(np.uint32),
                 scalar)


_REVERSED_BYTES = np.array([int(format(b, "08b")[::-1], 2) for b in range(256)], np.uint8)


def reverse_bits(x):
    arr = np.asarray(x)
    u, scalar = _pattern(x)
    # each byte's bits reversed, then the byte order reversed: the whole word reversed
    flipped = _REVERSED_BYTES[np.ascontiguousarray(u).view(np.uint8)].view(u.dtype).byteswap()
    return _back(flipped, scalar, arr.dtype)


def _pair(a, b, dtype) -> tuple[np.ndarray, np.ndarray, bool]:
    """The bit patterns of two operands of one type, as arrays of one shape, and
    whether both were scalars (a scalar operand meets a lane array by broadcasting)."""
    ua, a_scalar = _pattern(np.asarray(a, dtype))
    ub, b_scalar = _pattern(np.asarray(b, dtype))
    ua, ub = np.broadcast_arrays(ua, ub)
    return ua, ub, a_scalar and b_scalar


def _mul_hi_64(ua: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """The high 64 bits of the unsigned 128-bit products (32-bit halves, uint64 sums
    that cannot overflow)."""
    t = np.uint64
    mask, s = t(0xFFFFFFFF), t(32)
    a_lo, a_hi, b_lo, b_hi = ua & mask, ua >> s, ub & mask, ub >> s
    lo_hi, hi_lo = a_lo * b_hi, a_hi * b_lo
    mid = ((a_lo * b_lo) >> s) + (hi_lo & mask) + (lo_hi & mask)
    return a_hi * b_hi + (hi_lo >> s) + (lo_hi >> s) + (mid >> s)


def mul_hi(a, b):
    """The high half of the full product (signed for signed types)."""
    dtype = np.result_type(a, b)
    ua, ub, scalar = _pair(a, b, dtype)
    signed = dtype.kind == "i"
    if dtype.itemsize == 4:  # the exact product fits in 64 bits
        wide = np.int64 if signed else np.uint64
        sa, sb = (v.view(dtype).astype(wide) for v in (ua, ub))
        return _back((sa * sb >> 32).astype(dtype), scalar)
    hi = _mul_hi_64(ua, ub)
    if signed:  # hi_s = hi_u - (a < 0 ? b : 0) - (b < 0 ? a : 0), mod 2^64
        zero = np.uint64(0)
        hi = hi - np.where(ua.view(np.int64) < 0, ub, zero) \
            - np.where(ub.view(np.int64) < 0, ua, zero)
    return _back(hi, scalar, dtype)


def _saturating(a, b, subtract: bool):
    dtype = np.result_type(a, b)
    ua, ub, scalar = _pair(a, b, dtype)
    r = ua - ub if subtract else ua + ub  # wraps (unsigned arrays)
    if dtype.kind == "u":
        overflow = ua < ub if subtract else r < ua
        limit = dtype.type(0) if subtract else np.iinfo(dtype).max
        return _back(np.where(overflow, limit, r).astype(dtype), scalar)
    sa, sb, sr = (v.view(dtype) for v in (ua, ub, r))
    sign = (sa ^ sb) & (sa ^ sr) if subtract else (sa ^ sr) & (sb ^ sr)
    info = np.iinfo(dtype)
    limit = np.where(sa < 0, dtype.type(info.min), dtype.type(info.max))
    return _back(np.where(sign < 0, limit, sr).astype(dtype), scalar)


def saturating_add(a, b):
    return _saturating(a, b, subtract=False)


def saturating_sub(a, b):
    return _saturating(a, b, subtract=True)


def bitcast(x, dtype):
    """The bits of x read as `dtype` (a numpy type of the same size)."""
    arr = np.asarray(x)
    out = np.atleast_1d(arr).view(dtype)
    return out[0] if arr.ndim == 0 else out
