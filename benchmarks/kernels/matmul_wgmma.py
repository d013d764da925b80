"""f16/bf16 matmul on Hopper's warpgroup matrix multiply (`cmma.wg_mma`), f32 accumulation.

A cube of `groups` warpgroups (128 units each) computes a `bm x bn` tile of C = A @ B (A
is M x K, B is K x N, row-major, f16 or bf16; C has the input's type), bm = 64 * groups:
warpgroup w owns rows 64 w .. 64 w + 63 of the tile as one 64 x bn accumulator (bn / 2
f32 registers per unit). Each step stages a bm x bk slice of A and a bk x bn slice of B
in shared memory in wgmma's core-matrix layout (`cmma.wg_offset`: A as an m x k tile,
K-major; B as a k x n tile, MN-major), read from global memory as lines of 8 elements
(16 bytes, one row of a core matrix), and multiplies it with bk / 16 wgmma k16 steps in
one commit group. Two shared copies: the multiplies run asynchronously, so once they
are issued the units store the next slices into the other copy while the tensor cores
work; then wg_wait(0) and one cube barrier per step. The next slices are loaded into
registers right after the issue (the default: the load latency overlaps the multiplies
of one step only, and the lines are not held across them, 50 fewer registers), or with
`ahead` one step earlier (a whole step to arrive; registers held across the multiplies,
which spills with bn = 256).

Pipelined (`asynchronous`, `stages` 3 to 5 shared copies, slice s in copy s % stages):
the slices go from global memory straight into wgmma's layout by asynchronous copies
(`pipeline.memcpy_async`, one 16-byte cp.async per line, no staging registers). A step
waits for its slice's copies (`pipeline.wait(stages - 3)`), passes the cube barrier,
issues the copies of slice s + stages - 2 into copy s - 2, then its multiplies, commits
them and waits with `wg_wait(1)`: only for the previous step's, so each step's
multiplies run while the next step waits, copies and issues. Copy s - 1 may still be
read at the barrier of step s (the other warpgroup's multiplies of step s - 1 are only
waited for after it), so copy s - 2 is the one refilled: stages - 2 slices in flight.
With `refill_after_wait` a second barrier follows wg_wait(1) (every warpgroup is then
done with copy s - 1), and copy s - 1 is refilled there with slice s + stages - 1:
stages - 1 slices in flight for one more barrier per step. Past the end the copies
repeat the last slice into a copy no step reads (branching around cp.async while a
group of multiplies may run makes ptxas serialise them).

With `swizzle` 128 (pipelined, bk = 64) the slices are stored in wgmma's 128-byte
swizzled layout (`cmma.wg_offset(..., 128)`: A's rows of 64 k, B's rows of 64 n in
bn / 64 blocks, 16-byte chunk c of row r at chunk c ^ (r % 8)) and read through
swizzled descriptors: the interleaved core matrices' shared reads by wgmma conflict,
the swizzled ones do not.

The epilogue: each unit stores its accumulator's pairs of adjacent columns straight to
C (4-byte stores, a plane's 32 units touching 8 rows), or, with `epilogue_shared`, the
cube waits for its copies and multiplies (`pipeline.wait(0)`, a barrier), each
warpgroup stores its 64 x bn accumulator into shared memory (the copies of B, when
`stages * bk * bn` elements hold the bm x (bn + 8) tile, else an array of its own; rows
bn + 8 elements apart, so the 8 rows one store instruction touches lie in different
banks), a barrier, and the units copy the tile to C as 16-byte lines, consecutive units
on consecutive lines of a row (a plane writes 512 contiguous bytes with bn = 256).

Tile order: cube (x, y) computes tile (y, x) of C, or, with `group_m` > 0, the cubes
walk the tiles in groups of `group_m` rows of tiles, down each column of the group before
the next (Triton's grouped ordering): the cubes in flight at once then cover a block of
C about as tall as it is wide, and read about half as many bytes of A and B from DRAM as
a wave along one row of tiles, which reads all of B's columns.

Staging order: unit slot `idx` stores line (row, chunk) with row = 8 * (idx / (8 * chunks))
+ idx % 8 and chunk = (idx / 8) % chunks, so the 8 units of a shared-store phase write
the 8 rows of one core matrix (128 contiguous bytes, no bank conflict) and a plane reads
8 rows x 64 contiguous bytes of global memory (asynchronous copies: the same order).

M must be a multiple of bm, N of bn, K a positive multiple of 64 (the launch is
unchecked). CUDA runs it on sm_90 only (compiled for sm_90a); the cpu runtime emulates
it (tests).
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (CUBE_COUNT_X, CUBE_COUNT_Y, CUBE_POS_X, CUBE_POS_Y, UNIT_POS, Comptime, CubeCount, CubeDim, Float,
                    Line, LocalArray, SharedMemory, Tensor, cmma, cube, f32, pipeline,
                    sync_cube, u32, unroll)

from .matmul_tc import launch_tiled, reference  # (the same f64 product checks both)

BK = 64  # the largest K of one step (4 wgmma k16 multiplies): K must be a multiple
WARPGROUP = 128


@cube
def load_line(src: Tensor[Line[Float]], row0: u32, col0: u32, width: u32,
              cols: Comptime[int], units: Comptime[int], p: u32) -> Line[Float]:
    """Line `p * units + UNIT_POS` (in staging order) of the tile `cols` wide of `src`
    at (row0, col0), where `src` is `width` elements wide."""
    idx = p * units + UNIT_POS
    chunks = cols // 8
    row = idx // (8 * chunks) * 8 + idx % 8
    col = (idx // 8) % chunks * 8
    return src[((row0 + row) * width + col0 + col) // 8]


@cube
def stage_line(dst: cubepy.Array[Line[Float]], base: u32, v: Line[Float], rows: Comptime[int],
               cols: Comptime[int], units: Comptime[int], p: u32):
    """Stores line `v`, read by `load_line` with the same arguments, into the tile of
    `rows` rows at line `base` of `dst`, in wgmma's layout (one 16-byte store)."""
    idx = p * units + UNIT_POS
    chunks = cols // 8
    row = idx // (8 * chunks) * 8 + idx % 8
    col = (idx // 8) % chunks * 8
    dst[base + cmma.wg_offset(row, col, rows) // 8] = v


@cube
def copy_line(dst: cubepy.Array[Line[Float]], base: u32, src: Tensor[Line[Float]], row0: u32,
              col0: u32, width: u32, rows: Comptime[int], cols: Comptime[int],
              units: Comptime[int], p: u32, swizzle: Comptime[int]):
    """Starts the asynchronous copy of line `p * units + UNIT_POS` (in staging order) of
    the tile `rows` x `cols` of `src` at (row0, col0), `src` being `width` elements wide,
    into the tile at line `base` of `dst` in wgmma's layout (`swizzle` 0 or 128): what
    `load_line` and `stage_line` do through registers, as one 16-byte cp.async. With the
    swizzle the 8 units of a store phase write chunk c of 8 rows, which lie in 8
    different 16-byte slots (c ^ row % 8): no bank conflict."""
    idx = p * units + UNIT_POS
    chunks = cols // 8
    row = idx // (8 * chunks) * 8 + idx % 8
    col = (idx // 8) % chunks * 8
    pipeline.memcpy_async(dst, base + cmma.wg_offset(row, col, rows, swizzle) // 8,
                          src, ((row0 + row) * width + col0 + col) // 8)


@cube
def copy_slices(a: Tensor[Line[Float]], b: Tensor[Line[Float]], a_s: cubepy.Array[Line[Float]],
                b_s: cubepy.Array[Line[Float]], row0: u32, col0: u32, k0: u32, copy: u32,
                bm: Comptime[int], bn: Comptime[int], bk: Comptime[int],
                units: Comptime[int], swizzle: Comptime[int]):
    """Starts the asynchronous copies of this unit's lines of the slices of A (rows
    row0.., columns k0..) and B (rows k0.., columns col0..) into shared copy `copy`."""
    for p in unroll(range(bm * bk // 8 // units)):
        copy_line(a_s, copy * (bm * bk // 8), a, row0, k0, a.shape(1), bm, bk, units, p,
                  swizzle)
    for p in unroll(range(bk * bn // 8 // units)):
        copy_line(b_s, copy * (bk * bn // 8), b, k0, col0, b.shape(1), bk, bn, units, p,
                  swizzle)


def _config(groups: int, bn: int, bk: int, ahead: bool = False, stages: int = 2,
            asynchronous: bool = False, refill_after_wait: bool = False,
            swizzle: int = 0, epilogue_shared: bool = False, group_m: int = 0) -> dict:
    return {"cube_dim": CubeDim(WARPGROUP * groups), "groups": groups, "bn": bn, "bk": bk,
            "ahead": ahead, "stages": stages, "asynchronous": asynchronous,
            "refill_after_wait": refill_after_wait, "swizzle": swizzle,
            "epilogue_shared": epilogue_shared, "group_m": group_m}


# bm = 64 * groups. Each fits CUDA's 48 KB of static shared memory and compiles without
# spills (ptxas, sm_90a). With bn = 256 a unit holds 128 accumulator registers: bk = 64
# (48 registers of staged lines) spills, as do one warpgroup with bn = 256 and `ahead`
# with bn = 256, whose lines stay live across the multiplies.
CONFIGS = [_config(2, 256, 32), _config(2, 128, 64), _config(2, 128, 32),
           _config(1, 128, 64), _config(2, 128, 64, True), _config(2, 128, 32, True),
           _config(1, 128, 64, True)]
# Pipelined (`asynchronous`): `stages` shared copies filled by cp.async straight from
# global memory (stages - 2 slices in flight ahead of the multiply, one copy read by the
# multiplies still running; stages - 1 with `refill_after_wait`), no staging registers,
# so bn = 256 with bk = 64 fits too (about 190 registers, no spills). Shared memory per
# cube: stages * (bm + bn) * bk * 2 bytes, 80 to 192 KB, beyond 48 KB through the cuda
# runtime's opt-in (autotuning skips what the device cannot give); 96 KB or less lets
# two cubes share an SM.
PIPELINED = [_config(2, 128, 64, stages=3, asynchronous=True),
             _config(2, 128, 64, stages=4, asynchronous=True),
             _config(2, 128, 64, stages=5, asynchronous=True),
             _config(2, 128, 32, stages=5, asynchronous=True),
             _config(2, 256, 64, stages=3, asynchronous=True),
             _config(2, 256, 64, stages=4, asynchronous=True),
             _config(2, 256, 32, stages=5, asynchronous=True),
             _config(1, 256, 64, stages=4, asynchronous=True),
             _config(1, 128, 64, stages=4, asynchronous=True),
             # a second barrier per step, stages - 1 slices in flight
             _config(2, 128, 64, stages=3, asynchronous=True, refill_after_wait=True),
             _config(2, 128, 64, stages=4, asynchronous=True, refill_after_wait=True),
             _config(2, 256, 64, stages=3, asynchronous=True, refill_after_wait=True),
             _config(2, 256, 64, stages=4, asynchronous=True, refill_after_wait=True)]
# Pipelined with the 128-byte swizzle (bk 64: a row of a slice is one 128-byte swizzle
# row; A K-major, B MN-major in blocks of 64 columns), whose shared reads by wgmma do
# not conflict as the interleaved core matrices' do.
SWIZZLED = [_config(2, 128, 64, stages=3, asynchronous=True, swizzle=128),
            _config(2, 128, 64, stages=4, asynchronous=True, swizzle=128),
            _config(2, 256, 64, stages=3, asynchronous=True, swizzle=128),
            _config(2, 256, 64, stages=4, asynchronous=True, swizzle=128),
            _config(2, 128, 64, stages=4, asynchronous=True, refill_after_wait=True,
                    swizzle=128),
            _config(2, 256, 64, stages=4, asynchronous=True, refill_after_wait=True,
                    swizzle=128)]
PIPELINED += SWIZZLED
CONFIGS += PIPELINED
# The swizzled pipelined ones with the shared-memory epilogue (`epilogue_shared`): the
# tile goes out through the pipeline's shared copies of B as coalesced 16-byte lines
# (no more shared memory; 200 registers with bn = 256, 116-118 with 128, no spills).
EPILOGUE_SHARED = [_config(2, 256, 64, stages=4, asynchronous=True, swizzle=128,
                           epilogue_shared=True),
                   _config(2, 256, 64, stages=3, asynchronous=True, swizzle=128,
                           epilogue_shared=True),
                   _config(2, 128, 64, stages=3, asynchronous=True, swizzle=128,
                           epilogue_shared=True),
                   _config(2, 128, 64, stages=4, asynchronous=True, swizzle=128,
                           epilogue_shared=True)]
SWIZZLED += EPILOGUE_SHARED
PIPELINED += EPILOGUE_SHARED
CONFIGS += EPILOGUE_SHARED
# The best of those with the cubes' tiles in groups of `group_m` tile rows
# (`grouped_tile`): at 8192^3 a wave of cubes then reads about half the bytes of A and B
# from DRAM that a wave walking along rows of tiles reads (6-12% faster on an H200).
GROUPED = [_config(2, 256, 64, stages=4, asynchronous=True, swizzle=128,
                   epilogue_shared=True, group_m=8),
           _config(2, 256, 64, stages=4, asynchronous=True, swizzle=128,
                   epilogue_shared=True, group_m=16),
           _config(2, 256, 64, stages=4, asynchronous=True, swizzle=128, group_m=16)]
SWIZZLED += GROUPED
PIPELINED += GROUPED
CONFIGS += GROUPED


@cube
def load_slices(a: Tensor[Line[Float]], b: Tensor[Line[Float]], pa: cubepy.Array[Line[Float]],
                pb: cubepy.Array[Line[Float]], row0: u32, col0: u32, k0: u32,
                bm: Comptime[int], bn: Comptime[int], bk: Comptime[int],
                units: Comptime[int]):
    """This unit's lines of the slices of A (rows row0.., columns k0..) and B (rows k0..,
    columns col0..) into registers."""
    for p in unroll(range(bm * bk // 8 // units)):
        pa[p] = load_line(a, row0, k0, a.shape(1), bk, units, p)
    for p in unroll(range(bk * bn // 8 // units)):
        pb[p] = load_line(b, k0, col0, b.shape(1), bn, units, p)


@cube
def stage_slices(a_s: cubepy.Array[Line[Float]], b_s: cubepy.Array[Line[Float]],
                 pa: cubepy.Array[Line[Float]], pb: cubepy.Array[Line[Float]], copy: u32,
                 bm: Comptime[int], bn: Comptime[int], bk: Comptime[int],
                 units: Comptime[int]):
    """The lines `load_slices` read, into shared copy `copy` (0 or 1) in wgmma's layout."""
    for p in unroll(range(bm * bk // 8 // units)):
        stage_line(a_s, copy * (bm * bk // 8), pa[p], bm, bk, units, p)
    for p in unroll(range(bk * bn // 8 // units)):
        stage_line(b_s, copy * (bk * bn // 8), pb[p], bk, bn, units, p)


@cube
def copy_tile_out(c: Tensor[Line[Float]], tile: cubepy.Array[Line[Float]], row0: u32,
                  col0: u32, n: u32, rows: Comptime[int], cols: Comptime[int],
                  pitch: Comptime[int], units: Comptime[int]):
    """Copies the `rows` x `cols` tile held in `tile` (lines of 8, rows `pitch` elements
    apart) to c at (row0, col0), c being `n` elements wide: consecutive units on
    consecutive lines of c's rows (coalesced: a plane writes 512 contiguous bytes of
    f16 with cols = 256, two rows of 256 with 128). Lines of c of other sizes than 8 are
    gathered from the tile element by element."""
    size = c.line_size()
    per_row = cols // size
    for p in unroll(range(rows * per_row // units)):
        idx = p * units + UNIT_POS
        row = idx // per_row
        col = idx % per_row * size
        at = row * pitch + col
        if size == 8:
            c[((row0 + row) * n + col0 + col) // 8] = tile[at // 8]
        else:
            v = Line.fill(tile[at // 8][at % 8], size)
            for e in unroll(range(1, size)):
                v[e] = tile[(at + e) // 8][(at + e) % 8]
            c[((row0 + row) * n + col0 + col) // size] = v


@cube
def grouped_tile(group_m: Comptime[int], bm: Comptime[int], bn: Comptime[int]):
    """The (row, column) of C where this cube's tile starts when consecutive cubes walk
    down `group_m` rows of tiles before moving one tile column on (in-flight cubes then
    share their slices of A and of B through L2, instead of every cube of a wave reading
    its own column of B)."""
    tiles_n = CUBE_COUNT_X
    pid = CUBE_POS_Y * tiles_n + CUBE_POS_X
    per_group = group_m * tiles_n
    first = pid // per_group * group_m
    rows = min(CUBE_COUNT_Y - first, u32(group_m))
    return (first + pid % per_group % rows) * bm, pid % per_group // rows * bn


@cubepy.autotune(configs=CONFIGS, key=["a", "b"])
@cube(launch=True)
def matmul_wgmma(a: Tensor[Line[Float]], b: Tensor[Line[Float]], c: Tensor[Line[Float]],
                 groups: Comptime[int], bn: Comptime[int], bk: Comptime[int],
                 ahead: Comptime[bool], stages: Comptime[int], asynchronous: Comptime[bool],
                 refill_after_wait: Comptime[bool], swizzle: Comptime[int],
                 epilogue_shared: Comptime[bool], group_m: Comptime[int]):
    """c = a @ b for row-major f16/bf16 matrices (a and b with line size 8, c with 8 or
    any: the accumulator store counts elements; the shared epilogue's lines are c's),
    f32 accumulation, `groups` warpgroups per cube each computing 64 x bn of C, K in
    steps of `bk` (32 or 64). `ahead`: the lines of step s + 2 are loaded during step s
    and staged during step s + 1 (a whole step to arrive, registers held across the
    multiplies); else those of step s + 1 are loaded and staged during step s (two
    shared copies, `stages` 2). `asynchronous`: `stages` (3 to 5) shared copies filled
    by asynchronous copies, each step's multiplies left running while the next step's
    are issued, `stages - 2` slices in flight, or `stages - 1` with
    `refill_after_wait` (a second barrier per step; the module docstring has both).
    `swizzle` (asynchronous with bk = 64 only): 0 for wgmma's core-matrix layout, 128
    for its 128-byte swizzle. `epilogue_shared`: each warpgroup stores its accumulator
    into shared memory (the copies of B when large enough), then the cube copies the
    tile to c as lines (coalesced), instead of each unit storing its own pairs of
    elements straight to c."""
    k_len = a.shape(1)
    n = b.shape(1)
    bm = 64 * groups
    units = WARPGROUP * groups
    a_elems = bm * bk  # one slice of A, of B, in elements
    b_elems = bk * bn
    a_s = SharedMemory(Line[Float], stages * a_elems // 8, 8)
    b_s = SharedMemory(Line[Float], stages * b_elems // 8, 8)
    acc = cmma.WarpgroupAccumulator(bn, f32)
    cmma.fill(acc, 0.0)
    wg = UNIT_POS // WARPGROUP
    row0 = CUBE_POS_Y * bm
    col0 = CUBE_POS_X * bn
    if group_m > 0:
        row0, col0 = grouped_tile(group_m, bm, bn)
    if asynchronous:
        # `stages` copies: slice s in copy s % stages. At step s the multiplies of step
        # s - 1 may still be running (wg_wait(1)) and read copy s - 1; those of step s - 2
        # are done in every warpgroup (each waited for them before this step's barrier),
        # so copy s - 2 is refilled, with slice s + stages - 2, after the barrier:
        # stages - 2 slices in flight ahead of the multiply, one barrier per step. With
        # `refill_after_wait` a second barrier after wg_wait(1) (every warpgroup done
        # with copy s - 1) lets copy s - 1 be refilled: stages - 1 in flight.
        # Every copy is issued unconditionally: past the end the last slice again, into
        # a copy no later step reads (ptxas serialises the wgmmas when a branch skips
        # cp.async while a group may run: warning C7514).
        steps = k_len // bk
        last = steps - 1
        for s in unroll(range(stages - 2)):  # the prologue: the slices in flight ahead
            copy_slices(a, b, a_s, b_s, row0, col0, min(u32(s), last) * bk, s, bm, bn, bk,
                        units, swizzle)
            pipeline.commit()  # one group per slice
        if refill_after_wait:
            copy_slices(a, b, a_s, b_s, row0, col0, min(u32(stages - 2), last) * bk,
                        stages - 2, bm, bn, bk, units, swizzle)
            pipeline.commit()
        for step in range(steps):
            # this unit's copies of slice `step` have landed
            if refill_after_wait:
                pipeline.wait(stages - 2)
            else:
                pipeline.wait(stages - 3)
            sync_cube()  # everyone's have, and every warpgroup is done with copy step - 2
            if not refill_after_wait:
                fill = step + stages - 2
                copy_slices(a, b, a_s, b_s, row0, col0, min(fill, last) * bk, fill % stages,
                            bm, bn, bk, units, swizzle)
                pipeline.commit()
            cur = step % stages
            cmma.wg_fence()
            for kk in unroll(range(bk // 16)):
                cmma.wg_mma(acc, a_s,
                            cur * a_elems + cmma.wg_offset(wg * 64, kk * 16, bm, swizzle),
                            bm, b_s, cur * b_elems + cmma.wg_offset(kk * 16, 0, bk, swizzle),
                            bk, cmma.ROW_MAJOR, swizzle)
            cmma.wg_commit()
            cmma.wg_wait(1)  # the multiplies of step - 1 are done: copy step - 1 is free
            if refill_after_wait:
                sync_cube()  # in every warpgroup
                fill = step + stages - 1
                copy_slices(a, b, a_s, b_s, row0, col0, min(fill, last) * bk, fill % stages,
                            bm, bn, bk, units, swizzle)
                pipeline.commit()
        cmma.wg_wait(0)
    else:  # through registers, two shared copies
        pa = LocalArray(Line[Float], bm * bk // 8 // units, 8)
        pb = LocalArray(Line[Float], bk * bn // 8 // units, 8)
        load_slices(a, b, pa, pb, row0, col0, 0, bm, bn, bk, units)
        stage_slices(a_s, b_s, pa, pb, 0, bm, bn, bk, units)
        if ahead and bk < k_len:
            load_slices(a, b, pa, pb, row0, col0, bk, bm, bn, bk, units)
        sync_cube()
        for k0 in range(0, k_len, bk):
            cur = k0 // bk % 2  # the shared copy holding this step's slices
            cmma.wg_fence()
            for kk in unroll(range(bk // 16)):
                cmma.wg_mma(acc, a_s, cur * a_elems + cmma.wg_offset(wg * 64, kk * 16, bm), bm,
                            b_s, cur * b_elems + cmma.wg_offset(kk * 16, 0, bk), bk,
                            cmma.ROW_MAJOR)
            cmma.wg_commit()
            # while the multiplies run: the next slices into the other copy, which the last
            # step's multiplies (waited for) read
            if k0 + bk < k_len:
                if not ahead:
                    load_slices(a, b, pa, pb, row0, col0, k0 + bk, bm, bn, bk, units)
                stage_slices(a_s, b_s, pa, pb, 1 - cur, bm, bn, bk, units)
                if ahead and k0 + 2 * bk < k_len:
                    load_slices(a, b, pa, pb, row0, col0, k0 + 2 * bk, bm, bn, bk, units)
            cmma.wg_wait(0)
            sync_cube()
    # the shared epilogue's rows bn + 8 elements apart: the 8 rows of one store
    # instruction start 16 bytes further on in the banks each, so its 8 x 16 bytes (4
    # units' pairs a row) fall in different banks
    pitch = bn + 8
    if epilogue_shared:
        if asynchronous:
            pipeline.wait(0)  # the copies past the end still write the shared copies
        sync_cube()  # and every warpgroup's multiplies are done reading them
        if stages * b_elems >= bm * pitch:  # the tile in the copies of B
            cmma.store(b_s, wg * 64 * pitch, acc, pitch, cmma.ROW_MAJOR)
            sync_cube()
            copy_tile_out(c, b_s, row0, col0, n, bm, bn, pitch, units)
        else:
            tile = SharedMemory(Line[Float], bm * pitch // 8, 8)
            cmma.store(tile, wg * 64 * pitch, acc, pitch, cmma.ROW_MAJOR)
            sync_cube()
            copy_tile_out(c, tile, row0, col0, n, bm, bn, pitch, units)
    else:
        cmma.store(c, (row0 + wg * 64) * n + col0, acc, n, cmma.ROW_MAJOR)


def cube_count(m: int, n: int):
    """The cube count for a config: one cube per (64 * groups) x bn tile of C."""
    return lambda cfg: CubeCount(n // cfg["bn"], m // (64 * cfg["groups"]))


def run(client, a, b, c, config: dict | None = None) -> None:
    """c = a @ b on the device (a and b with line size 8; c is seen with 8) with the
    autotuned config, or `config`. M and N must be multiples of 256 (covers every
    config), K a positive multiple of 64."""
    m, k = a.shape
    n = b.shape[1]
    if m % 256 or n % 256 or k % BK or k == 0:
        raise ValueError(f"matmul_wgmma: M = {m} and N = {n} must be multiples of 256, "
                         f"K = {k} a positive multiple of {BK}")
    c = c.with_line_size(8)  # the shared epilogue's 16-byte lines
    launch_tiled(matmul_wgmma, client, cube_count(m, n), config, a, b, c)


def example(client, m: int = 256, n: int = 256, k: int = 128, seed: int = 0,
            config: dict | None = None) -> None:
    """Runs the kernel in f16 at a small size and checks it against numpy (raises if
    wrong)."""
    rng = np.random.default_rng(seed)
    a_h = rng.standard_normal((m, k)).astype(np.float16)
    b_h = rng.standard_normal((k, n)).astype(np.float16)
    a = client.tensor(a_h).with_line_size(8)
    b = client.tensor(b_h).with_line_size(8)
    c = client.zeros((m, n), cubepy.f16)
    run(client, a, b, c, config=config)
    got = c.numpy().astype(np.float64)
    np.testing.assert_allclose(got, reference(a_h, b_h), rtol=1e-2, atol=2e-2 * k ** 0.5)


if __name__ == "__main__":
    example(cubepy.client())
    print("matmul_wgmma: OK")
