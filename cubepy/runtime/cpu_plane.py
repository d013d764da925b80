"""Plane (warp / subgroup) operations of the cpu runtime, on every lane of a batch.

A plane is PLANE_DIM consecutive units of a cube (unit position // PLANE_DIM); the
lane is unit position % PLANE_DIM. Each operation scatters the values of the active
lanes (the statement's mask) into a (planes, PLANE_DIM) grid whose other slots hold
the operation's identity, reduces or scans along the rows, and gathers the results
back. Shuffles read the grid at the source lane: an inactive or missing source lane
gives 0, and shuffle_up/down past either end of the plane give the caller's own value
(as CUDA and WGSL do). A ballot word packs 32 lanes of the grid's condition (inactive
lanes vote no), elect is true on the lowest active lane.
"""
from __future__ import annotations

import numpy as np

from ..ir.ops import PlaneOp
from .cpu_ops import ufuncs

PLANE_DIM = 32
_REDUCE = ufuncs(PlaneOp)  # sum, prod, all, any (ir/ops.py)
_SCANS = {"inclusive_sum": np.cumsum, "exclusive_sum": np.cumsum,
          "inclusive_prod": np.cumprod, "exclusive_prod": np.cumprod}


def _ballot_word(rows: np.ndarray, word: int) -> np.ndarray:
    """Word `word` of each row's lane mask: bit i for lane 32 * word + i."""
    bits = rows[:, 32 * word:32 * word + 32].astype(np.uint64)
    weights = np.left_shift(np.uint64(1), np.arange(bits.shape[1], dtype=np.uint64))
    return (bits * weights).sum(axis=1, dtype=np.uint64).astype(np.uint32)


def _identity(op: str, dtype: np.dtype):
    if op in ("sum", "inclusive_sum", "exclusive_sum"):
        return 0
    if op in ("prod", "inclusive_prod", "exclusive_prod"):
        return 1
    if op in ("ballot", "elect"):
        return False  # a lane that is not active (or whose condition fails) votes no
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
        return np.zeros(lanes, np.uint32 if op == "ballot" else dtype)
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
        if op in _SCANS:
            scan = _SCANS[op](rows, axis=1, dtype=dtype)
            if op.startswith("exclusive"):
                first = np.full((scan.shape[0], 1), _identity(op, dtype), dtype)
                scan = np.concatenate([first, scan[:, :-1]], axis=1)
            return scan.reshape(-1)[slot]
        if op == "ballot":
            return _ballot_word(rows, int(arg))[row]
        if op == "elect":  # the lowest lane of each row whose slot holds true (active)
            return lane == np.argmax(rows, axis=1)[row]
    a = np.broadcast_to(np.asarray(arg).astype(np.int64), (lanes,))
    src = {"broadcast": a, "shuffle": a, "shuffle_xor": lane ^ a,
           "shuffle_up": lane - a, "shuffle_down": lane + a}[op]
    ok = (src >= 0) & (src < PLANE_DIM)
    read = grid[row * PLANE_DIM + np.where(ok, src, 0)]
    if op in ("shuffle_up", "shuffle_down"):
        return np.where(ok, read, v)
    return np.where(ok, read, np.zeros((), dtype))
