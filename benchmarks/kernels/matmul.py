"""f32 matmul on the SIMT units: shared-memory tiles and an 8 x 8 register tile per unit.

A cube computes a `bm x bn` tile of C = A @ B (A is M x K, B is K x N, row-major),
stepping over K in slices: a `bm x bk` slice of A and a `bk x bn` slice of B are staged
in shared memory, and each unit accumulates 8 x 8 outputs from them. The cube dim must
be (bn/8, bm/8). Two kernels, both autotuned over their tile sizes (`@cubepy.autotune`):

- `matmul_lines` (the default when N is a multiple of 4): B and C are read and written
  in lines of 4 (16-byte accesses), A is staged as lines of 4 rows of one k, so each k
  of the inner loop reads the unit's 8 values of A and 8 of B as four 16-byte
  shared-memory reads. A unit owns rows `4 ty .. 4 ty + 3` and the same four `bm/2`
  further, columns `4 tx .. 4 tx + 3` and the same four `bn/2` further; its 64 sums are
  a local array of 16 lines. Shared memory holds two copies of each slice: the next
  slice's global loads are issued before the current one is multiplied and stored into
  the other copy after it, one barrier per step.
- `matmul` (any N): scalar accesses; the unit's rows and columns are strided by the
  cube's size (`ty + i * bm/8`, `tx + j * bn/8`), its sums eight lines of 8; A is staged
  transposed and padded against bank conflicts. With `prefetch`, the next slices' global
  loads are issued before the current slices are multiplied (held in registers, stored
  to shared memory at the next step), at the cost of 16 registers.

K must be a multiple of `bk`; M and N are free in a checked launch (units past the edge
compute values that are never stored).
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (CUBE_POS_X, CUBE_POS_Y, UNIT_POS, UNIT_POS_X, UNIT_POS_Y, Array, Comptime,
                    CubeCount, CubeDim, Line, LocalArray, SharedMemory, Tensor, cube, f32,
                    sync_cube, u32, unroll)

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


PADL = 1  # an extra line per k of matmul_lines' A slice: a quarter plane's 16-byte stores
# (8 units, k = 0..7 of one group of rows) then fall on 8 distinct 16-byte bank groups


@cube
def load_a_lines(a: Tensor[f32], row0: u32, k0: u32, k_len: u32, bk: Comptime[int],
                 units: Comptime[int], count: Comptime[int], lines: Array[Line[f32]]):
    """Fills `lines[p]` (p < count) with 4 consecutive rows of one k of the bm x bk slice
    of A at (row0, k0): consecutive units read consecutive k."""
    for p in unroll(range(count)):
        q = p * units + UNIT_POS
        base = (row0 + q // bk * 4) * k_len + k0 + q % bk
        lines[p] = Line(a[base], a[base + k_len], a[base + 2 * k_len], a[base + 3 * k_len])


@cube
def load_b_lines(b: Tensor[Line[f32]], col0: u32, k0: u32, n: u32, bn: Comptime[int],
                 units: Comptime[int], count: Comptime[int], lines: Array[Line[f32]]):
    """Fills `lines[p]` (p < count) with the lines of the bk x bn slice of B at
    (k0, col0): consecutive units read consecutive lines of a row."""
    for p in unroll(range(count)):
        q = p * units + UNIT_POS
        lines[p] = b[((k0 + q // (bn // 4)) * n + col0) // 4 + q % (bn // 4)]


@cubepy.autotune(
    configs=[{"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 8},
             {"cube_dim": CubeDim(16, 16), "bm": 128, "bn": 128, "bk": 16},
             {"cube_dim": CubeDim(16, 8), "bm": 64, "bn": 128, "bk": 8},
             {"cube_dim": CubeDim(16, 8), "bm": 64, "bn": 128, "bk": 16},
             {"cube_dim": CubeDim(8, 16), "bm": 128, "bn": 64, "bk": 8},
             {"cube_dim": CubeDim(8, 16), "bm": 128, "bn": 64, "bk": 16},
             {"cube_dim": CubeDim(8, 8), "bm": 64, "bn": 64, "bk": 8},
             {"cube_dim": CubeDim(8, 8), "bm": 64, "bn": 64, "bk": 16}],
    key=["a", "b"])
@cube(launch=True)
def matmul_lines(a: Tensor[f32], b: Tensor[Line[f32]], c: Tensor[Line[f32]],
                 bm: Comptime[int], bn: Comptime[int], bk: Comptime[int]):
    """c = a @ b for row-major f32 matrices; b and c in lines of 4."""
    m = a.shape(0)
    k_len = a.shape(1)
    n = b.shape(1)
    units = (bm // 8) * (bn // 8)
    la = bm // 4 + PADL  # lines per k of the A tile
    lb = bn // 4
    a_s = SharedMemory(Line[f32], 2 * bk * la, 4)  # two copies: a_s[kk * la + r] = A[4r.., kk]
    b_s = SharedMemory(Line[f32], 2 * bk * lb, 4)  # b_s[kk * lb + j] = B[kk, 4j..]
    na = bk * (bm // 4) // units
    nb = bk * lb // units
    pa = LocalArray(Line[f32], na, 4)
    pb = LocalArray(Line[f32], nb, 4)
    acc = LocalArray(Line[f32], 16, 4)  # acc[2 i + h]: row i of this unit's 8, half h
    row0 = CUBE_POS_Y * bm
    col0 = CUBE_POS_X * bn
    load_a_lines(a, row0, 0, k_len, bk, units, na, pa)
    load_b_lines(b, col0, 0, n, bn, units, nb, pb)
    for p in unroll(range(na)):
        q = p * units + UNIT_POS
        a_s[q % bk * la + q // bk] = pa[p]
    for p in unroll(range(nb)):
        b_s[p * units + UNIT_POS] = pb[p]
    sync_cube()
    steps = k_len // bk
    for s in range(steps):
        cur = s % 2
        more = s + 1 < steps
        if more:  # the next slices' loads fly while this slice is multiplied
            load_a_lines(a, row0, (s + 1) * bk, k_len, bk, units, na, pa)
            load_b_lines(b, col0, (s + 1) * bk, n, bn, units, nb, pb)
        ao = cur * (bk * la) + UNIT_POS_Y
        bo = cur * (bk * lb) + UNIT_POS_X
        for kk in unroll(range(bk)):
            a0 = a_s[ao + kk * la]
            a1 = a_s[ao + kk * la + bm // 8]
            b0 = b_s[bo + kk * lb]
            b1 = b_s[bo + kk * lb + bn // 8]
            for i in unroll(range(4)):
                acc[2 * i] += a0[i] * b0
                acc[2 * i + 1] += a0[i] * b1
                acc[8 + 2 * i] += a1[i] * b0
                acc[9 + 2 * i] += a1[i] * b1
        if more:  # into the other copy, last read before the previous barrier
            nxt = 1 - cur
            for p in unroll(range(na)):
                q = p * units + UNIT_POS
                a_s[nxt * (bk * la) + q % bk * la + q // bk] = pa[p]
            for p in unroll(range(nb)):
                b_s[nxt * (bk * lb) + p * units + UNIT_POS] = pb[p]
        sync_cube()
    col = col0 // 4 + UNIT_POS_X  # in lines
    for h in unroll(range(2)):
        for i in unroll(range(4)):
            row = row0 + h * (bm // 2) + UNIT_POS_Y * 4 + i
            if row < m:
                if col < n // 4:
                    c[row * (n // 4) + col] = acc[8 * h + 2 * i]
                if col + bn // 8 < n // 4:
                    c[row * (n // 4) + col + bn // 8] = acc[8 * h + 2 * i + 1]


def cube_count(m: int, n: int):
    """The cube count for a config: one cube per bm x bn tile of C."""
    return lambda cfg: CubeCount(-(-n // cfg["bn"]), -(-m // cfg["bm"]))


def run(client, a, b, c, checked: bool = True, config: dict | None = None,
        kernel=None) -> None:
    """c = a @ b on the device with the autotuned config, or `config` (K must be a
    multiple of 16; unchecked needs M and N multiples of 128). `kernel` (`matmul` or
    `matmul_lines`) picks the kernel; by default `matmul_lines` when N is a multiple of
    4, else `matmul`."""
    m, k = a.shape
    n = b.shape[1]
    if k % 16:
        raise ValueError(f"matmul: K = {k} must be a multiple of 16")
    tuned = kernel or (matmul_lines if n % 4 == 0 else matmul)
    if tuned is matmul_lines:
        b, c = b.with_line_size(4), c.with_line_size(4)
    if config is not None:
        launch = tuned.kernel.launch if checked else tuned.kernel.launch_unchecked
        comptimes = {key: v for key, v in config.items() if key != "cube_dim"}
        launch(client, cube_count(m, n)(config), config["cube_dim"], a, b, c, **comptimes)
        return
    launch = tuned.launch if checked else tuned.launch_unchecked
    launch(client, cube_count(m, n), a, b, c)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def lines_shared_bytes(config: dict) -> int:
    """Shared memory `matmul_lines` takes with `config`: two copies of each slice."""
    bm, bn, bk = config["bm"], config["bn"], config["bk"]
    return 16 * 2 * bk * ((bm // 4 + PADL) + bn // 4)


def example(client, m: int = 96, n: int = 80, k: int = 48, seed: int = 0,
            config: dict | None = None, kernel=None) -> None:
    """Runs the kernel at a small size and checks it against numpy (raises if wrong);
    `config` and `kernel` as `run` takes them."""
    rng = np.random.default_rng(seed)
    a_h = rng.standard_normal((m, k)).astype(np.float32)
    b_h = rng.standard_normal((k, n)).astype(np.float32)
    a, b, c = client.tensor(a_h), client.tensor(b_h), client.zeros((m, n), f32)
    run(client, a, b, c, config=config, kernel=kernel)
    np.testing.assert_allclose(c.numpy(), reference(a_h, b_h), rtol=1e-4, atol=1e-4 * k)


if __name__ == "__main__":
    example(cubepy.client())
    print("matmul: OK")
