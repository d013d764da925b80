"""Matrix units (cubepy.cmma): fragments of a plane's matrix multiply.

Runtime tests run on the cpu runtime (a numpy emulation) against numpy products, and
the same tests on CUDA (marked `cuda`). Source tests compile the generated CUDA with
nvcc (sm_90) and the generated MSL with clang++ against the Metal shim; WGSL has no
matrix units, which is a CompileError at the user's line. The CompileError tests mark
the offending line with `# E:<tag>`.
"""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, Array, CompileError, LaunchError, SharedMemory, Tensor, bf16,
                    cmma, cube, f16, f32, sync_cube, tf32, u32, unroll)
from error_markers import located_error_checker
from source_check import validate_sources


def _present(name: str) -> bool:
    try:
        cubepy.client(name)
        return True
    except LaunchError:
        return False


CLIENTS = [pytest.param("cpu", id="cpu"),
           pytest.param("cuda", id="cuda", marks=[
               pytest.mark.cuda,
               pytest.mark.skipif(not _present("cuda"), reason="no CUDA device")])]


@pytest.fixture(params=CLIENTS)
def client(request):
    return cubepy.client(request.param)


PLANE = (32, 1, 1)
ROW, COL = cmma.ROW_MAJOR, cmma.COL_MAJOR
RNG = np.random.default_rng(7)


_error_at = located_error_checker(__file__)


def _memory(x: np.ndarray, layout) -> np.ndarray:
    """A matrix as laid out in memory (row major: rows contiguous)."""
    return (x if layout is ROW else x.T).ravel().copy()


def _matrix(flat: np.ndarray, rows: int, cols: int, layout) -> np.ndarray:
    return flat.reshape(rows, cols) if layout is ROW else flat.reshape(cols, rows).T


def _halves(rows: int, cols: int) -> np.ndarray:
    return RNG.uniform(-1, 1, (rows, cols)).astype(np.float16)


def product_kernel(la, lb, ls, m=16, n=16, k=16, elem=f16, acc=f32):
    """d = a @ b for one tile: A m x k, B k x n, each in its layout; the result stored
    in `ls`."""
    lda = k if la is ROW else m
    ldb = n if lb is ROW else k
    lds = n if ls is ROW else m
    storage = f32 if elem is tf32 else elem

    @cube(launch=True)
    def product(a: Array[storage], b: Array[storage], out: Array[acc]):
        fa = cmma.Matrix(cmma.A, m, n, k, elem, la)  # E:wgsl
        fb = cmma.Matrix(cmma.B, m, n, k, elem, lb)
        c = cmma.Matrix(cmma.ACCUMULATOR, m, n, k, acc)
        cmma.fill(c, 0.0)
        cmma.load(fa, a, 0, lda)
        cmma.load(fb, b, 0, ldb)
        cmma.execute(fa, fb, c, c)
        cmma.store(out, 0, c, lds, ls)
    return product


def run_product(client, kernel, a, b, m, n, la, lb, ls, out_dtype=f32):
    ta, tb = client.tensor(_memory(a, la)), client.tensor(_memory(b, lb))
    out = client.zeros(m * n, out_dtype)
    kernel.launch(client, (1, 1, 1), PLANE, ta, tb, out)
    return _matrix(out.numpy(), m, n, ls)


# -- products -------------------------------------------------------------------------

@pytest.mark.parametrize("la", [ROW, COL], ids=["a_row", "a_col"])
@pytest.mark.parametrize("lb", [ROW, COL], ids=["b_row", "b_col"])
@pytest.mark.parametrize("ls", [ROW, COL], ids=["store_row", "store_col"])
def test_f16_product_in_every_layout(client, la, lb, ls):
    a, b = _halves(16, 16), _halves(16, 16)
    got = run_product(client, product_kernel(la, lb, ls), a, b, 16, 16, la, lb, ls)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


@pytest.mark.parametrize("m,n", [(32, 8), (8, 32)])
def test_rectangular_shapes(client, m, n):
    a, b = _halves(m, 16), _halves(16, n)
    got = run_product(client, product_kernel(ROW, COL, ROW, m=m, n=n), a, b, m, n, ROW, COL,
                      ROW)
    np.testing.assert_allclose(got, a.astype(np.float32) @ b.astype(np.float32), atol=1e-4)


def test_f16_accumulator_rounds_to_f16(client):
    a, b = _halves(16, 16), _halves(16, 16)
    got = run_product(client, product_kernel(ROW, ROW, ROW, acc=f16), a, b, 16, 16, ROW, ROW,
                      ROW, out_dtype=f16)
    assert got.dtype == np.float16
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), exact, atol=4e-3)


def test_tf32_inputs_are_rounded_to_ten_mantissa_bits(client):
    # 1 + j * 2^-12: a quarter of a tf32 ulp per step, rounded to nearest (ties away
    # from zero, as CUDA's cvt.rna.tf32.f32)
    a = (1 + (np.arange(16 * 8) % 8) * 2.0 ** -12).astype(np.float32).reshape(16, 8)
    b = np.eye(8, 16, dtype=np.float32)  # picks column c of a into column c of out
    got = run_product(client, product_kernel(ROW, ROW, ROW, k=8, elem=tf32), a, b, 16, 16,
                      ROW, ROW, ROW)
    steps = np.array([0, 0, 1, 1, 1, 1, 2, 2])[(np.arange(16 * 8) % 8)].reshape(16, 8)
    want = np.zeros((16, 16), np.float32)
    want[:, :8] = 1 + steps * 2.0 ** -10
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got[:, :8], a)  # the unrounded product differs


def test_cpu_tf32_rounding_matches_cuda_rule():
    from cubepy.runtime.cpu_cmma import round_tf32
    ulp = 2.0 ** -10
    x = np.array([1 + ulp / 2, 1 + 1.5 * ulp, -1 - ulp / 2, 1 + 0.49 * ulp, -1 - 0.51 * ulp,
                  np.inf, -np.inf, 0.0, 2.0 - ulp / 4], np.float32)
    want = [1 + ulp, 1 + 2 * ulp, -1 - ulp, 1.0, -1 - ulp, np.inf, -np.inf, 0.0, 2.0]
    np.testing.assert_array_equal(round_tf32(x), np.array(want, np.float32))
    assert np.isnan(round_tf32(np.array([np.nan], np.float32)))[0]


@cube(launch=True)
def bf16_product(a: Array[bf16], b: Array[bf16], out: Array[f32]):
    fa = cmma.Matrix(cmma.A, 16, 16, 16, bf16, cmma.ROW_MAJOR)  # E:bf16
    fb = cmma.Matrix(cmma.B, 16, 16, 16, bf16, cmma.ROW_MAJOR)
    c = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(c, 0.0)
    cmma.load(fa, a, 0, 16)
    cmma.load(fb, b, 0, 16)
    cmma.execute(fa, fb, c, c)
    cmma.store(out, 0, c, 16, cmma.ROW_MAJOR)


def test_bf16_is_cuda_only():
    # the cpu runtime has no bf16 buffers (numpy has no bfloat16), so no bf16 fragments
    with pytest.raises(CompileError) as info:
        bf16_product.ir(cube_dim=PLANE, target="cpu")
    _error_at(info.value, "bf16", "the cpu runtime has no 16x16x16 bf16 A fragment")
    with pytest.raises(CompileError) as info:
        bf16_product.source("metal", cube_dim=PLANE)
    _error_at(info.value, "bf16", "Metal has no 16x16x16 bf16 A fragment")


@cube(launch=True)
def to_bf16(x: Array[f32], y: Array[bf16]):
    y[cubepy.ABSOLUTE_POS] = bf16(x[cubepy.ABSOLUTE_POS])


@pytest.mark.cuda
@pytest.mark.skipif(not _present("cuda"), reason="no CUDA device")
def test_bf16_product_on_cuda():
    c = cubepy.client("cuda")
    if bf16 not in c.limits.dtypes:
        pytest.skip("the device has no bf16 (sm_80+)")
    a = RNG.integers(-4, 5, (16, 16)).astype(np.float32)  # small integers: exact in bf16
    b = RNG.integers(-4, 5, (16, 16)).astype(np.float32)
    ta, tb = c.zeros(256, bf16), c.zeros(256, bf16)
    to_bf16.launch(c, (8, 1, 1), PLANE, c.tensor(a.ravel()), ta)
    to_bf16.launch(c, (8, 1, 1), PLANE, c.tensor(b.ravel()), tb)
    out = c.zeros(256, f32)
    bf16_product.launch(c, (1, 1, 1), PLANE, ta, tb, out)
    np.testing.assert_array_equal(out.numpy().reshape(16, 16), a @ b)


# -- accumulator loads, casts, offsets and strides -------------------------------------

@cube(launch=True)
def multiply_add(a: Array[f16], b: Array[f16], c: Array[f32], out: Array[f32],
                 out16: Array[f16]):
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.load_with_layout(acc, c, 0, 16, cmma.COL_MAJOR)
    cmma.load(fa, a, 0, 16)
    cmma.load(fb, b, 0, 16)
    cmma.execute(fa, fb, acc, acc)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)
    half = cmma.cast(acc, f16)
    cmma.store(out16, 0, half, 16, cmma.ROW_MAJOR)


def test_load_with_layout_and_cast(client):
    a, b = _halves(16, 16), _halves(16, 16)
    c0 = RNG.uniform(-1, 1, (16, 16)).astype(np.float32)
    out, out16 = client.zeros(256, f32), client.zeros(256, f16)
    multiply_add.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                        client.tensor(b.ravel()), client.tensor(c0.T.ravel().copy()), out,
                        out16)
    want = a.astype(np.float32) @ b.astype(np.float32) + c0
    got = out.numpy().reshape(16, 16)
    np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_array_equal(out16.numpy().reshape(16, 16), got.astype(np.float16))


@cube(launch=True)
def sub_tiles(a: Tensor[f16], b: Array[f16], out: Tensor[f32], row: u32, col: u32):
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.COL_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.5)
    cmma.load(fa, a, row * a.stride(0) + col, a.stride(0))  # a 2-D tensor: flat offset
    cmma.load(fb, b, 3, 20)  # columns of 20 elements, from element 3
    cmma.execute(fa, fb, acc, acc)
    cmma.store(out, 8 * out.stride(0) + 4, acc, out.stride(0), cmma.ROW_MAJOR)


def test_nonzero_offsets_and_strides(client):
    big = _halves(40, 48)
    b_flat = RNG.uniform(-1, 1, 20 * 16 + 3).astype(np.float16)
    out = client.zeros((32, 24), f32)
    sub_tiles.launch(client, (1, 1, 1), PLANE, client.tensor(big), client.tensor(b_flat),
                     out, 5, 7)
    b = np.stack([b_flat[3 + 20 * j: 3 + 20 * j + 16] for j in range(16)], axis=1)
    want = big[5:21, 7:23].astype(np.float32) @ b.astype(np.float32) + 0.5
    got = out.numpy()
    np.testing.assert_allclose(got[8:24, 4:20], want, atol=1e-4)
    assert not got[:8].any() and not got[24:].any() and not got[:, :4].any()


# -- a tiled matmul: arrays of fragments, shared-memory staging -------------------------

@cube(launch=True)
def tiled_matmul(a: Array[f16], b: Array[f16], out: Array[f32], size: u32):
    """out = a @ b, size x size (a multiple of 64): one cube of 4 planes per 64 x 64
    block, each plane a 32 x 32 tile as 2 x 2 accumulators, a K loop in steps of 16."""
    plane = UNIT_POS // 32
    row0 = cubepy.CUBE_POS_Y * 64 + (plane // 2) * 32
    col0 = cubepy.CUBE_POS_X * 64 + (plane % 2) * 32
    fa = cmma.Matrices(2, cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrices(2, cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    accs = cmma.Matrices(4, cmma.ACCUMULATOR, 16, 16, 16, f32)
    for i in unroll(range(4)):
        cmma.fill(accs[i], 0.0)
    for kk in range(0, size, 16):
        for i in unroll(range(2)):
            cmma.load(fa[i], a, (row0 + i * 16) * size + kk, size)
            cmma.load(fb[i], b, kk * size + col0 + i * 16, size)
        for i in unroll(range(2)):
            for j in unroll(range(2)):
                cmma.execute(fa[i], fb[j], accs[i * 2 + j], accs[i * 2 + j])
    for t in range(4):  # a runtime index into the array of fragments
        cmma.store(out, (row0 + (t // 2) * 16) * size + col0 + (t % 2) * 16, accs[t], size,
                   cmma.ROW_MAJOR)


def test_tiled_matmul_with_arrays_of_fragments(client):
    size = 128
    a, b = _halves(size, size), _halves(size, size)
    out = client.zeros(size * size, f32)
    tiled_matmul.launch(client, (size // 64, size // 64, 1), (128, 1, 1),
                        client.tensor(a.ravel()), client.tensor(b.ravel()), out, size)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out.numpy().reshape(size, size), want, atol=2e-3)


@cube(launch=True)
def staged(a: Array[f16], b: Array[f16], out: Array[f32]):
    """Each 16 x 16 tile copied global -> shared by the plane's units, then loaded."""
    sa = SharedMemory(f16, (16, 16))
    sb = SharedMemory(f16, 256)
    for r in range(8):
        i = r * 32 + UNIT_POS
        sa[i // 16, i % 16] = a[i]
        sb[i] = b[i]
    sync_cube()
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.0)
    cmma.load(fa, sa, 0, 16)
    cmma.load(fb, sb, 0, 16)
    cmma.execute(fa, fb, acc, acc)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)


def test_shared_memory_staging(client):
    a, b = _halves(16, 16), _halves(16, 16)
    out = client.zeros(256, f32)
    staged.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                  client.tensor(b.ravel()), out)
    np.testing.assert_allclose(out.numpy().reshape(16, 16),
                               a.astype(np.float32) @ b.astype(np.float32), atol=1e-4)


@cube
def multiply_into(fa, fb, acc):
    cmma.execute(fa, fb, acc, acc)


@cube(launch=True)
def through_device_function(a: Array[f16], b: Array[f16], out: Array[f32]):
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 1.0)
    cmma.load(fa, a, 0, 16)
    cmma.load(fb, b, 0, 16)
    multiply_into(fa, fb, acc)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)


def test_fragments_pass_to_device_functions(client):
    a, b = _halves(16, 16), _halves(16, 16)
    out = client.zeros(256, f32)
    through_device_function.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                                   client.tensor(b.ravel()), out)
    np.testing.assert_allclose(out.numpy().reshape(16, 16),
                               a.astype(np.float32) @ b.astype(np.float32) + 1, atol=1e-4)


# -- the cpu emulation's checks ---------------------------------------------------------

def test_checked_launch_reads_zero_and_drops_stores_out_of_range(client):
    """On CUDA the checked launch stages the tiles, so this holds there as well."""
    c = client
    a, b = _halves(16, 16), _halves(16, 16)
    ta = c.tensor(a[:10].ravel())  # rows 10..15 of A are past the end: they read 0
    out = c.zeros(16 * 12, f32)  # rows 12..15 of the result are past the end: dropped
    product_kernel(ROW, ROW, ROW).launch(c, (1, 1, 1), PLANE, ta, c.tensor(b.ravel()), out)
    a0 = a.astype(np.float32)
    a0[10:] = 0
    np.testing.assert_allclose(out.numpy().reshape(12, 16), (a0 @ b.astype(np.float32))[:12],
                               atol=1e-4)


def test_unchecked_cpu_launch_refuses_tiles_wmma_cannot_access():
    """wmma needs a 32-byte aligned tile and a stride of a multiple of 16 bytes; the
    cpu runtime enforces that in an unchecked launch, so the bug shows before CUDA."""
    c = cubepy.client("cpu")
    big = c.tensor(_halves(40, 48))
    b_flat = c.tensor(RNG.uniform(-1, 1, 20 * 16 + 3).astype(np.float16))
    out = c.zeros((32, 24), f32)
    line = sub_tiles.fn.__code__.co_firstlineno  # the decorator's line
    # row 5, col 7 of a 48-wide f16 tensor: element 247, 494 bytes
    with pytest.raises(LaunchError, match=rf"cmma.load at line {line + 6}: the tile starts "
                                          r"at element 247 \(494 bytes\), not a multiple "
                                          r"of 32 bytes"):
        sub_tiles.launch_unchecked(c, (1, 1, 1), PLANE, big, b_flat, out, 5, 7)
    # an aligned A tile; B from element 3 with a 20-element (40-byte) stride
    with pytest.raises(LaunchError, match=rf"cmma.load at line {line + 7}: the tile starts "
                                          r"at element 3 "):
        sub_tiles.launch_unchecked(c, (1, 1, 1), PLANE, big, b_flat, out, 4, 16)
    # the stride alone: 24 f32 elements of out are 96 bytes (fine), 20 f16 of b 40 bytes
    with pytest.raises(LaunchError, match=r"the stride 20 \(40 bytes\) is not a multiple "
                                          r"of 16 bytes"):
        strided_b.launch_unchecked(c, (1, 1, 1), PLANE, b_flat, c.zeros(256, f32))
    # checked, the same tiles are fine (test_nonzero_offsets_and_strides)
    sub_tiles.launch(c, (1, 1, 1), PLANE, big, b_flat, out, 5, 7)


def test_unchecked_cuda_launch_checks_tile_buffers_start_aligned():
    """An unchecked CUDA launch hands the buffers cmma tiles use to wmma directly: each
    must start 32-byte aligned (a foreign tensor or a view may not), a LaunchError
    naming the parameter otherwise. Only those buffers are checked."""
    from types import SimpleNamespace

    from cubepy.kernel import _check_tile_alignment, direct_tile_params
    kernel = sub_tiles._compile(sub_tiles._specialization(cubepy.CubeDim(*PLANE), {}),
                                "cuda", False).kernel
    aligned = direct_tile_params(kernel, sub_tiles.params)
    assert aligned == ((0, "a"), (1, "b"), (2, "out"))
    shared_only = staged._compile(staged._specialization(cubepy.CubeDim(*PLANE), {}),
                                  "cuda", False).kernel
    assert direct_tile_params(shared_only, staged.params) == ((2, "out"),)

    def buf(ptr):
        return SimpleNamespace(handle=SimpleNamespace(ptr=ptr))

    _check_tile_alignment("sub_tiles", (buf(0x1000), buf(0x2020), buf(0x3000), 5, 7),
                          aligned)
    with pytest.raises(LaunchError, match=r"sub_tiles: the buffer 'b' starts at device "
                                          r"address 0x2012, not a multiple of 32 bytes") as e:
        _check_tile_alignment("sub_tiles", (buf(0x1000), buf(0x2012), buf(0x3000), 5, 7),
                              aligned)
    assert e.value.param == "b"


@cube(launch=True)
def strided_b(b: Array[f16], out: Array[f32]):
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.COL_MAJOR)
    cmma.load(fb, b, 0, 20)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.0)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)


def test_unchecked_cpu_launch_runs_aligned_tiles():
    c = cubepy.client("cpu")
    a, b = _halves(16, 16), _halves(16, 16)
    out = c.zeros(256, f32)
    product_kernel(ROW, ROW, ROW).launch_unchecked(c, (1, 1, 1), PLANE, c.tensor(a.ravel()),
                                                   c.tensor(b.ravel()), out)
    np.testing.assert_allclose(out.numpy().reshape(16, 16),
                               a.astype(np.float32) @ b.astype(np.float32), atol=1e-4)


@cube(launch=True)
def misaligned_edge(a: Array[f16], out: Array[f32], offset: u32, out_offset: u32):
    """A tile at an odd offset running past the end of `a`, stored at an odd offset
    running past the end of `out`."""
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(fb, 1.0)
    cmma.fill(acc, 0.0)
    cmma.load(fa, a, offset, 17)
    cmma.execute(fa, fb, acc, acc)
    cmma.store(out, out_offset, acc, 17, cmma.COL_MAJOR)


def test_checked_misaligned_tile_past_the_end(client):
    """Odd offsets and strides with tiles partly past both buffers' ends: a checked
    launch reads 0 there and drops the stores (on CUDA through the staging tiles)."""
    a_full = RNG.uniform(-1, 1, 300).astype(np.float16)
    n_a = 3 + 17 * 9 + 5  # rows 9.. of the tile (and part of row 9) are past the end
    a_in = client.tensor(a_full[:n_a])
    n_out = 7 + 17 * 11 + 4
    out = client.tensor(np.full(n_out, -7.0, np.float32))
    misaligned_edge.launch(client, (1, 1, 1), PLANE, a_in, out, 3, 7)
    a = np.zeros(3 + 17 * 16, np.float32)
    a[:n_a] = a_full[:n_a]
    tile = np.stack([a[3 + 17 * r: 3 + 17 * r + 16] for r in range(16)])
    want_tile = tile @ np.ones((16, 16), np.float32)
    want = np.full(7 + 17 * 16, -7.0, np.float32)
    for c in range(16):  # column c of the result at 7 + 17 * c (col major)
        want[7 + 17 * c: 7 + 17 * c + 16] = want_tile[:, c]
    np.testing.assert_allclose(out.numpy(), want[:n_out], atol=1e-3)


@cube(launch=True)
def divergent_offset(a: Array[f16], out: Array[f32]):
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    cmma.load(fa, a, UNIT_POS, 16)


@cube(launch=True)
def partial_plane(out: Array[f32]):
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    if UNIT_POS < 16:
        cmma.fill(acc, 1.0)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)


def test_cpu_refuses_plane_divergent_cmma():
    c = cubepy.client("cpu")
    with pytest.raises(LaunchError, match="passed different offsets"):
        divergent_offset.launch(c, (1, 1, 1), PLANE, c.zeros(512, f16), c.zeros(1, f32))
    with pytest.raises(LaunchError, match="only some units of a plane"):
        partial_plane.launch(c, (1, 1, 1), PLANE, c.zeros(256, f32))


# -- generated source ---------------------------------------------------------------------

def test_cuda_source_of_the_basic_product():
    src = product_kernel(ROW, COL, ROW).source("cuda", cube_dim=PLANE, checked=False)
    assert "#include <mma.h>" in src
    assert ("nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __half, "
            "nvcuda::wmma::row_major> fa;") in src
    assert "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;" in src
    assert "nvcuda::wmma::mma_sync(c, fa, fb, c);" in src
    assert "nvcuda::wmma::store_matrix_sync(out, c, 16u, nvcuda::wmma::mem_row_major);" in src
    tf = product_kernel(ROW, ROW, ROW, k=8, elem=tf32).source("cuda", cube_dim=PLANE)
    assert "nvcuda::wmma::precision::tf32" in tf and "__float_to_tf32(fa.x[" in tf
    # checked: the f32 tile is staged, then rounded to tf32 after the fragment load
    assert "cube_cmma_load_a_16x16x8_tf32_row(fa, a, 0u, 8u, info.a_buffer_len" in tf


def test_checked_cuda_stages_tiles_and_unchecked_accesses_directly():
    """A checked launch moves each tile through the plane's aligned shared staging tile,
    element by element against the buffer's length; an unchecked one calls wmma on the
    buffer itself."""
    checked = sub_tiles.source("cuda", cube_dim=(64, 1, 1))
    # two planes, each a tile of the largest fragment moved (16 x 16 f32: 1024 bytes)
    assert "__shared__ __align__(32) unsigned char cube_cmma_staging[2048];" in checked
    assert ("unsigned char* const cube_cmma_tile = cube_cmma_staging + "
            "(cube_unit_pos / 32u) * 1024u;") in checked
    assert "const unsigned cube_cmma_lane = cube_unit_pos % 32u;" in checked
    for call in ("cube_cmma_load_a_16x16x16_f16_row(fa, a, ",
                 "cube_cmma_load_b_16x16x16_f16_col(fb, b, 3u, 20u, info.b_buffer_len, "
                 "cube_cmma_tile, cube_cmma_lane);",
                 "cube_cmma_store_accumulator_16x16x16_f32_row(out, "):
        assert call in checked, call
    assert "tile[e] = i < len ? buf[i] : __half(0.0f);" in checked  # past the end: 0
    assert "if (i < len) {\n            buf[i] = tile[e];" in checked  # else dropped
    assert "nvcuda::wmma::load_matrix_sync(frag, tile, 16);" in checked
    assert "nvcuda::wmma::store_matrix_sync(tile, frag, 16, " in checked
    assert checked.count("__syncwarp();") == 6
    assert "load_matrix_sync(fa, a" not in checked and "store_matrix_sync(out" not in checked

    unchecked = sub_tiles.source("cuda", cube_dim=(64, 1, 1), checked=False)
    assert "cube_cmma" not in unchecked and "__syncwarp" not in unchecked
    assert "nvcuda::wmma::load_matrix_sync(fb, b + 3u, 20u);" in unchecked
    assert "buffer_len" not in unchecked


@cube(launch=True)
def shared_at(a: Array[f16], out: Array[f32], offset: u32):
    """A tile of shared memory at a runtime offset (staged in a checked launch) and one
    at offset 16 with stride 24 (constant, aligned, inside: direct), and one past the
    array's end at a constant offset (staged)."""
    s = SharedMemory(f16, 400)
    for r in range(13):
        i = r * 32 + UNIT_POS
        if i < 400:
            s[i] = a[i]
    sync_cube()
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fc = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.COL_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.0)
    cmma.load(fa, s, offset, 16)
    cmma.load(fb, s, 16, 24)
    cmma.execute(fa, fb, acc, acc)
    cmma.load(fc, s, 32, 24)  # its last column ends at 32 + 15 * 24 + 16 = 408 > 400
    cmma.execute(fa, fc, acc, acc)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)


def test_shared_tiles_are_aligned_and_staged_unless_provably_safe():
    checked = shared_at.source("cuda", cube_dim=PLANE)
    assert "__shared__ __align__(32) __half s[400];" in checked
    assert "cube_cmma_load_a_16x16x16_f16_row(fa, s, offset, 16u, 400u, " in checked
    assert "nvcuda::wmma::load_matrix_sync(fb, s + 16u, 24u);" in checked
    assert "cube_cmma_load_b_16x16x16_f16_col(fc, s, 32u, 24u, 400u, " in checked
    unchecked = shared_at.source("cuda", cube_dim=PLANE, checked=False)
    assert "__shared__ __align__(32) __half s[400];" in unchecked
    assert "nvcuda::wmma::load_matrix_sync(fc, s + 32u, 24u);" in unchecked
    assert "cube_cmma" not in unchecked
    # every tile constant, aligned and inside: no staging memory at all
    direct = staged.source("cuda", cube_dim=PLANE)
    assert "nvcuda::wmma::load_matrix_sync(fa, sa, 16u);" in direct
    assert "cube_cmma_load" not in direct
    assert "cube_cmma_store_accumulator_16x16x16_f32_row(out, " in direct  # global


def test_shared_tiles_on_every_runtime(client):
    """The checked launch of shared_at: the staged and the direct shared tiles agree
    with numpy, the part of the last tile past the array reading 0."""
    a = RNG.uniform(-1, 1, 400).astype(np.float16)
    out = client.zeros(256, f32)
    shared_at.launch(client, (1, 1, 1), PLANE, client.tensor(a), out, 7)
    flat = np.zeros(440, np.float32)
    flat[:400] = a
    ta = np.stack([flat[7 + 16 * r: 7 + 16 * r + 16] for r in range(16)])
    tb = np.stack([flat[16 + 24 * r: 16 + 24 * r + 16] for r in range(16)])
    tc = np.stack([flat[32 + 24 * c: 32 + 24 * c + 16] for c in range(16)], axis=1)
    np.testing.assert_allclose(out.numpy().reshape(16, 16), ta @ tb + ta @ tc, atol=1e-3)


def test_staging_counts_against_the_shared_memory_limit():
    """The staging tiles of a checked CUDA launch are shared memory the kernel did not
    declare: with them a kernel over the device's limit is a LaunchError before the
    driver sees it; unchecked (no staging) the same kernel fits."""
    from types import SimpleNamespace

    from cubepy.kernel import _check_shared_memory

    @cube(launch=True)
    def big_shared(a: Array[f16], out: Array[f32]):
        s = SharedMemory(f16, 24 * 1024 - 256)  # 48 KB less 512 bytes
        s[UNIT_POS] = a[UNIT_POS]
        sync_cube()
        fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
        cmma.load(fa, s, 0, 16)
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.fill(acc, 0.0)
        cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)

    cuda = SimpleNamespace(target="cuda", runtime="cuda", device="H200",
                           limits=SimpleNamespace(max_shared_bytes=48 * 1024))
    spec = big_shared._specialization(cubepy.CubeDim(*PLANE), {})
    compiled = {checked: big_shared._compile(spec, "cuda", checked) for checked in (True, False)}
    for checked, staging in ((True, 1024), (False, 0)):
        assert compiled[checked].artefact.shared_bytes == 48 * 1024 - 512 + staging
    with pytest.raises(LaunchError, match=r"cmma staging tiles of the checked launch: "
                                          r"1024 bytes.*max_shared_bytes"):
        _check_shared_memory("big_shared", cuda, compiled[True].kernel, None,
                             compiled[True].artefact.shared_bytes)
    _check_shared_memory("big_shared", cuda, compiled[False].kernel, None,
                         compiled[False].artefact.shared_bytes)


@pytest.mark.nvcc
@pytest.mark.parametrize("kernel,spec", [
    (product_kernel(ROW, COL, COL), {}),
    (product_kernel(COL, ROW, ROW, m=32, n=8), {}),
    (product_kernel(ROW, ROW, ROW, acc=f16), {}),
    (product_kernel(ROW, COL, ROW, k=8, elem=tf32), {}),
    (bf16_product, {}),
    (multiply_add, {}),
    (sub_tiles, {}),
    (staged, {}),
    (through_device_function, {}),
    (misaligned_edge, {}),
    (shared_at, {}),
], ids=["f16", "32x8x16", "f16_acc", "tf32", "bf16", "load_with_layout_cast", "offsets",
        "shared", "device_fn", "misaligned_edge", "shared_at"])
@pytest.mark.parametrize("checked", [True, False])
def test_cuda_compiles_with_nvcc(tmp_path, kernel, spec, checked):
    validate_sources(kernel, tmp_path, cube_dim=PLANE, targets=("cuda",), checked=checked,
                     **spec)


def test_tiled_matmul_compiles_with_nvcc(tmp_path):
    validate_sources(tiled_matmul, tmp_path, cube_dim=(128, 1, 1), targets=("cuda",))


@cube(launch=True)
def metal_product(a: Array[f16], b: Array[f16], c: Array[f32], out: Array[f32],
                  out16: Array[f16]):
    sa = SharedMemory(f16, 64)
    sa[UNIT_POS] = a[UNIT_POS]
    sa[UNIT_POS + 32] = a[UNIT_POS + 32]
    sync_cube()
    fa = cmma.Matrix(cmma.A, 8, 8, 8, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrices(2, cmma.B, 8, 8, 8, f16, cmma.COL_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 8, 8, 8, f16)
    acc32 = cmma.Matrix(cmma.ACCUMULATOR, 8, 8, 8, f32)
    cmma.fill(acc, 0.0)
    cmma.load(fa, sa, 0, 8)
    for j in range(2):
        cmma.load(fb[j], b, j * 64, 8)
        cmma.execute(fa, fb[j], acc, acc)
    cmma.store(out16, 0, acc, 8, cmma.COL_MAJOR)
    cmma.load_with_layout(acc32, c, 0, 8, cmma.ROW_MAJOR)
    wide = cmma.cast(acc, f32)
    cmma.store(out, 0, wide, 8, cmma.ROW_MAJOR)
    cmma.store(out, 64, acc32, 8, cmma.ROW_MAJOR)


@pytest.mark.clang
def test_metal_compiles_with_clang(tmp_path):
    validate_sources(metal_product, tmp_path, cube_dim=PLANE, targets=("metal",))


def test_metal_source():
    src = metal_product.source("metal", cube_dim=PLANE)
    assert "#include <metal_simdgroup_matrix>" in src
    assert "simdgroup_matrix<half, 8, 8> fb[2];" in src
    assert "simdgroup_load(fb[j], b + (int)((uint)j * 64u), 8u, ulong2(0, 0), true);" in src
    assert "wide.thread_elements()[1] = float(acc.thread_elements()[1]);" in src
    assert "simdgroup_multiply_accumulate(acc, fa, fb[j], acc);" in src
    assert "acc = make_filled_simdgroup_matrix<half, 8, 8>(" in src
    assert "simdgroup_store(acc, out16, 8u, ulong2(0, 0), true);" in src


def test_metal_product_on_the_cpu_runtime():
    """The 8x8x8 kernel written for Metal runs on the cpu runtime too."""
    c = cubepy.client("cpu")
    a, b = _halves(8, 8), _halves(8, 16)
    c0 = RNG.uniform(-1, 1, (8, 8)).astype(np.float32)
    out, out16 = c.zeros(128, f32), c.zeros(64, f16)
    b_mem = np.concatenate([b[:, :8].T.ravel(), b[:, 8:].T.ravel()])  # two col-major tiles
    metal_product.launch(c, (1, 1, 1), PLANE, c.tensor(a.ravel()), c.tensor(b_mem),
                         c.tensor(c0.ravel()), out, out16)
    half_sum = (a.astype(np.float32) @ b[:, :8].astype(np.float32)).astype(np.float16)
    want16 = (half_sum.astype(np.float32)
              + a.astype(np.float32) @ b[:, 8:].astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(out16.numpy().reshape(8, 8).T, want16)
    np.testing.assert_array_equal(out.numpy()[:64].reshape(8, 8), want16.astype(np.float32))
    np.testing.assert_array_equal(out.numpy()[64:].reshape(8, 8), c0)


def test_wgsl_has_no_matrix_units():
    with pytest.raises(CompileError) as info:
        product_kernel(ROW, ROW, ROW).source("wgsl", cube_dim=PLANE)
    _error_at(info.value, "wgsl", "WGSL has no matrix units (cmma)", "WebGPU exposes none")
    assert "fa = cmma.Matrix(cmma.A, m, n, k, elem, la)" in str(info.value)


# -- compile errors ---------------------------------------------------------------------

def _build_error(fn, target="cuda") -> CompileError:
    with pytest.raises(CompileError) as info:
        cube(launch=True)(fn).source(target, cube_dim=PLANE)
    return info.value


def test_shape_no_target_has():
    def k(a: Array[f16]):
        fa = cmma.Matrix(cmma.A, 16, 16, 8, f16, cmma.ROW_MAJOR)  # E:shape
    _error_at(_build_error(k), "shape", "no target has a 16x16x8 f16 A fragment",
              "16x16x16")


def test_shape_the_target_lacks_names_the_target():
    def k(a: Array[f16]):
        fa = cmma.Matrix(cmma.A, 8, 8, 8, f16, cmma.ROW_MAJOR)  # E:cuda_shape
    _error_at(_build_error(k), "cuda_shape", "CUDA has no 8x8x8 f16 A fragment")


def test_mixed_multiply_the_target_lacks():
    def k(a: Array[f16], c: Array[f32]):
        fa = cmma.Matrix(cmma.A, 8, 8, 8, f16, cmma.ROW_MAJOR)
        fb = cmma.Matrix(cmma.B, 8, 8, 8, f16, cmma.ROW_MAJOR)
        acc = cmma.Matrix(cmma.ACCUMULATOR, 8, 8, 8, f32)
        cmma.execute(fa, fb, acc, acc)  # E:mixed
    _error_at(_build_error(k, "metal"), "mixed", "Metal has no 8x8x8 multiply of f16 into "
                                                 "f32", "f16 A/B into f16: 8x8x8")


def test_element_type_errors():
    def k(a: Array[f16]):
        fa = cmma.Matrix(cmma.A, 16, 16, 16, u32, cmma.ROW_MAJOR)  # E:elem
    _error_at(_build_error(k), "elem", "f16, bf16, f32 or tf32 elements, not u32")

    def k2(a: Array[f32]):
        fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
        cmma.load(fa, a, 0, 16)  # E:buffer_elem
    _error_at(_build_error(k2), "buffer_elem", "'a' holds f32, but the fragment 'fa' holds f16")

    def k3(a: Array[f16]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 8, tf32)  # E:tf32_acc
    _error_at(_build_error(k3), "tf32_acc", "tf32 is an A/B element type")


def test_k_must_match():
    def k(a: Array[f16]):
        fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
        fb = cmma.Matrix(cmma.B, 16, 16, 8, tf32, cmma.ROW_MAJOR)
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.execute(fa,
                     fb, acc, acc)  # E:k
    _error_at(_build_error(k), "k", "their k must match")


def test_fragments_are_not_values():
    def reassign(a: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)  # E:reassign
    _error_at(_build_error(reassign), "reassign", "cannot assign to the cmma fragment 'acc'")

    def arithmetic(a: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        a[0] = acc + 1.0  # E:arith
    _error_at(_build_error(arithmetic), "arith", "cmma fragment 'acc' cannot be used as a "
                                                 "value")

    def element(a: Array[f32]):
        accs = cmma.Matrices(2, cmma.ACCUMULATOR, 16, 16, 16, f32)
        accs[0] = 1.0  # E:element
    _error_at(_build_error(element), "element", "cannot assign to an element of the cmma "
                                                "fragments 'accs'")


@cube
def give_back():
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    return acc  # E:return


def test_fragments_cannot_be_returned():
    def k(a: Array[f32]):
        give_back()
    _error_at(_build_error(k), "return", "cannot be used as a value")


def test_tf32_only_in_fragments():
    def shared(a: Array[f32]):
        s = SharedMemory(tf32, 16)  # E:tf32_shared
    _error_at(_build_error(shared), "tf32_shared", "tf32 is only the element type of a "
                                                   "cmma fragment")

    def cast(a: Array[f32]):
        a[0] = tf32(a[1])  # E:tf32_cast
    _error_at(_build_error(cast), "tf32_cast", "tf32 is only the element type")
    with pytest.raises(TypeError, match="only the element type of a cmma fragment"):
        Array[tf32]


def test_sizes_must_be_known_at_compile_time():
    def k(a: Array[f16], m: u32):
        fa = cmma.Matrix(cmma.A, m, 16, 16, f16, cmma.ROW_MAJOR)  # E:runtime_m
    _error_at(_build_error(k), "runtime_m", "m of a cmma fragment must be a positive int "
                                            "known at compile time")


def test_layouts_and_roles():
    def acc_layout(a: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32, cmma.ROW_MAJOR)  # E:acc_layout
    _error_at(_build_error(acc_layout), "acc_layout", "an accumulator has no layout")

    def a_without(a: Array[f16]):
        fa = cmma.Matrix(cmma.A, 16, 16, 16, f16)  # E:no_layout
    _error_at(_build_error(a_without), "no_layout", "an A fragment needs a layout")

    def load_acc(a: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.load(acc, a, 0, 16)  # E:load_acc
    _error_at(_build_error(load_acc), "load_acc", "cmma.load_with_layout")


def test_names_outside_kernels():
    with pytest.raises(TypeError, match="can only be called inside a @cube function"):
        cmma.fill(None, 0.0)
    assert cmma.MatrixIdent.Accumulator is cmma.ACCUMULATOR
    assert cmma.MatrixLayout.RowMajor is cmma.ROW_MAJOR


# -- the example --------------------------------------------------------------------------

def test_example_matmul(client, capsys):
    from examples_loader import load_example
    example = load_example("cmma_matmul")
    assert example.main(["--runtime", client.runtime, "--size", "128"]) == 0
    out = capsys.readouterr().out
    assert "result:  OK" in out and f"runtime: {client.runtime}" in out


@pytest.mark.nvcc
def test_example_compiles_with_nvcc(tmp_path):
    from examples_loader import load_example
    validate_sources(load_example("cmma_matmul").matmul, tmp_path, cube_dim=(128, 1, 1),
                     targets=("cuda",))


@cube(launch=True)
def from_views(a: Array[f16], b: Array[f16], out: Array[f32]):
    va = a[256:]  # a view: offsets count from its first element
    vo = out[16:]
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.0)
    cmma.load(fa, va, 0, 16)
    cmma.load(fb, b, 0, 16)
    cmma.execute(fa, fb, acc, acc)
    cmma.store(vo, 0, acc, 16, cmma.ROW_MAJOR)


def test_views_offset_loads_and_stores(client):
    a, b = _halves(32, 16), _halves(16, 16)
    out = client.zeros(16 + 256, f32)
    from_views.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                      client.tensor(b.ravel()), out)
    got = out.numpy()
    assert not got[:16].any()
    np.testing.assert_allclose(got[16:].reshape(16, 16),
                               a[16:].astype(np.float32) @ b.astype(np.float32), atol=1e-4)


def test_cmma_inside_and_or_is_an_error():
    def k(a: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        ok = a[0] > 0.0 and cmma.fill(acc, 1.0)  # E:divergent
    _error_at(_build_error(k), "divergent", "cmma.fill() cannot be used inside")


@pytest.mark.nvcc
@pytest.mark.parametrize("checked", [True, False])
def test_views_compile_with_nvcc(tmp_path, checked):
    src = validate_sources(from_views, tmp_path, cube_dim=PLANE, targets=("cuda",),
                           checked=checked)["cuda"]
    if checked:  # the view's start is the staged tile's offset
        assert "cube_cmma_load_a_16x16x16_f16_row(fa, a, view_start, 16u, " in src
    else:
        assert "load_matrix_sync(fa, a + view_start, 16u);" in src


# -- bf16 fragments from shared memory ------------------------------------------------

def bf16_shared_kernel(la, lb, m, n, k):
    """d = a @ b in bf16 for one tile, A and B copied into shared memory first and the
    fragments loaded from there (as a tiled matmul does)."""
    lda = k if la is ROW else m
    ldb = n if lb is ROW else k

    @cube(launch=True)
    def product(a: Array[bf16], b: Array[bf16], out: Array[f32]):
        a_s = SharedMemory(bf16, m * k)
        b_s = SharedMemory(bf16, k * n)
        for i in range(UNIT_POS, m * k, 32):
            a_s[i] = a[i]
        for i in range(UNIT_POS, k * n, 32):
            b_s[i] = b[i]
        sync_cube()
        fa = cmma.Matrix(cmma.A, m, n, k, bf16, la)
        fb = cmma.Matrix(cmma.B, m, n, k, bf16, lb)
        c = cmma.Matrix(cmma.ACCUMULATOR, m, n, k, f32)
        cmma.fill(c, 0.0)
        cmma.load(fa, a_s, 0, lda)
        cmma.load(fb, b_s, 0, ldb)
        cmma.execute(fa, fb, c, c)
        cmma.store(out, 0, c, n, cmma.ROW_MAJOR)
    return product


BF16_SHARED = [(ROW, ROW, 16, 16, 16), (COL, ROW, 32, 8, 16), (ROW, COL, 8, 32, 16)]
BF16_SHARED_IDS = ["row_row_16x16x16", "col_row_32x8x16", "row_col_8x32x16"]


@pytest.mark.parametrize("checked", [True, False])
def test_bf16_fragments_load_from_shared_memory_with_the_shared_form(checked):
    # mma.h's bf16 load_matrix_sync compiles to the generic-address wmma.load, which
    # ptxas cannot make an ldmatrix: cubepy writes the `.shared` PTX form itself, for a
    # direct load and for the checked launch's staging tile alike
    source = bf16_shared_kernel(ROW, COL, 16, 16, 16).source("cuda", cube_dim=PLANE,
                                                              checked=checked)
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16" in source
    assert "wmma.load.b.sync.aligned.col.m16n16k16.shared.bf16" in source
    assert "load_matrix_sync" not in source
    staged = bf16_product.source("cuda", cube_dim=PLANE, checked=checked)
    # from global memory: direct (unchecked) keeps mma.h; staged (checked) reads shared
    assert ("shared.bf16" in staged) == checked


@pytest.mark.nvcc
@pytest.mark.parametrize("la,lb,m,n,k", BF16_SHARED, ids=BF16_SHARED_IDS)
@pytest.mark.parametrize("checked", [True, False])
def test_bf16_shared_loads_compile_with_nvcc(tmp_path, la, lb, m, n, k, checked):
    validate_sources(bf16_shared_kernel(la, lb, m, n, k), tmp_path, cube_dim=PLANE,
                     targets=("cuda",), checked=checked)


@pytest.mark.cuda
@pytest.mark.skipif(not _present("cuda"), reason="no CUDA device")
@pytest.mark.parametrize("la,lb,m,n,k", BF16_SHARED, ids=BF16_SHARED_IDS)
@pytest.mark.parametrize("checked", [True, False])
def test_bf16_product_from_shared_memory_on_cuda(la, lb, m, n, k, checked):
    c = cubepy.client("cuda")
    if bf16 not in c.limits.dtypes:
        pytest.skip("the device has no bf16 (sm_80+)")
    a = RNG.integers(-4, 5, (m, k)).astype(np.float32)  # small integers: exact in bf16
    b = RNG.integers(-4, 5, (k, n)).astype(np.float32)
    ta, tb = c.zeros(m * k, bf16), c.zeros(k * n, bf16)
    to_bf16.launch(c, (m * k // 32, 1, 1), PLANE, c.tensor(_memory(a, la)), ta)
    to_bf16.launch(c, (k * n // 32, 1, 1), PLANE, c.tensor(_memory(b, lb)), tb)
    out = c.zeros(m * n, f32)
    kernel = bf16_shared_kernel(la, lb, m, n, k)
    launch = kernel.launch if checked else kernel.launch_unchecked
    launch(c, (1, 1, 1), PLANE, ta, tb, out)
    np.testing.assert_array_equal(out.numpy().reshape(m, n), a @ b)
