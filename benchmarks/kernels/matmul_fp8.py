"""8-bit float matmul on Hopper's warpgroup multiply: C = A @ B.T with A (M x K) and B
(N x K) row-major e4m3 or e5m2, f32 accumulation, C f32, f16 or bf16. B is given N x K
(K contiguous) because wgmma reads 8-bit tiles K-major only; it is the layout
torch._scaled_mm wants for its second operand (`b.t()` of a row-major N x K tensor).

A cube of `groups` warpgroups computes a bm x bn tile of C, bm = 64 * groups, as one
64 x bn accumulator per warpgroup. K goes in steps of bk = 128 (128 bytes: a row of
wgmma's 128-byte swizzled layout): each step's slices of A (bm x 128) and B (bn x 128)
arrive in shared memory by asynchronous copies, one 16-byte cp.async per line of 16
elements, straight into the swizzled layout (`cmma.wg_offset(..., 128, elem)`: chunk c of
row r at chunk c ^ (r % 8); eight units storing one row's eight chunks hit eight
different 16-byte slots, no bank conflict), and are multiplied by four k32 wgmmas.
`stages` shared copies: slice s in copy s % stages, stages - 2 slices in flight ahead of
the multiply, each step's multiplies left running (wg_wait(1)) while the next step
waits, copies and issues (benchmarks/kernels/matmul_wgmma.py's pipeline, whose module
docstring explains the one barrier per step). Each unit stores its accumulator's pairs
of columns straight to C, or (`epilogue_shared`) the tile goes out through shared memory
as 16-byte lines. Before that the accumulator is multiplied by the scales, in device
memory as torch._scaled_mm takes them: per tensor (one f32 each: C = scale_a * scale_b *
(A @ B.T), `cmma.scale`), or row-wise (`rowwise`: scale_a one f32 per row of A, scale_b
one per row of B, i.e. per column of C: C[i, j] = scale_a[i] * scale_b[j] * (A @ B.T)[i,
j], `cmma.scale_rows` and `cmma.scale_cols`): the dequantized product of A and B
quantized with those scales. With `group_m` the cubes walk the tiles in groups of that
many tile rows (Triton's grouped order), so a wave reads less of A and B from DRAM.

M must be a multiple of bm, N of bn, K a positive multiple of 128 (the launch is
unchecked). CUDA runs it on sm_90 (compiled for sm_90a); the cpu runtime emulates it.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

import cubepy
from cubepy import (CUBE_POS_X, CUBE_POS_Y, UNIT_POS, Comptime, CubeDim, Float,
                    Line, SharedMemory, Tensor, cmma, cube, f32, pipeline, sync_cube, u32,
                    unroll)

from .matmul_tc import launch_tiled
from .matmul_wgmma import copy_tile_out, cube_count, grouped_tile  # (the same tiles)

BK = 128  # K per step: one 128-byte row of the swizzled layout; K must be a multiple
LINE = 16  # elements per line: 16 bytes, one cp.async
WARPGROUP = 128
SWIZZLE = 128
if TYPE_CHECKING:  # a checker sees a placeholder class (docs/LANGUAGE.md)
    F8A = cubepy.Float
    F8B = cubepy.Float
else:  # A's and B's 8-bit types, each e4m3 or e5m2
    F8A = cubepy.generic("F8A", [cubepy.e4m3, cubepy.e5m2])
    F8B = cubepy.generic("F8B", [cubepy.e4m3, cubepy.e5m2])


@cube
def copy_line(dst: cubepy.Array[Line[F8A]], base: u32, src: Tensor[Line[F8A]], row0: u32,
              k0: u32, width: u32, rows: Comptime[int], units: Comptime[int], p: u32):
    """Starts the asynchronous copy of line `p * units + UNIT_POS` of the rows x 128 slice
    of `src` at (row0, k0), `src` being `width` elements wide, into the swizzled tile at
    line `base` of `dst`: eight consecutive units copy one row (128 contiguous bytes of
    global memory), a plane four rows."""
    idx = p * units + UNIT_POS
    row = idx // (BK // LINE)
    col = idx % (BK // LINE) * LINE
    pipeline.memcpy_async(dst, base + cmma.wg_offset(row, col, rows, SWIZZLE, F8A) // LINE,
                          src, ((row0 + row) * width + k0 + col) // LINE)


@cube
def copy_slices(a: Tensor[Line[F8A]], b: Tensor[Line[F8B]], a_s: cubepy.Array[Line[F8A]],
                b_s: cubepy.Array[Line[F8B]], row0: u32, col0: u32, k0: u32, copy: u32,
                bm: Comptime[int], bn: Comptime[int], units: Comptime[int]):
    """This unit's asynchronous copies of the slices of A (rows row0..) and B (rows
    col0..), columns k0..k0 + 127, into shared copy `copy`."""
    for p in unroll(range(bm * BK // LINE // units)):
        copy_line(a_s, copy * (bm * BK // LINE), a, row0, k0, a.shape(1), bm, units, p)
    for p in unroll(range(bn * BK // LINE // units)):
        copy_line(b_s, copy * (bn * BK // LINE), b, col0, k0, b.shape(1), bn, units, p)


def _config(groups: int, bn: int, stages: int, group_m: int = 0,
            epilogue_shared: bool = False) -> dict:
    return {"cube_dim": CubeDim(WARPGROUP * groups), "groups": groups, "bn": bn,
            "stages": stages, "group_m": group_m, "epilogue_shared": epilogue_shared}


# Shared memory per cube: stages * (bm + bn) * 128 bytes (bm 128, bn 256: 48 KB a stage),
# and with the shared epilogue bm * (bn + 8) elements of C more (66 KB for 128 x 256 bf16).
CONFIGS = [_config(2, 256, 4), _config(2, 256, 3), _config(2, 128, 4), _config(2, 128, 5),
           _config(1, 256, 4), _config(2, 256, 4, group_m=8), _config(2, 256, 3, group_m=8),
           _config(2, 256, 3, epilogue_shared=True), _config(2, 128, 4, epilogue_shared=True),
           _config(2, 256, 3, group_m=8, epilogue_shared=True)]


@cubepy.autotune(configs=CONFIGS, key=["a", "b", "c", "rowwise"])
@cube(launch=True)
def matmul_fp8(a: Tensor[Line[F8A]], b: Tensor[Line[F8B]], c: Tensor[Line[Float]],
               scale_a: Tensor[f32], scale_b: Tensor[f32], rowwise: Comptime[bool],
               groups: Comptime[int], bn: Comptime[int], stages: Comptime[int],
               group_m: Comptime[int], epilogue_shared: Comptime[bool]):
    """c = scale_a[0] * scale_b[0] * (a @ b.T) (`rowwise`: scale_a[i] * scale_b[j] for
    element (i, j)) for row-major 8-bit a (M x K) and b (N x K), both with line size 16,
    f32 accumulation, c (M x N) f32, f16 or bf16 (line size 8): `groups` warpgroups per
    cube each computing 64 x bn of C, `stages` shared copies of the slices (module
    docstring); `epilogue_shared`: the accumulators go to C through shared memory as
    16-byte lines (matmul_wgmma's), else each unit stores its pairs of columns."""
    k_len = a.shape(1)
    n = b.shape(0)
    bm = 64 * groups
    units = WARPGROUP * groups
    a_elems = bm * BK  # one slice of A, of B, in elements (bytes)
    b_elems = bn * BK
    a_s = SharedMemory(Line[F8A], stages * a_elems // LINE, LINE)
    b_s = SharedMemory(Line[F8B], stages * b_elems // LINE, LINE)
    acc = cmma.WarpgroupAccumulator(bn, f32)
    cmma.fill(acc, 0.0)
    wg = UNIT_POS // WARPGROUP
    row0 = CUBE_POS_Y * bm
    col0 = CUBE_POS_X * bn
    if group_m > 0:
        row0, col0 = grouped_tile(group_m, bm, bn)
    steps = k_len // BK
    last = steps - 1
    # every copy is issued unconditionally (past the end the last slice again, into a
    # copy no later step reads): ptxas serialises the wgmmas when a branch skips cp.async
    for s in unroll(range(stages - 2)):  # the prologue: the slices in flight ahead
        copy_slices(a, b, a_s, b_s, row0, col0, min(u32(s), last) * BK, s, bm, bn, units)
        pipeline.commit()
    for step in range(steps):
        pipeline.wait(stages - 3)  # this unit's copies of slice `step` have landed
        sync_cube()  # everyone's have, and every warpgroup is done with copy step - 2
        fill = step + stages - 2
        copy_slices(a, b, a_s, b_s, row0, col0, min(fill, last) * BK, fill % stages, bm, bn,
                    units)
        pipeline.commit()
        cur = step % stages
        cmma.wg_fence()
        for kk in unroll(range(BK // 32)):
            cmma.wg_mma(acc, a_s, cur * a_elems + cmma.wg_offset(wg * 64, kk * 32, bm,
                                                                 SWIZZLE, F8A), bm,
                        b_s, cur * b_elems + cmma.wg_offset(0, kk * 32, bn, SWIZZLE, F8B),
                        bn, cmma.COL_MAJOR, SWIZZLE)
        cmma.wg_commit()
        cmma.wg_wait(1)  # the multiplies of step - 1 are done: copy step - 1 is free
    cmma.wg_wait(0)
    if rowwise:
        cmma.scale_rows(acc, scale_a, row0 + wg * 64)
        cmma.scale_cols(acc, scale_b, col0)
    else:
        cmma.scale(acc, scale_a[0] * scale_b[0])
    pipeline.wait(0)  # (the copies past the end)
    pitch = bn + 8  # the shared tile's rows: a store instruction's 8 rows in other banks
    if epilogue_shared:
        tile = SharedMemory(Line[Float], bm * pitch // 8, 8)
        cmma.store(tile, wg * 64 * pitch, acc, pitch, cmma.ROW_MAJOR)
        sync_cube()
        copy_tile_out(c, tile, row0, col0, n, bm, bn, pitch, units)
    else:
        cmma.store(c, (row0 + wg * 64) * n + col0, acc, n, cmma.ROW_MAJOR)


_ONES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # client -> [1.0]


def run(client, a, b, c, config: dict | None = None, scale_a=None, scale_b=None) -> None:
    """c = scale_a * scale_b * (a @ b.T) on the device (a: M x K, b: N x K, both 8-bit
    with line size 16) with the autotuned config, or `config`. M and N must be multiples
    of 256 (covers every config), K a positive multiple of 128. The scales are f32
    tensors on the client's device (any array its kernels take, as torch._scaled_mm's
    scale_a and scale_b), 1 when None: one element each (per tensor), or M and N
    elements, contiguous (row-wise: shapes (M, 1) and (1, N) in torch's terms, or 1-D)."""
    m, k = a.shape
    n = b.shape[0]
    if m % 256 or n % 256 or k % BK or k == 0 or b.shape[1] != k:
        raise ValueError(f"matmul_fp8 needs M, N multiples of 256 and K of {BK}: "
                         f"a {a.shape}, b {b.shape}")
    sizes = [1 if s is None else int(np.prod(s.shape)) for s in (scale_a, scale_b)]
    rowwise = sizes != [1, 1]
    if rowwise and sizes != [m, n]:
        raise ValueError(f"matmul_fp8 takes per-tensor scales (one element each) or "
                         f"row-wise ones (M = {m} and N = {n} elements): scale_a has "
                         f"{sizes[0]}, scale_b {sizes[1]}")
    for name, scale in (("scale_a", scale_a), ("scale_b", scale_b)):
        if rowwise and not scale.is_contiguous():
            raise ValueError(f"matmul_fp8: the row-wise {name} must be contiguous")
    if scale_a is None or scale_b is None:
        one = _ONES.get(client)
        if one is None:
            one = _ONES[client] = client.tensor(np.ones(1, np.float32))
        scale_a = one if scale_a is None else scale_a
        scale_b = one if scale_b is None else scale_b
    c = c.with_line_size(8)  # the shared epilogue's 16-byte lines
    launch_tiled(matmul_fp8, client, cube_count(m, n), config, a, b, c, scale_a, scale_b,
                 rowwise)


def reference(a: np.ndarray, b: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """scale * (a @ b.T) in float64 (a and b hold the 8-bit values as floats)."""
    return scale * (a.astype(np.float64) @ b.astype(np.float64).T)


def example(client, m: int = 256, n: int = 256, k: int = 256, seed: int = 0,
            config: dict | None = None) -> None:
    """Runs the kernel on e4m3 inputs quantized with per-tensor scales at a small size
    and checks it against numpy (raises if wrong): C in f16 (the cpu runtime has no
    bf16)."""
    from cubepy import e4m3, f16, fp8
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k)) * 30.0  # the values to multiply, before quantizing
    w = rng.standard_normal((n, k)) * 0.01
    # each tensor scaled so that its largest magnitude is e4m3's largest, 448
    sx, sw = np.abs(x).max() / 448.0, np.abs(w).max() / 448.0
    a_h, b_h = fp8.round_to(x / sx, "e4m3"), fp8.round_to(w / sw, "e4m3")
    a = client.tensor(a_h, e4m3).with_line_size(LINE)
    b = client.tensor(b_h, e4m3).with_line_size(LINE)
    c = client.zeros((m, n), f16)
    run(client, a, b, c, config=config, scale_a=client.tensor(np.array([sx], np.float32)),
        scale_b=client.tensor(np.array([sw], np.float32)))
    # (fp8 products are exact; Hopper adds them with about 13 mantissa bits, C is f16)
    scale = float(np.float32(sx) * np.float32(sw))
    want = reference(a_h, b_h, scale)
    bound = 2e-3 * reference(np.abs(a_h), np.abs(b_h), scale) + 1e-3 * np.abs(want).max()
    assert np.all(np.abs(c.numpy().astype(np.float64) - want) <= bound)


if __name__ == "__main__":
    example(cubepy.client())
    print("matmul_fp8: OK")
