"""cmma fragments on the cpu runtime: an emulation of a plane's matrix unit in numpy.

A plane is PLANE_DIM consecutive units of a cube (as in cpu_plane.py). Each plane of the
batch holds one copy of every fragment (what all its lanes hold together on a GPU), as
float32 tiles of rows x cols (an array of fragments: count tiles). A cmma statement runs
once per plane that reaches it, with the arguments of the plane's units, which must be
the same on every unit (a LaunchError otherwise, and when only some units of a plane
reach it: on a GPU both are undefined behaviour).

- load reads the tile at `offset + row * stride + col` (row major) or `offset + col *
  stride + row` (col major); elements outside the buffer read 0, as every cpu access
  does (CUDA and Metal check nothing: the tile must lie inside the buffer);
- execute computes a @ b + c in float32 (f16, bf16 and tf32 inputs are exact in it);
- an f16 accumulator rounds every result to f16, a tf32 load rounds f32 to tf32 (10
  mantissa bits, to nearest with ties away from zero, as CUDA's cvt.rna.tf32.f32);
- store writes the tile in the buffer's type; elements outside the buffer are dropped;
- in an unchecked launch (`aligned`), a tile CUDA's wmma could not access directly is a
  LaunchError, so the bug shows on cpu: its first element must lie at a multiple of 32
  bytes (offset * element size) and its stride be a multiple of 16 bytes. (A checked
  CUDA launch stages tiles through shared memory and takes any offset and stride.)
"""
from __future__ import annotations

import numpy as np

from ..errors import LaunchError
from ..targets import WMMA_STRIDE_ALIGN, WMMA_TILE_ALIGN
from .cpu_plane import PLANE_DIM


def round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to TensorFloat-32 (10 explicit mantissa bits), to nearest with
    ties away from zero, as CUDA's __float_to_tf32 (PTX cvt.rna.tf32.f32); NaN and inf
    unchanged. Adding half a tf32 ulp to the magnitude's bits and dropping the low 13
    rounds so (a carry into the exponent is the next binade, or inf)."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & ~np.uint64(0x1FFF)).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isfinite(x), out, x).astype(np.float32)


def _rounded(values: np.ndarray, elem: str) -> np.ndarray:
    """Values held by a fragment of `elem`, as float32."""
    v = np.asarray(values, np.float32)
    if elem == "f16":
        return v.astype(np.float16).astype(np.float32)
    if elem == "tf32":
        return round_tf32(v)
    return v


class Planes:
    """The planes of one batch: which plane each lane is in, and how many units each
    plane has."""

    def __init__(self, unit: np.ndarray, cube: np.ndarray, cubes: int, units: int,
                 size: int = PLANE_DIM):
        # (size: the units of a group; a warpgroup's 128 for cpu_wgmma.py)
        self.per_cube = -(-units // size)
        self.count = cubes * self.per_cube
        self.lanes = unit.shape[0]
        self.row = (np.asarray(cube, np.int64) * self.per_cube
                    + np.asarray(unit, np.int64) // size)
        self.sizes = np.bincount(self.row, minlength=self.count)

    def active(self, mask, what: str) -> tuple[np.ndarray, np.ndarray]:
        """(the planes whose units run the statement, the first such lane of each);
        a LaunchError when only some units of a plane run it."""
        if mask is False:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        lanes = np.arange(self.lanes) if mask is None else np.flatnonzero(mask)
        rows = self.row[lanes]
        counts = np.bincount(rows, minlength=self.count)
        planes = np.flatnonzero(counts)
        if (counts[planes] != self.sizes[planes]).any():
            raise LaunchError(f"{what}: only some units of a plane reached it (every unit "
                              f"of the plane must run a cmma operation together)")
        first = np.full(self.count, -1, np.int64)
        first[rows[::-1]] = lanes[::-1]  # the lowest lane of each plane wins
        return planes, first[planes]

    def uniform(self, value, mask, planes: np.ndarray, first: np.ndarray, what: str,
                arg: str) -> np.ndarray:
        """`value` (a scalar or one per lane) per active plane; a LaunchError when the
        units of a plane disagree."""
        v = np.asarray(value)
        if v.ndim == 0:
            return np.broadcast_to(v, planes.shape)
        per_plane = np.zeros(self.count, v.dtype)
        per_plane[planes] = v[first]
        lanes = np.arange(self.lanes) if mask is None else np.flatnonzero(mask)
        if (v[lanes] != per_plane[self.row[lanes]]).any():
            raise LaunchError(f"{what}: the units of a plane passed different {arg}s "
                              f"(every unit of a plane must pass the same arguments)")
        return per_plane[planes]


class Fragment:
    """One cmma.Matrix (count None) or cmma.Matrices of every plane of a batch."""

    def __init__(self, planes: Planes, rows: int, cols: int, elem: str, count, name: str):
        self.rows, self.cols, self.elem, self.name = rows, cols, elem, name
        self.count = count
        self.tiles = np.zeros((planes.count, count or 1, rows, cols), np.float32)

    def slots(self, pl: Planes, index, mask, planes, first, what: str) -> np.ndarray:
        """Which of its fragments each active plane names."""
        if self.count is None:
            return np.zeros(planes.shape, np.int64)
        i = pl.uniform(index, mask, planes, first, what, "fragment indice").astype(np.int64)
        if ((i < 0) | (i >= self.count)).any():
            raise LaunchError(f"{what}: fragment index out of range for the {self.count} "
                              f"fragments of {self.name!r}")
        return i


def _tile_offsets(rows: int, cols: int, stride: np.ndarray, layout: str) -> np.ndarray:
    """(planes, rows, cols) element offsets of a tile from its first element."""
    r = np.arange(rows, dtype=np.int64)[None, :, None]
    c = np.arange(cols, dtype=np.int64)[None, None, :]
    s = stride.astype(np.int64)[:, None, None]
    return r * s + c if layout == "row_major" else c * s + r


def _addresses(pl: Planes, buf, shared_size, planes, offset, stride, frag: Fragment,
               layout: str):
    """(flat indices into `buf`, which are inside it) of each active plane's tile."""
    idx = offset.astype(np.int64)[:, None, None] + _tile_offsets(frag.rows, frag.cols,
                                                                  stride, layout)
    if shared_size is None:
        return idx, (idx >= 0) & (idx < buf.shape[0])
    ok = (idx >= 0) & (idx < shared_size)
    cube = (planes // pl.per_cube)[:, None, None]
    return cube * shared_size + idx, ok




def _check_alignment(buf, off: np.ndarray, stride: np.ndarray, what: str) -> None:
    """A LaunchError unless every plane's tile meets wmma's alignment rule: its start a
    multiple of 32 bytes, its stride of 16."""
    size = buf.dtype.itemsize
    for values, align, describe in (
            (off, WMMA_TILE_ALIGN, "the tile starts at element {v} ({b} bytes),"),
            (stride, WMMA_STRIDE_ALIGN, "the stride {v} ({b} bytes) is")):
        bad = (values.astype(np.int64) * size) % align != 0
        if bad.any():
            v = int(values[bad][0])
            raise LaunchError(
                f"{what}: {describe.format(v=v, b=v * size)} not a multiple of {align} "
                f"bytes, which CUDA's matrix units need in an unchecked launch (launch() "
                f"moves tiles through an aligned staging tile)")


def fill(pl: Planes, frag: Fragment, index, value, mask, what: str) -> None:
    planes, first = pl.active(mask, what)
    if planes.size == 0:
        return
    slots = frag.slots(pl, index, mask, planes, first, what)
    v = pl.uniform(value, mask, planes, first, what, "value").astype(np.float32)
    frag.tiles[planes, slots] = _rounded(v, frag.elem)[:, None, None]


def scale(pl: Planes, frag: Fragment, index, value, mask, what: str) -> None:
    """Each element times `value` (uniform across each plane), rounded to the fragment's
    type as the device's multiply in that type rounds it."""
    planes, first = pl.active(mask, what)
    if planes.size == 0:
        return
    slots = frag.slots(pl, index, mask, planes, first, what)
    v = pl.uniform(value, mask, planes, first, what, "factor").astype(np.float32)
    frag.tiles[planes, slots] = _rounded(frag.tiles[planes, slots] * v[:, None, None],
                                         frag.elem)


def scale_by(pl: Planes, frag: Fragment, index, buf, shared_size, offset, axis: str, mask,
             what: str, checked: bool) -> None:
    """Row r (`axis` "rows") or column c ("cols") of each tile times buf[offset + r]
    (or c); past the buffer's end a checked launch takes 0 and an unchecked one is a
    LaunchError (the GPU would read whatever lies there)."""
    planes, first = pl.active(mask, what)
    if planes.size == 0:
        return
    slots = frag.slots(pl, index, mask, planes, first, what)
    off = pl.uniform(offset, mask, planes, first, what, "offset").astype(np.int64)
    idx = off[:, None] + np.arange(frag.rows if axis == "rows" else frag.cols)
    limit = buf.shape[0] if shared_size is None else shared_size
    ok = (idx >= 0) & (idx < limit)
    if not checked and not ok.all():
        raise LaunchError(f"{what}: the factors at offset {int(off[0])} run past the "
                          f"buffer's end ({limit} elements)")
    if shared_size is not None:
        idx = (planes // pl.per_cube)[:, None] * shared_size + idx
    f = np.where(ok, buf.take(np.where(ok, idx, 0)), 0).astype(np.float32)
    f = f[:, :, None] if axis == "rows" else f[:, None, :]
    frag.tiles[planes, slots] = _rounded(frag.tiles[planes, slots] * f, frag.elem)


def _tile(pl: Planes, frag: Fragment, index, buf, shared_size, offset, stride,
          layout: str, mask, what: str, aligned: bool):
    """The active planes, their fragment slots, and each tile element's buffer index and
    whether it is in range (None when no plane is active); offset and stride must agree
    across each plane, and (`aligned`) meet wmma's alignment rule."""
    planes, first = pl.active(mask, what)
    if planes.size == 0:
        return None
    slots = frag.slots(pl, index, mask, planes, first, what)
    off = pl.uniform(offset, mask, planes, first, what, "offset")
    st = pl.uniform(stride, mask, planes, first, what, "stride")
    if aligned:
        _check_alignment(buf, off, st, what)
    idx, ok = _addresses(pl, buf, shared_size, planes, off, st, frag, layout)
    return planes, slots, idx, ok


def load(pl: Planes, frag: Fragment, index, buf, shared_size, offset, stride, layout: str,
         mask, what: str, aligned: bool = False) -> None:
    tile = _tile(pl, frag, index, buf, shared_size, offset, stride, layout, mask, what,
                 aligned)
    if tile is None:
        return
    planes, slots, idx, ok = tile
    values = np.where(ok, buf.take(np.where(ok, idx, 0)), 0).astype(np.float32)
    frag.tiles[planes, slots] = _rounded(values, frag.elem)


def store(pl: Planes, buf, shared_size, offset, frag: Fragment, index, stride, layout: str,
          mask, what: str, aligned: bool = False) -> None:
    tile = _tile(pl, frag, index, buf, shared_size, offset, stride, layout, mask, what,
                 aligned)
    if tile is None:
        return
    planes, slots, idx, ok = tile
    buf[idx[ok]] = frag.tiles[planes, slots][ok].astype(buf.dtype)


def execute(pl: Planes, a: Fragment, ai, b: Fragment, bi, c: Fragment, ci, d: Fragment, di,
            mask, what: str) -> None:
    planes, first = pl.active(mask, what)
    if planes.size == 0:
        return
    slot = [f.slots(pl, i, mask, planes, first, what)
            for f, i in ((a, ai), (b, bi), (c, ci), (d, di))]
    product = np.matmul(a.tiles[planes, slot[0]], b.tiles[planes, slot[1]])
    d.tiles[planes, slot[3]] = _rounded(product + c.tiles[planes, slot[2]], d.elem)


def cast(pl: Planes, src: Fragment, si, dst: Fragment, di, mask, what: str) -> None:
    planes, first = pl.active(mask, what)
    if planes.size == 0:
        return
    s = src.slots(pl, si, mask, planes, first, what)
    t = dst.slots(pl, di, mask, planes, first, what)
    dst.tiles[planes, t] = _rounded(src.tiles[planes, s], dst.elem)
