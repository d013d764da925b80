"""cmma.scale(acc, factor): an accumulator's elements multiplied by a factor, in its own
element type, on a plane's fragment (wmma, simdgroup_matrix) and on a warpgroup's; and
cmma.scale_rows / scale_cols, a warpgroup accumulator's rows or columns each by its own
factor.

Runtime tests run on the cpu runtime's emulation against numpy and, marked `cuda`, on a
GPU; the CUDA is compiled by nvcc and the MSL by clang++ against the Metal shim. Errors
are CompileErrors at the user's line, marked `# E:<tag>`."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, Array, CompileError, LaunchError, SharedMemory, cmma, cube, f16,
                    f32, u32)
from error_markers import located_error_checker
from source_check import NVCC, check_cuda, validate_sources
from test_lang_cmma import CLIENTS
from test_lang_wgmma import CLIENTS as HOPPER
from test_lang_wgmma import multiply_64x16_by_16x64
PLANE = (32, 1, 1)
RNG = np.random.default_rng(23)
_error_at = located_error_checker(__file__)


def _halves(*shape) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float16)


@cube(launch=True)
def gemm_alpha_beta(a: Array[f16], b: Array[f16], c: Array[f32], out: Array[f32],
                    out16: Array[f16], alpha: f32, beta: f32):
    """out = alpha * a @ b + beta * c for one 16 x 16 tile, as CUDA's wmma sample
    computes it with the fragment's elements: the accumulator starts as c scaled by
    beta / alpha, and the sum is scaled by alpha. out16 is the f16 accumulator of
    a @ b scaled by 0.5."""
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    acc16 = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f16)
    cmma.load_with_layout(acc, c, 0, 16, cmma.ROW_MAJOR)
    cmma.scale(acc, beta / alpha)
    cmma.load(fa, a, 0, 16)
    cmma.load(fb, b, 0, 16)
    cmma.execute(fa, fb, acc, acc)
    cmma.scale(acc, alpha)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)
    cmma.fill(acc16, 0.0)
    cmma.execute(fa, fb, acc16, acc16)
    cmma.scale(acc16, 0.5)
    cmma.store(out16, 0, acc16, 16, cmma.ROW_MAJOR)


@pytest.fixture(params=CLIENTS)
def client(request):
    return cubepy.client(request.param)


@pytest.mark.parametrize("alpha,beta", [(1.5, -0.25), (-2.0, 0.0)])
def test_alpha_beta_product(client, alpha, beta):
    a, b = _halves(16, 16), _halves(16, 16)
    c0 = RNG.uniform(-1, 1, (16, 16)).astype(np.float32)
    out, out16 = client.zeros(256, f32), client.zeros(256, f16)
    gemm_alpha_beta.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                           client.tensor(b.ravel()), client.tensor(c0.ravel()), out, out16,
                           alpha, beta)
    product = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out.numpy().reshape(16, 16), alpha * product + beta * c0,
                               atol=2e-5 * 16, rtol=1e-5)
    # the f16 accumulator's sum is the device's own (f16 additions in an order of its
    # choosing); halving it is exact, so within one f16 step of half the f32 product
    got16 = out16.numpy().reshape(16, 16).astype(np.float32)
    np.testing.assert_allclose(got16, 0.5 * product, atol=8e-3)


def test_cpu_halving_of_an_f16_accumulator_is_exact():
    """On the emulation an f16 accumulator holds the product rounded to f16 (a matmul in
    f32, as `cpu_cmma.execute` computes it), and halving it is exact: out16 is exactly
    half of that, bit for bit."""
    client = cubepy.client("cpu")
    a, b = _halves(16, 16), _halves(16, 16)
    out, out16 = client.zeros(256, f32), client.zeros(256, f16)
    gemm_alpha_beta.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                           client.tensor(b.ravel()), client.tensor(np.zeros(256, np.float32)),
                           out, out16, 1.0, 0.0)
    acc16 = np.matmul(a.astype(np.float32)[None], b.astype(np.float32)[None])[0]
    want = acc16.astype(np.float16) * np.float16(0.5)
    np.testing.assert_array_equal(out16.numpy().reshape(16, 16), want)


def test_cuda_source_multiplies_each_element_in_the_accumulators_type():
    src = gemm_alpha_beta.source("cuda", cube_dim=PLANE, checked=False)
    assert "const float cube_f" in src and "const __half cube_f" in src
    assert ".num_elements; ++" in src and "acc.x[" in src and "* cube_f" in src


@pytest.mark.nvcc
@pytest.mark.parametrize("checked", [True, False])
def test_cuda_compiles_with_nvcc(tmp_path, checked):
    validate_sources(gemm_alpha_beta, tmp_path, cube_dim=PLANE, targets=("cuda",),
                     checked=checked)


@cube(launch=True)
def metal_scaled(a: Array[f16], b: Array[f16], out: Array[f32], out16: Array[f16],
                 factor: f32):
    fa = cmma.Matrix(cmma.A, 8, 8, 8, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 8, 8, 8, f16, cmma.ROW_MAJOR)
    acc16 = cmma.Matrix(cmma.ACCUMULATOR, 8, 8, 8, f16)
    cmma.fill(acc16, 0.0)
    cmma.load(fa, a, 0, 8)
    cmma.load(fb, b, 0, 8)
    cmma.execute(fa, fb, acc16, acc16)
    cmma.scale(acc16, f16(factor))
    cmma.store(out16, 0, acc16, 8, cmma.ROW_MAJOR)
    wide = cmma.cast(acc16, f32)
    cmma.scale(wide, factor)
    cmma.store(out, 0, wide, 8, cmma.ROW_MAJOR)


def test_metal_source():
    src = metal_scaled.source("metal", cube_dim=PLANE)
    assert "const half cube_f" in src and "const float cube_f" in src
    assert "acc16.thread_elements()[0] *= cube_f" in src
    assert "wide.thread_elements()[1] *= cube_f" in src


@pytest.mark.clang
def test_metal_compiles_with_clang(tmp_path):
    validate_sources(metal_scaled, tmp_path, cube_dim=PLANE, targets=("metal",))


def test_metal_kernel_on_the_cpu_runtime():
    """The 8x8x8 kernel written for Metal: f16 scaled in f16, then widened and scaled
    again in f32."""
    client = cubepy.client("cpu")
    a, b = _halves(8, 8), _halves(8, 8)
    out, out16 = client.zeros(64, f32), client.zeros(64, f16)
    metal_scaled.launch(client, (1, 1, 1), PLANE, client.tensor(a.ravel()),
                        client.tensor(b.ravel()), out, out16, 0.25)
    got16 = out16.numpy().reshape(8, 8)
    # an f16 sum, then a quarter of it: exact in f16 (no subnormals at these sizes)
    product16 = (a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_allclose(got16.astype(np.float32), 0.25 * product16, atol=2e-3)
    np.testing.assert_array_equal(out.numpy().reshape(8, 8),
                                  got16.astype(np.float32) * np.float32(0.25))


# -- the warpgroup accumulator -------------------------------------------------------------

@cube(launch=True)
def wg_scaled(a: Array[f16], b: Array[f16], out: Array[f32], factor: f32):
    """out = factor * (a @ b): A 64 x 16, B 16 x 64 (row major), one warpgroup."""
    a_s = SharedMemory(f16, 64 * 16)
    b_s = SharedMemory(f16, 16 * 64)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    multiply_64x16_by_16x64(a, b, a_s, b_s, acc)
    cmma.scale(acc, factor)
    cmma.store(out, 0, acc, 64, cmma.ROW_MAJOR)


@pytest.mark.parametrize("name", HOPPER)
def test_warpgroup_accumulator_scaled(name):
    client = cubepy.client(name)
    a, b = _halves(64, 16), _halves(16, 64)
    out = client.zeros(64 * 64, f32)
    wg_scaled.launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a.ravel()),
                     client.tensor(b.ravel()), out, -3.0)
    np.testing.assert_allclose(out.numpy().reshape(64, 64),
                               -3.0 * (a.astype(np.float32) @ b.astype(np.float32)),
                               atol=1e-4)


def test_a_warpgroup_scale_while_the_multiply_may_run_is_a_launch_error():
    """The emulation's rule for a warpgroup accumulator read before its wg_wait holds
    for cmma.scale as for cmma.store."""
    @cube(launch=True)
    def early(a: Array[f16], b: Array[f16], out: Array[f32]):
        a_s = SharedMemory(f16, 64 * 16)
        b_s = SharedMemory(f16, 16 * 64)
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.fill(acc, 0.0)
        cmma.wg_fence()
        cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 16, cmma.ROW_MAJOR)
        cmma.wg_commit()
        cmma.scale(acc, 2.0)
        cmma.wg_wait(0)
        cmma.store(out, 0, acc, 64, cmma.ROW_MAJOR)
    client = cubepy.client("cpu")
    with pytest.raises(LaunchError, match="wg_commit.. and wg_wait.. first"):
        early.launch(client, (1, 1, 1), (128, 1, 1), client.zeros(1024, f16),
                     client.zeros(1024, f16), client.zeros(4096, f32))


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
def test_warpgroup_scale_compiles_for_sm_90a(tmp_path):
    src = wg_scaled.source("cuda", cube_dim=(128, 1, 1), checked=False)
    assert "*= cube_f" in src
    check_cuda(src, tmp_path, arch="sm_90a")


# -- rows and columns of a warpgroup accumulator ------------------------------------------

@cube(launch=True)
def wg_scaled_by(a: Array[f16], b: Array[f16], rows: Array[f32], cols: Array[f32],
                 out: Array[f32], row_at: u32):
    """out[r, c] = rows[row_at + r] * cols[c] * (a @ b)[r, c]: A 64 x 16, B 16 x 64; the
    column factors staged in shared memory first."""
    a_s = SharedMemory(f16, 64 * 16)
    b_s = SharedMemory(f16, 16 * 64)
    c_s = SharedMemory(f32, 64)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    if UNIT_POS < 64:
        c_s[UNIT_POS] = cols[UNIT_POS]
    multiply_64x16_by_16x64(a, b, a_s, b_s, acc)  # (its barrier covers c_s too)
    cmma.scale_rows(acc, rows, row_at)
    cmma.scale_cols(acc, c_s, 0)
    cmma.store(out, 0, acc, 64, cmma.ROW_MAJOR)


def _run_scaled_by(client, row_at: int, rows_len: int, checked: bool = True):
    a, b = _halves(64, 16), _halves(16, 64)
    rows = RNG.uniform(0.5, 2.0, rows_len).astype(np.float32)
    cols = RNG.uniform(-2.0, 2.0, 64).astype(np.float32)
    out = client.zeros(64 * 64, f32)
    launch = wg_scaled_by.launch if checked else wg_scaled_by.launch_unchecked
    launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a.ravel()), client.tensor(b.ravel()),
           client.tensor(rows), client.tensor(cols), out, row_at)
    factors = np.zeros(64, np.float32)
    present = rows[row_at:row_at + 64]
    factors[:present.size] = present  # a checked launch takes 0 past the end
    want = (a.astype(np.float32) @ b.astype(np.float32)) * factors[:, None] * cols[None, :]
    return out.numpy().reshape(64, 64), want


@pytest.mark.parametrize("name", HOPPER)
def test_rows_and_columns_of_a_warpgroup_accumulator(name):
    got, want = _run_scaled_by(cubepy.client(name), 5, 80)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", HOPPER)
def test_a_checked_launch_takes_zero_for_factors_past_the_end(name):
    got, want = _run_scaled_by(cubepy.client(name), 20, 70)  # rows 50.. have none
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert np.all(got[50:] == 0)


def test_an_unchecked_cpu_launch_refuses_factors_past_the_end():
    with pytest.raises(LaunchError, match="scale_rows at line .*run past the buffer's end"):
        _run_scaled_by(cubepy.client("cpu"), 20, 70, checked=False)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("checked", [True, False])
def test_rows_and_columns_compile_for_sm_90a(tmp_path, checked):
    src = wg_scaled_by.source("cuda", cube_dim=(128, 1, 1), checked=checked)
    assert "cube_r" in src and "cube_g0" in src
    assert ("info.rows_buffer_len" in src) is checked
    check_cuda(src, tmp_path, arch="sm_90a")


def test_rows_of_a_plane_fragment_are_refused():
    def plane_rows(out: Array[f32], f: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.fill(acc, 0.0)
        cmma.scale_rows(acc, f, 0)  # E:plane
        cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)
    _error_at(_build_error(plane_rows), "plane", "cmma.scale_rows() takes a warpgroup "
                                                 "accumulator")


def test_factors_are_f32():
    def halves(out: Array[f32], f: Array[f16]):
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.fill(acc, 0.0)
        cmma.scale_cols(acc, f, 0)  # E:f16
        cmma.store(out, 0, acc, 64, cmma.ROW_MAJOR)
    with pytest.raises(CompileError) as info:
        cube(launch=True)(halves).source("cuda", cube_dim=(128, 1, 1))
    _error_at(info.value, "f16", "'f' holds f16, but the fragment")


# -- errors -------------------------------------------------------------------------------

def _build_error(fn, target="cuda") -> CompileError:
    with pytest.raises(CompileError) as info:
        cube(launch=True)(fn).source(target, cube_dim=PLANE)
    return info.value


def test_only_accumulators_are_scaled():
    def scale_a(a: Array[f16]):
        fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
        cmma.load(fa, a, 0, 16)
        cmma.scale(fa, 2.0)  # E:not_acc
    _error_at(_build_error(scale_a), "not_acc", "cmma.scale() takes an accumulator")


def test_the_factor_has_the_accumulators_type():
    def wrong_type(out: Array[f32], h: f16):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.fill(acc, 0.0)
        cmma.scale(acc, h)  # E:factor
        cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)
    _error_at(_build_error(wrong_type), "factor", "the accumulator holds f32, the factor is "
                                                  "f16")


def test_scale_takes_two_arguments():
    def one(out: Array[f32]):
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.fill(acc, 0.0)
        cmma.scale(acc)  # E:arity
        cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)
    _error_at(_build_error(one), "arity", "cmma.scale() takes 2 arguments, got 1")


def test_wgsl_has_no_matrix_units():
    with pytest.raises(CompileError, match="WGSL has no matrix units"):
        gemm_alpha_beta.source("wgsl", cube_dim=PLANE)
