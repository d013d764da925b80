"""Plane (warp / subgroup) operations of the cpu runtime, on every lane of a batch.

A plane is PLANE_DIM consecutive units of a cube (unit position // PLANE_DIM); the
lane is unit position % PLANE_DIM. Each operation scatters the values of the active
lanes (the statement's mask) into a (planes, PLANE_DIM) grid whose other slots hold
the operation's identity, reduces or scans along the rows, and gathers the results
back. Shuffles read the grid at the source lane: an inactive or missing source lane
gives 0, and shuffle_up/down past either end of the plane give the caller's own value
(as CUDA and WGSL do).
"""
from __future__ import annotations

import numpy as np

from ..ir.ops import PlaneOp
from .cpu_ops import ufuncs

PLANE_DIM = 32
_REDUCE = ufuncs(PlaneOp)  # sum, prod, all, any (ir/ops.py)


def _identity(op: str, dtype: np.dtype):
    if op in ("sum", "inclusive_sum", "exclusive_sum"):
        return 0
    if op == "prod":
        return 1
    if op == "all":
        return True
    if op == "any":
        return False
    if op in ("min", "max"):
        if dtype.kind == "f":
            return np.nan  # fmin/fmax ignore NaN: the non-NaN operand wins
        info = np.iinfo(dtype)
        return info.max if op == "min" else info.min
    return 0  # shuffles: an inactive source lane reads 0


def plane(op: str, value, arg, mask, unit: np.ndarray, cube: np.ndarray, cubes: int,
          units: int):
    """`plane_<op>(value[, arg])` for every lane; `mask` is the statement's lane mask
    (None: all, False: none, else a bool array), `unit`/`cube` each lane's unit
    position and cube of the batch, `units` the units per cube."""
    lanes = unit.shape[0]
    dtype = np.asarray(value).dtype
    v = np.broadcast_to(np.asarray(value, dtype), (lanes,))
    if mask is False:
        return np.zeros(lanes, dtype)
    per_cube = -(-units // PLANE_DIM)
    lane = (unit % PLANE_DIM).astype(np.int64)
    row = cube * per_cube + (unit // PLANE_DIM).astype(np.int64)
    slot = row * PLANE_DIM + lane
    grid = np.full(cubes * per_cube * PLANE_DIM, _identity(op, dtype), dtype)
    if mask is None:
        grid[slot] = v
    else:
        grid[slot[mask]] = v[mask]
    rows = grid.reshape(-1, PLANE_DIM)
    with np.errstate(all="ignore"):
        if op in _REDUCE:
            return _REDUCE[op].reduce(rows, axis=1, dtype=dtype)[row]
        if op in ("min", "max"):
            if dtype.kind == "f":
                fn = np.fmin if op == "min" else np.fmax
            else:
                fn = np.minimum if op == "min" else np.maximum
            return fn.reduce(rows, axis=1)[row]
        if op in ("inclusive_sum", "exclusive_sum"):
            scan = np.cumsum(rows, axis=1, dtype=dtype)
            if op == "exclusive_sum":
                scan = np.concatenate([np.zeros((scan.shape[0], 1), dtype), scan[:, :-1]],
                                      axis=1)
            return scan.reshape(-1)[slot]
    a = np.broadcast_to(np.asarray(arg).astype(np.int64), (lanes,))
    src = {"broadcast": a, "shuffle": a, "shuffle_xor": lane ^ a,
           "shuffle_up": lane - a, "shuffle_down": lane + a}[op]
    ok = (src >= 0) & (src < PLANE_DIM)
    read = grid[row * PLANE_DIM + np.where(ok, src, 0)]
    if op in ("shuffle_up", "shuffle_down"):
        return np.where(ok, read, v)
    return np.where(ok, read, np.zeros((), dtype))
