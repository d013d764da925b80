"""The warpgroup matrix multiply on 8-bit floats: cmma.wg_mma with e4m3/e5m2 A and B
(wgmma's k32: any pair of the two types, B stored n x k and read K-major), and
cmma.wg_offset's 8-bit layout (16 elements to a core matrix row).

Runtime tests run on the cpu runtime's emulation against numpy and, marked `cuda`, on a
Hopper GPU; the source compiles with nvcc for sm_90a; what PTX lacks (a row-major 8-bit
B, an 8-bit A with a 16-bit B) is a CompileError at the user's line.
"""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, Array, CompileError, Comptime, SharedMemory, cmma, cube, e4m3,
                    e5m2, f16, f32, sync_cube, u32, unroll)
from cubepy import fp8
from cubepy import wgmma_layout as layout
from error_markers import located_error_checker
from source_check import NVCC, check_cuda
from test_lang_wgmma import CLIENTS

COL = cmma.COL_MAJOR
RNG = np.random.default_rng(8)
_error_at = located_error_checker(__file__)


@pytest.fixture(params=CLIENTS)
def client(request):
    return cubepy.client(request.param)


def test_the_8_bit_layout_has_16_elements_to_a_core_row():
    rows = 64
    assert layout.offset(0, 15, rows, 0, 1) == 15  # one 16-byte row of a core matrix
    assert layout.offset(1, 0, rows, 0, 1) == 16  # the next row: 16 bytes on
    assert layout.offset(8, 0, rows, 0, 1) == 128  # the core below: 128 bytes on
    assert layout.offset(0, 16, rows, 0, 1) == rows * 16  # next column of cores
    assert cmma.wg_offset_host(8, 16, rows, 0, e4m3) == rows * 16 + 128
    assert cmma.wg_offset_host(8, 16, rows, 0) == layout.offset(8, 16, rows)  # f16's
    for swizzle in (0, 128):
        r, c = np.meshgrid(np.arange(rows), np.arange(128), indexing="ij")
        got = layout.offset(r, c, rows, swizzle, 1)
        assert sorted(got.ravel()) == list(range(rows * 128))  # a permutation
    # the swizzle: 128 elements a row, chunk c of row r at chunk c ^ (r % 8)
    assert layout.offset(1, 0, 8, 128, 1) == 128 + 16
    assert layout.offset(0, 128, 8, 128, 1) == 8 * 128  # the next block of 128 columns


@pytest.mark.parametrize("swizzle", [0, 128])
def test_descriptors_read_what_the_8_bit_wg_offset_stored(swizzle):
    """A (64 x 32) and a col-major B (n x 32) as wgmma reads them through the
    descriptors are where wg_offset(..., elem=e4m3) put them, at every k32 step."""
    for step in range(2):
        m, k = np.meshgrid(np.arange(64), np.arange(32), indexing="ij")
        start = layout.offset(0, 32 * step, 64, swizzle, 1)
        np.testing.assert_array_equal(
            layout.element_offsets("a", 64, "row_major", 64, 32, start, swizzle, 1),
            layout.offset(m, k + 32 * step, 64, swizzle, 1))
        j, k = np.meshgrid(np.arange(128), np.arange(32), indexing="ij")
        start = layout.offset(0, 32 * step, 128, swizzle, 1)
        np.testing.assert_array_equal(
            layout.element_offsets("b", 128, "col_major", 128, 32, start, swizzle, 1),
            layout.offset(j, k + 32 * step, 128, swizzle, 1))


@cube(launch=True)
def offsets8(out: Array[u32], rows: Comptime[int], cols: Comptime[int],
             swizzle: Comptime[int]):
    i = cubepy.ABSOLUTE_POS
    if i < rows * cols:
        out[i] = cmma.wg_offset(i // cols, i % cols, rows, swizzle, e4m3)


@pytest.mark.parametrize("rows,cols,swizzle", [(64, 32, 0), (16, 256, 0), (64, 128, 128),
                                               (8, 256, 128)])
def test_wg_offset_of_8_bit_elements_in_a_kernel(rows, cols, swizzle):
    client = cubepy.client("cpu")
    out = client.zeros(rows * cols, u32)
    offsets8.launch(client, (rows * cols // 64, 1, 1), (64, 1, 1), out, rows=rows,
                    cols=cols, swizzle=swizzle)
    r, c = np.divmod(np.arange(rows * cols), cols)
    np.testing.assert_array_equal(out.numpy(), layout.offset(r, c, rows, swizzle, 1))


@cube(launch=True)
def fp8_product(a: Array[e4m3], b: Array[e5m2], out: Array[f32], n: Comptime[int],
                k: Comptime[int], swizzle: Comptime[int]):
    """out = a @ b.T for one warpgroup: a (64 x k) e4m3, b (n x k) e5m2 (B stored n x k,
    K-major), k / 32 multiplies in one commit group."""
    a_s = SharedMemory(e4m3, 64 * k)
    b_s = SharedMemory(e5m2, n * k)
    acc = cmma.WarpgroupAccumulator(n, f32)
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, 64 * k, 128):
        a_s[cmma.wg_offset(i // k, i % k, 64, swizzle, e4m3)] = a[i]
    for i in range(UNIT_POS, n * k, 128):
        b_s[cmma.wg_offset(i // k, i % k, n, swizzle, e5m2)] = b[i]
    sync_cube()
    cmma.wg_fence()
    for s in unroll(range(k // 32)):
        cmma.wg_mma(acc, a_s, cmma.wg_offset(0, s * 32, 64, swizzle, e4m3), 64,
                    b_s, cmma.wg_offset(0, s * 32, n, swizzle, e5m2), n, COL, swizzle)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, 0, acc, n, cmma.ROW_MAJOR)


def _fp8_values(fmt: str, *shape) -> np.ndarray:
    return fp8.round_to(RNG.uniform(-4, 4, shape).astype(np.float32), fmt)


@pytest.mark.parametrize("n, k, swizzle", [(64, 32, 0), (128, 64, 0), (256, 128, 128)])
def test_fp8_product(client, n, k, swizzle):
    a, b = _fp8_values("e4m3", 64, k), _fp8_values("e5m2", n, k)
    ta = client.zeros(a.size, e4m3).copy_(a.ravel())
    tb = client.zeros(b.size, e5m2).copy_(b.ravel())
    out = client.zeros(64 * n, f32)
    fp8_product.launch(client, (1, 1, 1), (128, 1, 1), ta, tb, out, n=n, k=k,
                       swizzle=swizzle)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    # The products are exact, but Hopper's tensor cores add fp8 products with fewer
    # mantissa bits than f32 (about 13): the error is bounded by the sum of |products|.
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64).T
    assert np.all(np.abs(out.numpy().reshape(64, n) - want) <= 1e-3 * scale + 1e-6)


def test_cuda_source_issues_k32_without_transposes(tmp_path):
    src = fp8_product.source("cuda", cube_dim=(128, 1, 1), n=64, k=64, swizzle=0)
    assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2" in src
    assert "p, 1, 1;" in src  # scale-d, imm-scale-a, imm-scale-b: no imm-trans
    assert "__shared__ __align__(128) __nv_fp8_e4m3" in src
    if NVCC:
        check_cuda(src, tmp_path, arch="sm_90a", name="fp8_product")
        src = fp8_product.source("cuda", cube_dim=(128, 1, 1), n=128, k=128, swizzle=128)
        check_cuda(src, tmp_path, arch="sm_90a", name="fp8_product_sw128")


@cube(launch=True)
def b_row_major(out: Array[f32]):
    a_s = SharedMemory(e4m3, 64 * 32)
    b_s = SharedMemory(e4m3, 64 * 32)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 32, cmma.ROW_MAJOR)  # E:row
    cmma.store(out, 0, acc, 64, cmma.ROW_MAJOR)


@cube(launch=True)
def mixed_widths(out: Array[f32]):
    a_s = SharedMemory(e4m3, 64 * 32)
    b_s = SharedMemory(f16, 64 * 32)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 64, COL)  # E:mixed
    cmma.store(out, 0, acc, 64, cmma.ROW_MAJOR)


@cube(launch=True)
def bad_offset_type(out: Array[u32]):
    out[0] = cmma.wg_offset(0, 0, 8, 0, f32)  # E:elem


def test_an_8_bit_b_must_be_col_major():
    with pytest.raises(CompileError) as e:
        b_row_major.source("cuda", cube_dim=(128, 1, 1))
    _error_at(e.value, "row", "an 8-bit B is read K-major only", "cmma.COL_MAJOR")


def test_8_bit_and_16_bit_inputs_do_not_mix():
    with pytest.raises(CompileError) as e:
        mixed_widths.source("cuda", cube_dim=(128, 1, 1))
    _error_at(e.value, "mixed", "A holds e4m3, B holds f16")


def test_wg_offset_takes_only_the_multiply_s_element_types():
    with pytest.raises(CompileError) as e:
        bad_offset_type.source("cuda")
    _error_at(e.value, "elem", "f16, bf16, e4m3 or e5m2")


def test_wgsl_has_neither_fp8_nor_the_multiply():
    with pytest.raises(CompileError, match="WGSL has no"):
        fp8_product.source("wgsl", cube_dim=(128, 1, 1), n=64, k=32, swizzle=0)
