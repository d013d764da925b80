"""Atomics on the cpu runtime, with exact sequential semantics.

All lanes of an atomic statement run in one call. The result is what running them one
after another in lane order gives: every lane's returned old value and the final memory
agree with that serial order, also when many lanes hit the same element (histograms,
counters) and for floats, whose rounding depends on the order.

How: lanes are grouped by element (a stable sort keeps lane order inside a group).
Groups are independent, so the k-th operation of every group runs in one vectorised
step ("rounds"); a group longer than a threshold runs on its own with `ufunc.accumulate`,
which is sequential. Without a used result, `ufunc.at` does the whole update (it applies
duplicates in order).

Float min/max ignore a NaN operand (np.fmin/np.fmax), as the GPU targets' fminf/fmaxf
loops do: a NaN value leaves the element unchanged and a NaN element takes the value.
`inc`/`dec` wrap at the limit as CUDA's atomicInc/atomicDec; `load` reads, `store` is an
exchange whose old value nobody reads.
"""
from __future__ import annotations

import numpy as np

from ..ir.ops import AtomicOp
from .cpu_ops import ufuncs

ndarray = np.ndarray

_UFUNCS = ufuncs(AtomicOp)  # add sub min max and or xor (ir/ops.py)
_FLOAT_UFUNCS = {**_UFUNCS, "min": np.fmin, "max": np.fmax}  # a NaN operand is ignored


def _ufunc(op: str, dtype):
    """The ufunc applying `op` to elements of `dtype`, or None (exchange, cas, inc...)."""
    return (_FLOAT_UFUNCS if dtype.kind == "f" else _UFUNCS).get(op)


def _step(op: str, cur, v, cmp):
    """The new value of an element holding `cur` after one operation with operand v
    (arrays: unsigned wrap-around in the unused branch of inc/dec stays silent)."""
    if op == "exchange":
        return v
    if op == "compare_exchange":
        return np.where(cur == cmp, v, cur)
    if op == "inc":
        return np.where(cur >= v, 0, cur + 1).astype(cur.dtype)
    if op == "dec":
        return np.where((cur == 0) | (cur > v), v, cur - 1).astype(cur.dtype)
    return _ufunc(op, cur.dtype)(cur, v)


def atomic(op: str, buf: ndarray, idx, val, cmp, m, want_old: bool, lanes: int,
           size: int | None = None, base=None):
    """Applies atomic `op` for the lanes of mask m; returns the old values per lane (0 for
    lanes that did nothing or were out of range) when want_old, else None.

    `size`/`base` describe shared memory (see cpu_ops.load_shared); otherwise the
    element index is checked against len(buf).
    """
    dtype = buf.dtype
    if m is False:
        return np.zeros(lanes, dtype) if want_old else None
    idx = np.broadcast_to(idx, (lanes,))
    n = buf.shape[0] if size is None else size
    ok = (idx >= 0) & (idx < n) if idx.dtype.kind == "i" else idx < n
    if m is not None:
        ok = ok & m
    sel = np.flatnonzero(ok)
    flat = idx[sel].astype(np.int64)
    if base is not None:
        flat = flat + base[sel]
    if op == "load":
        out = np.zeros(lanes, dtype)
        out[sel] = buf[flat]
        return out
    if op == "store":
        op, want_old = "exchange", False
    vals = np.broadcast_to(np.asarray(val, dtype), (lanes,))[sel]
    cmps = None
    if op == "compare_exchange":
        cmps = np.broadcast_to(np.asarray(cmp, dtype), (lanes,))[sel]

    if not want_old:
        if _ufunc(op, dtype) is not None:
            _ufunc(op, dtype).at(buf, flat, vals)
            return None
        if op == "exchange":
            buf[flat] = vals  # numpy keeps the last of duplicates: the serial result
            return None

    old = _serial(op, buf, flat, vals, cmps)
    if not want_old:
        return None
    out = np.zeros(lanes, dtype)
    out[sel] = old
    return out


def _serial(op: str, buf: ndarray, flat: ndarray, vals: ndarray, cmps) -> ndarray:
    """Runs the operations in order; returns each one's old value, updates buf."""
    k = flat.shape[0]
    if k == 0:
        return vals[:0].copy()
    order = np.argsort(flat, kind="stable")
    sf, sv = flat[order], vals[order]
    sc = cmps[order] if cmps is not None else None
    starts = np.empty(k, bool)
    starts[0] = True
    np.not_equal(sf[1:], sf[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    gid = np.cumsum(starts) - 1
    rank = np.arange(k) - first[gid]
    counts = np.diff(np.append(first, k))
    cur = buf[sf[first]].copy()  # each group's current value
    old = np.empty(k, buf.dtype)

    threshold = max(32, int(np.sqrt(k)))
    small = counts[gid] <= threshold
    if small.any():
        pos = np.flatnonzero(small)
        pos = pos[np.argsort(rank[pos], kind="stable")]
        bounds = np.searchsorted(rank[pos], np.arange(int(rank[pos].max()) + 2))
        for r in range(len(bounds) - 1):
            p = pos[bounds[r]:bounds[r + 1]]  # the r-th operation of each small group
            g = gid[p]
            before = cur[g]
            old[p] = before
            cur[g] = _step(op, before, sv[p], sc[p] if sc is not None else None)
    for g in np.flatnonzero(counts > threshold):
        lo, hi = first[g], first[g] + counts[g]
        seg = sv[lo:hi]
        if _ufunc(op, buf.dtype) is not None:
            acc = _ufunc(op, buf.dtype).accumulate(np.concatenate(([cur[g]], seg)).astype(buf.dtype))
            old[lo:hi] = acc[:-1]
            cur[g] = acc[-1]
        elif op == "exchange":
            old[lo] = cur[g]
            old[lo + 1:hi] = seg[:-1]
            cur[g] = seg[-1]
        else:  # compare_exchange, inc, dec: inherently serial
            c = cur[g:g + 1]
            for j in range(lo, hi):
                old[j] = c[0]
                c = _step(op, c, sv[j:j + 1], sc[j:j + 1] if sc is not None else None)
            cur[g] = c[0]
    buf[sf[first]] = cur
    result = np.empty(k, buf.dtype)
    result[order] = old
    return result
