"""f32 matmul on the SIMT units: shared-memory tiles and an 8 x 8 register tile per unit.

A cube computes a `bm x bn` tile of C = A @ B (A is M x K, B is K x N, row-major). Each
step stages a `bm x bk` slice of A (transposed, padded against bank conflicts) and a
`bk x bn` slice of B in shared memory; each unit then accumulates 8 x 8 outputs in eight
line accumulators (a line of 8 f32 per output row), reading 8 values of A and 8 of B per
k for 64 multiply-adds. The unit's rows and columns are strided by the cube's size
(`ty + i * bm/8`, `tx + j * bn/8`), so shared-memory reads and global stores of
neighbouring units are contiguous. The cube dim must be (bn/8, bm/8).

With `prefetch`, the global loads of the next slices are issued before the current
slices are multiplied (held in registers, stored to shared memory at the next step), so
memory latency overlaps the arithmetic, at the cost of 16 registers.

The language has no local arrays yet, so the register tile is eight named line variables
(`acc0 .. acc7`) rather than an indexed array, and the staged values are two lines of 8;
tile sizes and `prefetch` are comptime parameters chosen by `@cubepy.autotune`. K must
be a multiple of `bk`; M and N are free in a checked launch (units past the edge compute
values that are never stored).
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (CUBE_POS_X, CUBE_POS_Y, UNIT_POS, UNIT_POS_X, UNIT_POS_Y, Comptime,
                    CubeCount, CubeDim, Line, SharedMemory, Tensor, cube, f32, sync_cube, u32,
                    unroll)

PAD = 4  # extra columns of the transposed A tile: its stores hit 32 distinct banks


@cube
def store8(c: Tensor[f32], acc: Line[f32], row: u32, col: u32, step: Comptime[int], n: u32):
    """Stores the line `acc` to C[row, col + j * step] for j < 8 (and col + j * step < n:
    past the last column the flat index would land in the next row)."""
    for j in unroll(range(8)):
        if col + j * step < n:
            c[row * n + col + j * step] = acc[j]


@cube
def load_a(a: Tensor[f32], row0: u32, k0: u32, k_len: u32, bk: Comptime[int],
           units: Comptime[int], count: Comptime[int]) -> Line[f32]:
    """This unit's `count` (<= 8) values of the bm x bk slice of A at (row0, k0):
    consecutive units read consecutive k."""
    z = f32(0.0)
    v = Line(z, z, z, z, z, z, z, z)
    for p in unroll(range(count)):
        idx = p * units + UNIT_POS
        v[p] = a[(row0 + idx // bk) * k_len + k0 + idx % bk]
    return v


@cube
def load_b(b: Tensor[f32], col0: u32, k0: u32, n: u32, bn: Comptime[int],
           units: Comptime[int], count: Comptime[int]) -> Line[f32]:
    """This unit's `count` (<= 8) values of the bk x bn slice of B at (k0, col0):
    consecutive units read consecutive columns."""
    z = f32(0.0)
    v = Line(z, z, z, z, z, z, z, z)
    for p in unroll(range(count)):
        idx = p * units + UNIT_POS
        v[p] = b[(k0 + idx // bn) * n + col0 + idx % bn]
    return v


@cubepy.autotune(
    configs=[{"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 8, "prefetch": False},
             {"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 16, "prefetch": False},
             {"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 8, "prefetch": True},
             {"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 16, "prefetch": True},
             {"cube_dim": CubeDim(16, 8), "bm": 64, "bn": 128, "bk": 8, "prefetch": True},
             {"cube_dim": CubeDim(8, 8), "bm": 64, "bn": 64, "bk": 8, "prefetch": True}],
    key=["a", "b"])
@cube(launch=True)
def matmul(a: Tensor[f32], b: Tensor[f32], c: Tensor[f32], bm: Comptime[int],
           bn: Comptime[int], bk: Comptime[int], prefetch: Comptime[bool]):
    """c = a @ b for row-major f32 matrices."""
    m = a.shape(0)
    k_len = a.shape(1)
    n = b.shape(1)
    a_s = SharedMemory(f32, bk * (bm + PAD))  # a_s[kk * (bm + PAD) + r] = A[r, kk]
    b_s = SharedMemory(f32, bk * bn)          # b_s[kk * bn + col] = B[kk, col]
    units = (bm // 8) * (bn // 8)
    na = bm * bk // units  # values of A and of B each unit stages per step (at most 8)
    nb = bk * bn // units
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
    pa = acc0  # staged values of A and B, held in registers from their load to their store
    pb = acc0
    if prefetch:  # load the first slices; each step then loads the next while it computes
        pa = load_a(a, row0, 0, k_len, bk, units, na)
        pb = load_b(b, col0, 0, n, bn, units, nb)
    for k0 in range(0, k_len, bk):
        if not prefetch:
            pa = load_a(a, row0, k0, k_len, bk, units, na)
            pb = load_b(b, col0, k0, n, bn, units, nb)
        for p in unroll(range(na)):  # A transposed into shared memory
            idx = p * units + UNIT_POS
            a_s[idx % bk * (bm + PAD) + idx // bk] = pa[p]
        for p in unroll(range(nb)):
            b_s[p * units + UNIT_POS] = pb[p]
        sync_cube()
        if prefetch:
            if k0 + bk < k_len:
                pa = load_a(a, row0, k0 + bk, k_len, bk, units, na)
                pb = load_b(b, col0, k0 + bk, n, bn, units, nb)
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
