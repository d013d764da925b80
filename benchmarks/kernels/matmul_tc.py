"""f16/bf16 matmul on the matrix units (`cubepy.cmma`), f32 accumulation.

A cube of eight planes computes a `bm x bn` tile of C = A @ B (A is M x K, B is K x N,
row-major, f16 or bf16; C has the input's type). Each step stages a `bm x bk` slice of A
and a `bk x bn` slice of B in shared memory, read from global memory as lines of 8
elements (16 bytes); the planes are arranged `planes_m x planes_n` and each multiplies
its `wm x wn` part of the tile as (wm/16) x (wn/16) fragments of 16 x 16 x 16, the
accumulators living in registers for the whole K loop. The next slices are loaded into
registers while the current ones are multiplied (`prefetch`).

With `asynchronous`, the slices go from global to shared memory by asynchronous copies
(`cubepy.pipeline`, cp.async on CUDA), with no registers in between, into `stages`
(3 or 4) shared copies: the prologue starts the copies of the first stages - 1 slices;
each step waits for the oldest slice (`pipeline.wait(stages - 2)`), passes a cube
barrier (everyone's copies have landed, and everyone is done with the copy multiplied
last step), starts the copies of slice step + stages - 1 into that freed copy, and
multiplies the oldest slice while the newer ones are in flight.

The shared rows are padded by 8 elements, so the 16 rows a fragment load reads start in
different banks. The epilogue goes through a 16 x 16 f32 scratch per plane: each
accumulator is stored there, and the plane's 32 units each convert 8 of its values and
store them to C as one line. M and N must be multiples of `bm` and `bn`, K of `bk` (the
launch is unchecked: matrix-unit loads are not bounds-checked on a GPU).
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (CUBE_POS_X, CUBE_POS_Y, UNIT_POS, Comptime, CubeCount, CubeDim, Float,
                    Array, Line, LocalArray, SharedMemory, Tensor, cmma, cube, f32, pipeline,
                    sync_cube, sync_plane, u32, unroll)

PAD = 8  # elements added to each shared row: a fragment's 16 rows start in other banks
PLANE = 32  # the kernel splits its epilogue over 32 units per plane (CUDA's warp)


@cube
def load_tile(src: Tensor[Line[Float]], row0: u32, col0: u32, width: u32,
              cols: Comptime[int], units: Comptime[int], p: u32) -> Line[Float]:
    """Line `p * units + UNIT_POS` of the tile `cols` wide of `src` at (row0, col0), where
    `src` is `width` elements wide; consecutive units read consecutive lines of a row."""
    idx = p * units + UNIT_POS
    per_row = cols // 8
    return src[((row0 + idx // per_row) * width + col0) // 8 + idx % per_row]


@cube
def stage(dst: Array[Line[Float]], base: u32, v: Line[Float], cols: Comptime[int],
          units: Comptime[int], p: u32):
    """Stores line `v`, read by `load_tile` with the same arguments, to the padded tile
    starting at line `base` (one 16-byte store)."""
    idx = p * units + UNIT_POS
    per_row = cols // 8
    dst[base + (idx // per_row) * ((cols + PAD) // 8) + idx % per_row] = v


@cube
def copy_tile(dst: Array[Line[Float]], base: u32, src: Tensor[Line[Float]], row0: u32,
              col0: u32, width: u32, cols: Comptime[int], units: Comptime[int], p: u32):
    """Starts the asynchronous copy of line `p * units + UNIT_POS` of the tile `cols`
    wide of `src` at (row0, col0) into the padded tile starting at line `base` of `dst`
    (the lines `load_tile` reads and `stage` stores)."""
    idx = p * units + UNIT_POS
    per_row = cols // 8
    pipeline.memcpy_async(dst, base + (idx // per_row) * ((cols + PAD) // 8) + idx % per_row,
                          src, ((row0 + idx // per_row) * width + col0) // 8 + idx % per_row)


@cube
def multiply_slice(a_s: Array[Line[Float]], b_s: Array[Line[Float]], fa, fb, acc,
                   a_at: u32, b_at: u32, prow: u32, pcol: u32, bk: Comptime[int],
                   bn: Comptime[int], fm: Comptime[int], fn: Comptime[int]):
    """acc += this plane's part of the slices of A and B at elements a_at and b_at."""
    for kk in unroll(range(0, bk, 16)):
        for i in unroll(range(fm)):
            cmma.load(fa[i], a_s, a_at + (prow + i * 16) * (bk + PAD) + kk, bk + PAD)
        for j in unroll(range(fn)):
            cmma.load(fb[j], b_s, b_at + kk * (bn + PAD) + pcol + j * 16, bn + PAD)
        for i in unroll(range(fm)):
            for j in unroll(range(fn)):
                cmma.execute(fa[i], fb[j], acc[i * fn + j], acc[i * fn + j])


def _config(bm: int, bn: int, bk: int, planes_m: int, planes_n: int, stages: int,
            asynchronous: bool = False) -> dict:
    return {"cube_dim": CubeDim(PLANE * planes_m * planes_n), "bm": bm, "bn": bn, "bk": bk,
            "planes_m": planes_m, "planes_n": planes_n, "stages": stages,
            "asynchronous": asynchronous}


# The first four fit CUDA's 48 KB of static shared memory per cube; the others (two
# shared copies of the larger tiles: 61 to 104 KB; the pipelined ones, 3 or 4 copies:
# 65 to 167 KB) get it through the cuda runtime's per-kernel opt-in (227 KB on an
# H100/H200). Autotuning skips a config beyond the device's max_shared_bytes.
CONFIGS = [_config(128, 128, 32, 2, 4, 2), _config(128, 128, 32, 2, 2, 2),
           _config(64, 256, 32, 1, 4, 2), _config(128, 256, 32, 2, 4, 1),
           _config(128, 256, 32, 2, 4, 2), _config(256, 128, 32, 4, 2, 2),
           _config(128, 128, 64, 2, 4, 2), _config(128, 256, 64, 2, 4, 2),
           # pipelined: asynchronous copies into `stages` shared copies
           _config(128, 128, 32, 2, 4, 3, True), _config(128, 128, 32, 2, 4, 4, True),
           _config(128, 256, 32, 2, 4, 3, True), _config(256, 128, 32, 4, 2, 3, True),
           _config(128, 128, 64, 2, 4, 3, True),
           # four planes of 64 x 64 (the fastest on an H200: 349 TFLOP/s at 4096^3 f16),
           # and larger tiles over eight planes
           _config(128, 128, 64, 2, 2, 3, True), _config(128, 128, 32, 2, 2, 4, True),
           _config(256, 128, 64, 4, 2, 3, True), _config(128, 256, 64, 2, 4, 3, True)]


@cubepy.autotune(configs=CONFIGS, key=["a", "b"])
@cube(launch=True)
def matmul_tc(a: Tensor[Line[Float]], b: Tensor[Line[Float]], c: Tensor[Line[Float]],
              bm: Comptime[int], bn: Comptime[int], bk: Comptime[int],
              planes_m: Comptime[int], planes_n: Comptime[int], stages: Comptime[int],
              asynchronous: Comptime[bool]):
    """c = a @ b for row-major f16/bf16 matrices (line size 8), f32 accumulation, with
    planes_m x planes_n planes of 32 units (the cube dim is their product times 32) and
    `stages` shared copies of the slices. Through registers (`asynchronous` False), 1 or
    2 copies: with 2, the next slices are stored while the current ones are multiplied,
    one cube barrier per step instead of two. With `asynchronous`, 3 or 4 copies filled
    by asynchronous copies, `stages - 1` slices in flight ahead of the multiply."""
    k_len = a.shape(1)
    n = b.shape(1)
    units = PLANE * planes_m * planes_n
    na = bm * bk // 8 // units  # lines of A and of B each unit stages per step
    nb = bk * bn // 8 // units
    wm = bm // planes_m  # each plane's part of the tile, in fragments of 16 x 16
    wn = bn // planes_n
    fm = wm // 16
    fn = wn // 16
    a_lines = bm * (bk + PAD) // 8  # one padded slice of A, of B, in lines
    b_lines = bk * (bn + PAD) // 8
    a_s = SharedMemory(Line[Float], stages * a_lines, 8)
    b_s = SharedMemory(Line[Float], stages * b_lines, 8)
    scratch = SharedMemory(Line[f32], planes_m * planes_n * 64, 4)
    acc = cmma.Matrices(fm * fn, cmma.ACCUMULATOR, 16, 16, 16, f32)
    fa = cmma.Matrices(fm, cmma.A, 16, 16, 16, Float, cmma.ROW_MAJOR)
    fb = cmma.Matrices(fn, cmma.B, 16, 16, 16, Float, cmma.ROW_MAJOR)
    for i in unroll(range(fm * fn)):
        cmma.fill(acc[i], 0.0)
    plane = UNIT_POS // PLANE
    lane = UNIT_POS % PLANE
    prow = plane // planes_n * wm  # this plane's first row and column in the tile
    pcol = plane % planes_n * wn
    row0 = CUBE_POS_Y * bm
    col0 = CUBE_POS_X * bn
    if asynchronous:
        steps = k_len // bk
        for s in unroll(range(stages - 1)):  # the prologue: the first stages - 1 slices
            if s < steps:
                for p in unroll(range(na)):
                    copy_tile(a_s, s * a_lines, a, row0, s * bk, k_len, bk, units, p)
                for p in unroll(range(nb)):
                    copy_tile(b_s, s * b_lines, b, s * bk, col0, n, bn, units, p)
            pipeline.commit()  # one group per slice, empty past the end
        for step in range(steps):
            pipeline.wait(stages - 2)  # this unit's copies of slice `step` have landed
            sync_cube()  # everyone's have, and everyone is done with the copy to refill
            ahead = step + stages - 1  # into the copy multiplied last step
            if ahead < steps:
                slot = ahead % stages
                for p in unroll(range(na)):
                    copy_tile(a_s, slot * a_lines, a, row0, ahead * bk, k_len, bk, units, p)
                for p in unroll(range(nb)):
                    copy_tile(b_s, slot * b_lines, b, ahead * bk, col0, n, bn, units, p)
            pipeline.commit()
            multiply_slice(a_s, b_s, fa, fb, acc, step % stages * a_lines * 8,
                           step % stages * b_lines * 8, prow, pcol, bk, bn, fm, fn)
    else:  # through registers
        pa = LocalArray(Line[Float], na, 8)
        pb = LocalArray(Line[Float], nb, 8)
        for p in unroll(range(na)):
            pa[p] = load_tile(a, row0, 0, k_len, bk, units, p)
        for p in unroll(range(nb)):
            pb[p] = load_tile(b, 0, col0, n, bn, units, p)
        for p in unroll(range(na)):
            stage(a_s, 0, pa[p], bk, units, p)
        for p in unroll(range(nb)):
            stage(b_s, 0, pb[p], bn, units, p)
        sync_cube()
        for k0 in range(0, k_len, bk):
            cur = k0 // bk % stages  # the shared copy holding this step's slices
            more = k0 + bk < k_len
            if more:  # the next slices load while this one is multiplied
                for p in unroll(range(na)):
                    pa[p] = load_tile(a, row0, k0 + bk, k_len, bk, units, p)
                for p in unroll(range(nb)):
                    pb[p] = load_tile(b, k0 + bk, col0, n, bn, units, p)
            a_at = cur * a_lines * 8
            b_at = cur * b_lines * 8
            multiply_slice(a_s, b_s, fa, fb, acc, a_at, b_at, prow, pcol, bk, bn, fm, fn)
            if stages == 1:
                sync_cube()  # every plane is done with the slices before they are replaced
            if more:
                nxt = (cur + 1) % stages
                for p in unroll(range(na)):
                    stage(a_s, nxt * a_lines, pa[p], bk, units, p)
                for p in unroll(range(nb)):
                    stage(b_s, nxt * b_lines, pb[p], bn, units, p)
            sync_cube()
    mine = plane * 256  # this plane's 16 x 16 scratch; each unit converts 8 values of it
    r = lane // 2
    half = lane % 2 * 8
    for i in unroll(range(fm)):
        for j in unroll(range(fn)):
            cmma.store(scratch, mine, acc[i * fn + j], 16, cmma.ROW_MAJOR)
            sync_plane()
            at = (mine + r * 16 + half) // 4
            lo = scratch[at]
            hi = scratch[at + 1]
            v = Line(lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3])
            row = row0 + prow + i * 16 + r
            col = col0 + pcol + j * 16 + half
            c[(row * n + col) // 8] = Float(v)
            sync_plane()


def cube_count(m: int, n: int):
    """The cube count for a config: one cube per bm x bn tile of C."""
    return lambda cfg: CubeCount(n // cfg["bn"], m // cfg["bm"])


def run(client, a, b, c, config: dict | None = None) -> None:
    """c = a @ b on the device (a, b, c with line size 8) with the autotuned config, or
    `config`. M and N must be multiples of the tile (256 covers every config), K of 64."""
    m, k = a.shape
    n = b.shape[1]
    if m % 256 or n % 256 or k % 64:
        raise ValueError(f"matmul_tc: M = {m} and N = {n} must be multiples of 256, "
                         f"K = {k} of 64")
    launch_tiled(matmul_tc, client, cube_count(m, n), config, a, b, c)


def launch_tiled(tuned, client, count, config: dict | None, *args) -> None:
    """An unchecked launch of the autotuned kernel `tuned` with its tuned config, or
    with `config` (its cube dim and comptime values); `count(config)` is the cube count
    (the matmul kernels' run() functions share this)."""
    if config is None:
        tuned.launch_unchecked(client, count, *args)
        return
    comptimes = {key: v for key, v in config.items() if key != "cube_dim"}
    tuned.kernel.launch_unchecked(client, count(config), config["cube_dim"], *args,
                                  **comptimes)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product in f64 (inputs as given), for comparison with the kernel's result."""
    return a.astype(np.float64) @ b.astype(np.float64)


def example(client, m: int = 256, n: int = 256, k: int = 128, seed: int = 0,
            config: dict | None = None) -> None:
    """Runs the kernel in f16 at a small size and checks it against numpy (raises if
    wrong)."""
    rng = np.random.default_rng(seed)
    a_h = rng.standard_normal((m, k)).astype(np.float16)
    b_h = rng.standard_normal((k, n)).astype(np.float16)
    a = client.tensor(a_h).with_line_size(8)
    b = client.tensor(b_h).with_line_size(8)
    c = client.zeros((m, n), cubepy.f16).with_line_size(8)
    run(client, a, b, c, config=config)
    got = c.numpy().astype(np.float64)
    np.testing.assert_allclose(got, reference(a_h, b_h), rtol=1e-2, atol=2e-2 * k ** 0.5)


if __name__ == "__main__":
    example(cubepy.client())
    print("matmul_tc: OK")
