"""The warpgroup matrix multiply (cmma.wg_mma) on the cpu runtime, in numpy.

A warpgroup is 128 consecutive units of a cube (4 planes); its accumulator is one
cpu_cmma.Fragment per warpgroup (64 x n f32), so cmma.fill and cmma.store are
cpu_cmma's, run over warpgroups instead of planes. A multiply reads A (64 x k) and B
(k x n; k 16, or 32 for 8-bit floats) from shared memory through the descriptor rules
of wgmma_layout.py (the strides the CUDA code generator writes into wgmma's
descriptors, and with the 128-byte swizzle the address bits it XORs), so a tile stored
in another layout gives the same wrong product here as on the GPU.

wgmma is asynchronous on a GPU: its accumulator may only be read or written again after
wg_commit and a wg_wait that retires its group. Later multiplies into it need no wait:
PTX orders the accumulator accesses of wgmma instructions of one shape (a pipelined
loop keeps one group running while it issues the next). The emulation multiplies at
once but keeps the books: cmma.fill or cmma.store touching an accumulator whose latest
multiply is not retired is a LaunchError (undefined on a GPU). Every
unit of a warpgroup must take part in each call with the same arguments, as in cpu_cmma.
"""
from __future__ import annotations

import numpy as np

from ..errors import LaunchError
from ..wgmma_layout import ELEMENT_BYTES, element_offsets, line_elems
from .cpu_cmma import Fragment, Planes

WARPGROUP = 128


class Warpgroups(Planes):
    """The warpgroups of one batch, and each one's count of committed and retired
    groups of multiplies."""

    def __init__(self, unit: np.ndarray, cube: np.ndarray, cubes: int, units: int):
        if units % WARPGROUP:
            raise LaunchError(f"a warpgroup multiply needs the cube's units in whole "
                              f"warpgroups of {WARPGROUP}; the cube has {units}")
        super().__init__(unit, cube, cubes, units, WARPGROUP)
        self.committed = np.zeros(self.count, np.int64)
        self.retired = np.zeros(self.count, np.int64)


class Accumulator(Fragment):
    """A cmma.WarpgroupAccumulator of every warpgroup; `group` is the group number of
    each warpgroup's latest multiply into it (retired once <= Warpgroups.retired)."""

    def __init__(self, wgs: Warpgroups, width: int, name: str):
        super().__init__(wgs, 64, width, "f32", None, name)
        self.group = np.zeros(wgs.count, np.int64)


def ready(wgs: Warpgroups, acc: Accumulator, mask, what: str) -> None:
    """A LaunchError when a warpgroup reaching `what` has a multiply into `acc` that no
    wg_commit / wg_wait retired."""
    groups, _ = wgs.active(mask, what)
    busy = acc.group[groups] > wgs.retired[groups]
    if busy.any():
        raise LaunchError(f"{what}: {acc.name!r} is read or written while a cmma.wg_mma "
                          f"into it may still run: wg_commit() and wg_wait() first")


def _operand(wgs: Warpgroups, groups, buf, shared_size: int, offset, rows: int,
             operand: str, layout: str, outer: int, inner: int, what: str,
             swizzle: int = 0, fp8: str | None = None) -> np.ndarray:
    """(groups, outer, inner) float32 values of A (m x k) or B (n x k) read through the
    descriptor (with `swizzle`, through the swizzled addresses: the shared array starts
    1024-byte aligned, as CUDA declares it). `fp8` names the 8-bit type whose bits the
    array holds."""
    elem_bytes = 1 if fp8 else ELEMENT_BYTES
    line = line_elems(elem_bytes)
    if np.any(offset % line):
        raise LaunchError(f"{what}: the {operand.upper()} tile starts at element "
                          f"{int(offset[offset % line != 0][0])}, not a multiple of {line} "
                          f"(16 bytes, the descriptor's unit)")
    idx = element_offsets(operand, rows, layout, outer, inner, offset.astype(np.int64),
                          swizzle, elem_bytes)
    if (idx < 0).any() or (idx >= shared_size).any():
        raise LaunchError(f"{what}: the {operand.upper()} tile reaches past the end of its "
                          f"shared array ({shared_size} elements)")
    cube = (groups // wgs.per_cube)[:, None, None]
    values = buf[cube * shared_size + idx]
    if fp8:
        from ..fp8 import decode
        return decode(values, fp8)
    return values.astype(np.float32)


def mma(wgs: Warpgroups, acc: Accumulator, a, a_size: int, a_offset, a_rows: int, b,
        b_size: int, b_offset, b_rows: int, b_layout: str, mask, what: str,
        swizzle: int = 0, fp8: tuple[str, str] | None = None) -> None:
    """acc += A @ B for the warpgroups of `mask` (k 16; 32 with `fp8`, the 8-bit types
    of A and B, whose shared arrays hold their bits)."""
    groups, first = wgs.active(mask, what)
    if groups.size == 0:
        return
    a_off = wgs.uniform(a_offset, mask, groups, first, what, "A offset")
    b_off = wgs.uniform(b_offset, mask, groups, first, what, "B offset")
    # the group this multiply joins; a running earlier group's multiplies into `acc`
    # come first on a GPU too (one shape per accumulator), so they need no wait
    current = wgs.committed[groups] + 1
    k = 32 if fp8 else 16  # 32 bytes of k per multiply
    av = _operand(wgs, groups, a, a_size, a_off, a_rows, "a", "row_major", 64, k, what,
                  swizzle, fp8 and fp8[0])
    bt = _operand(wgs, groups, b, b_size, b_off, b_rows, "b", b_layout, acc.cols, k,
                  what, swizzle, fp8 and fp8[1])  # B transposed: n x k
    acc.tiles[groups, 0] += np.matmul(av, bt.transpose(0, 2, 1))
    acc.group[groups] = current


def sync(wgs: Warpgroups, op: str, pending: int, mask, what: str) -> None:
    groups, _ = wgs.active(mask, what)
    if op == "commit":
        wgs.committed[groups] += 1
    elif op == "wait":
        wgs.retired[groups] = np.maximum(wgs.retired[groups],
                                         wgs.committed[groups] - pending)
