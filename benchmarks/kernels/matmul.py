"""f32 matmul on the SIMT units: shared-memory tiles and an 8 x 8 register tile per unit.

A cube computes a `bm x bn` tile of C = A @ B (A is M x K, B is K x N, row-major). Each
step stages a `bm x bk` slice of A (transposed, padded against bank conflicts) and a
`bk x bn` slice of B in shared memory; each unit then accumulates 8 x 8 outputs in eight
line accumulators (a line of 8 f32 per output row), reading 8 values of A and 8 of B per
k for 64 multiply-adds. The unit's rows and columns are strided by the cube's size
(`ty + i * bm/8`, `tx + j * bn/8`), so shared-memory reads and global stores of
neighbouring units are contiguous. The cube dim must be (bn/8, bm/8).

The language has no local arrays yet, so the register tile is eight named line variables
(`acc0 .. acc7`) rather than an indexed array; tile sizes are comptime parameters chosen
by `@cubepy.autotune`. K must be a multiple of `bk`; M and N are free in a checked launch
(units past the edge compute values that are never stored).
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (CUBE_POS_X, CUBE_POS_Y, UNIT_POS, UNIT_POS_X, UNIT_POS_Y, Comptime,
                    CubeCount, CubeDim, Line, SharedMemory, Tensor, cube, f32, sync_cube,
                    unroll)

PAD = 4  # extra columns of the transposed A tile: its stores hit 32 distinct banks


@cube
def store8(c: Tensor[f32], acc: Line[f32], row: cubepy.u32, col: cubepy.u32,
           step: Comptime[int], n: cubepy.u32):
    """Stores the line `acc` to C[row, col + j * step] for j < 8 (and col + j * step < n:
    past the last column the flat index would land in the next row)."""
    for j in unroll(range(8)):
        if col + j * step < n:
            c[row * n + col + j * step] = acc[j]


@cubepy.autotune(
    configs=[{"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 8},
             {"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 16},
             {"cube_dim": CubeDim(16, 8), "bm": 64, "bn": 128, "bk": 16},
             {"cube_dim": CubeDim(8, 8), "bm": 64, "bn": 64, "bk": 16}],
    key=["a", "b"])
@cube(launch=True)
def matmul(a: Tensor[f32], b: Tensor[f32], c: Tensor[f32],
           bm: Comptime[int], bn: Comptime[int], bk: Comptime[int]):
    """c = a @ b for row-major f32 matrices."""
    m = a.shape(0)
    k_len = a.shape(1)
    n = b.shape(1)
    a_s = SharedMemory(f32, bk * (bm + PAD))  # a_s[kk * (bm + PAD) + r] = A[r, kk]
    b_s = SharedMemory(f32, bk * bn)          # b_s[kk * bn + col] = B[kk, col]
    units = (bm // 8) * (bn // 8)
    sa = bm // 8
    sb = bn // 8
    row0 = CUBE_POS_Y * bm
    col0 = CUBE_POS_X * bn
    z = f32(0.0)
    acc0 = Line(z, z, z, z, z, z, z, z)
    acc1 = acc0
    acc2 = acc0
    acc3 = acc0
    acc4 = acc0
    acc5 = acc0
    acc6 = acc0
    acc7 = acc0
    for k0 in range(0, k_len, bk):
        for p in unroll(range(bm * bk // units)):  # stage A: consecutive units, consecutive k
            idx = p * units + UNIT_POS
            r = idx // bk
            ka = idx % bk
            a_s[ka * (bm + PAD) + r] = a[(row0 + r) * k_len + k0 + ka]
        for p in unroll(range(bk * bn // units)):  # stage B: consecutive columns
            idx = p * units + UNIT_POS
            b_s[idx] = b[(k0 + idx // bn) * n + col0 + idx % bn]
        sync_cube()
        for kk in unroll(range(bk)):
            i = kk * (bm + PAD) + UNIT_POS_Y  # this unit's 8 rows of A, bm/8 apart
            av = Line(a_s[i], a_s[i + sa], a_s[i + 2 * sa], a_s[i + 3 * sa],
                      a_s[i + 4 * sa], a_s[i + 5 * sa], a_s[i + 6 * sa], a_s[i + 7 * sa])
            j = kk * bn + UNIT_POS_X  # and its 8 columns of B, bn/8 apart
            bv = Line(b_s[j], b_s[j + sb], b_s[j + 2 * sb], b_s[j + 3 * sb],
                      b_s[j + 4 * sb], b_s[j + 5 * sb], b_s[j + 6 * sb], b_s[j + 7 * sb])
            acc0 += av[0] * bv
            acc1 += av[1] * bv
            acc2 += av[2] * bv
            acc3 += av[3] * bv
            acc4 += av[4] * bv
            acc5 += av[5] * bv
            acc6 += av[6] * bv
            acc7 += av[7] * bv
        sync_cube()
    row = row0 + UNIT_POS_Y
    col = col0 + UNIT_POS_X
    if row < m:  # rows past M are dropped anyway; this saves their stores
        store8(c, acc0, row, col, sb, n)
        store8(c, acc1, row + sa, col, sb, n)
        store8(c, acc2, row + 2 * sa, col, sb, n)
        store8(c, acc3, row + 3 * sa, col, sb, n)
        store8(c, acc4, row + 4 * sa, col, sb, n)
        store8(c, acc5, row + 5 * sa, col, sb, n)
        store8(c, acc6, row + 6 * sa, col, sb, n)
        store8(c, acc7, row + 7 * sa, col, sb, n)


def cube_count(m: int, n: int):
    """The cube count for a config: one cube per bm x bn tile of C."""
    return lambda cfg: CubeCount(-(-n // cfg["bn"]), -(-m // cfg["bm"]))


def run(client, a, b, c, checked: bool = True, config: dict | None = None) -> None:
    """c = a @ b on the device with the autotuned config, or `config` (K must be a
    multiple of 16; unchecked needs M and N multiples of 128)."""
    m, k = a.shape
    n = b.shape[1]
    if k % 16:
        raise ValueError(f"matmul: K = {k} must be a multiple of 16")
    if config is not None:
        launch = matmul.kernel.launch if checked else matmul.kernel.launch_unchecked
        comptimes = {key: v for key, v in config.items() if key != "cube_dim"}
        launch(client, cube_count(m, n)(config), config["cube_dim"], a, b, c, **comptimes)
        return
    launch = matmul.launch if checked else matmul.launch_unchecked
    launch(client, cube_count(m, n), a, b, c)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def example(client, m: int = 96, n: int = 80, k: int = 48, seed: int = 0,
            config: dict | None = None) -> None:
    """Runs the kernel at a small size and checks it against numpy (raises if wrong)."""
    rng = np.random.default_rng(seed)
    a_h = rng.standard_normal((m, k)).astype(np.float32)
    b_h = rng.standard_normal((k, n)).astype(np.float32)
    a, b, c = client.tensor(a_h), client.tensor(b_h), client.zeros((m, n), f32)
    run(client, a, b, c, config=config)
    np.testing.assert_allclose(c.numpy(), reference(a_h, b_h), rtol=1e-4, atol=1e-4 * k)


if __name__ == "__main__":
    example(cubepy.client())
    print("matmul: OK")
