"""benchmarks/kernels/matmul_fp8.py and the 16-element lines of 8-bit floats it copies
with: under the cpu runtime's wgmma emulation against numpy, compiled with nvcc for
sm_90a (every config, no spills), and, marked `cuda`, on a Hopper GPU."""
from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, CompileError, Comptime, CubeCount, CubeDim, LaunchError, Line,
                    OptionError, SharedMemory, Tensor, cube, e4m3, e5m2, f16, f32, fp8, pipeline,
                    sync_cube, unroll)
from source_check import NVCC, assert_no_spills, check_cuda
from test_lang_wgmma import CUDA_HOPPER

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchmarks.kernels import matmul_fp8 as mf  # noqa: E402

RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))


# -- lines of 8-bit floats ----------------------------------------------------------------

@cube(launch=True)
def copy_lines(x: Tensor[Line[e4m3]], y: Tensor[f32], line: Comptime[int]):
    s = SharedMemory(Line[e4m3], 64, line)
    pipeline.memcpy_async(s, UNIT_POS, x, UNIT_POS)
    pipeline.commit()
    pipeline.wait(0)
    sync_cube()
    for e in unroll(range(line)):
        y[UNIT_POS * line + e] = f32(s[UNIT_POS][e])


@pytest.mark.parametrize("line, copy", [(8, "cp.async.ca.shared.global [%0], [%1], 8"),
                                        (16, "cp.async.cg.shared.global [%0], [%1], 16")])
def test_lines_of_8_bit_floats_copy_whole_and_hold_up_to_16(line, copy):
    client = cubepy.client("cpu")
    values = fp8.round_to(RNG.normal(0, 10, 64 * line), "e4m3")
    x = client.tensor(values, e4m3).with_line_size(line)
    y = client.zeros(64 * line, f32)
    copy_lines.launch(client, CubeCount(1), CubeDim(64), x, y, line=line)
    np.testing.assert_array_equal(y.numpy(), values)
    src = copy_lines.source("cuda", cube_dim=(64, 1, 1), line_sizes={"x": line}, line=line)
    assert copy in src  # one cp.async per line: 8 bytes, or 16


@cube(launch=True)
def f32_lines(x: Tensor[Line[f32]], y: Tensor[f32]):
    y[UNIT_POS] = x[UNIT_POS][0]


@cube(launch=True)
def f32_shared_lines(y: Tensor[f32]):
    s = SharedMemory(Line[f32], 4, 16)
    y[UNIT_POS] = s[0][0]


def test_16_is_a_line_size_of_8_bit_floats_only():
    with pytest.raises(OptionError, match="x=16: a line size is one of 1, 2, 4, 8$"):
        f32_lines.source("cuda", line_sizes={"x": 16})
    client = cubepy.client("cpu")
    x = client.zeros(32, f32).with_line_size(16)
    with pytest.raises(LaunchError, match="line size 16 is not supported"):
        f32_lines.launch(client, CubeCount(1), CubeDim(2), x, client.zeros(2, f32))
    with pytest.raises(CompileError, match="line size of SharedMemory must be 1, 2, 4 or 8"):
        f32_shared_lines.source("cuda")
    # a placeholder bound to 8-bit floats may take 16, and is checked when bound
    assert "cp.async" in _source(mf.CONFIGS[0])
    with pytest.raises(OptionError, match="a=32: a line size is one of 1, 2, 4, 8, 16$"):
        mf.matmul_fp8.kernel.source("cuda", line_sizes={"a": 32})


# -- the kernel -----------------------------------------------------------------------

def _run(client, m: int, n: int, k: int, a_type=e4m3, b_type=e4m3, config=None,
         out=f32, scale: bool = False, scales: tuple | str | None = None):
    a = fp8.round_to(RNG.normal(0, 1, (m, k)), a_type.name)
    b = fp8.round_to(RNG.normal(0, 1, (n, k)), b_type.name)
    c = client.zeros((m, n), out)
    # scales: per tensor (two floats), or row-wise ("rows": one per row of A and of B)
    if scales == "rows":
        scales = (RNG.uniform(0.25, 2.0, (m, 1)).astype(np.float32),
                  RNG.uniform(-2.0, 2.0, (1, n)).astype(np.float32))
    elif scales is not None:
        scales = tuple(np.full((1, 1), v, np.float32) for v in scales)
    sa, sb = (None, None) if scales is None else (client.tensor(v) for v in scales)
    mf.run(client, client.tensor(a, a_type).with_line_size(16),
           client.tensor(b, b_type).with_line_size(16), c, config, scale_a=sa, scale_b=sb)
    factor = 1.0 if scales is None else \
        scales[0].astype(np.float64) * scales[1].astype(np.float64)
    if scale:  # the sum of |products| of each element: the accumulation error's scale
        return (c.numpy(), mf.reference(a, b) * factor,
                mf.reference(np.abs(a), np.abs(b)) * np.abs(factor))
    return c.numpy(), mf.reference(a, b) * factor


@pytest.mark.parametrize("index", range(len(mf.CONFIGS)))
def test_every_config_on_cpu(index):
    # 3 steps of K: every shared copy filled, the copies past the end harmless
    # (an f32 C does not fit the shared epilogue's tile beside 3 stages of 128 x 256)
    cfg = mf.CONFIGS[index]
    out = f16 if cfg["epilogue_shared"] else f32
    got, want = _run(cubepy.client("cpu"), 256, 256, 384, config=cfg, out=out)
    np.testing.assert_allclose(got, want, rtol=1e-3 if out is f16 else 1e-5, atol=1e-2)


def test_the_example_runs_on_cpu():
    mf.example(cubepy.client("cpu"), seed=2)


def test_e4m3_times_e5m2_autotuned_on_cpu():
    got, want = _run(cubepy.client("cpu"), 256, 512, 128, e4m3, e5m2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("index", [0, 7])  # the direct epilogue and the shared one
def test_per_tensor_scales_multiply_the_product_on_cpu(index):
    cfg = mf.CONFIGS[index]
    out = f16 if cfg["epilogue_shared"] else f32  # (an f32 tile does not fit beside it)
    got, want = _run(cubepy.client("cpu"), 256, 256, 256, config=cfg, out=out,
                     scales=(0.375, -12.0))
    np.testing.assert_allclose(got, want, rtol=1e-3 if out is f16 else 1e-5, atol=1e-2)


@pytest.mark.parametrize("index", [0, 7])
def test_row_wise_scales_on_cpu(index):
    cfg = mf.CONFIGS[index]
    out = f16 if cfg["epilogue_shared"] else f32
    got, want = _run(cubepy.client("cpu"), 256, 512, 128, config=cfg, out=out, scales="rows")
    np.testing.assert_allclose(got, want, rtol=1e-3 if out is f16 else 1e-5, atol=1e-2)


def test_scales_are_per_tensor_or_row_wise():
    client = cubepy.client("cpu")
    a = client.zeros((256, 128), e4m3).with_line_size(16)
    c = client.zeros((256, 256), f32)
    with pytest.raises(ValueError, match="row-wise ones .M = 256 and N = 256 elements.: "
                                         "scale_a has 1, scale_b 2"):
        mf.run(client, a, a, c, scale_b=client.zeros(2, f32))
    every_other = client.zeros(512, f32)[::2]  # 256 elements, a stride of 2
    with pytest.raises(ValueError, match="the row-wise scale_a must be contiguous"):
        mf.run(client, a, a, c, scale_a=every_other, scale_b=client.zeros(256, f32))
    with pytest.raises(LaunchError, match="scale_a"):
        mf.run(client, a, a, c, scale_a=client.zeros(1, f16))


def test_the_epilogue_scales_the_accumulator_once():
    src = _source(mf.CONFIGS[0])
    epilogue = src[src.index("wgmma.wait_group.sync.aligned 0;"):]
    assert epilogue.count("*= cube_f") == 1
    assert "scale_a[0u] * scale_b[0u]" in epilogue or "scale_a[0] * scale_b[0]" in epilogue


def test_rejects_sizes_off_the_tile():
    client = cubepy.client("cpu")
    a = client.zeros((256, 192), e4m3).with_line_size(16)
    with pytest.raises(ValueError, match="K of 128"):
        mf.run(client, a, a, client.zeros((256, 256), f32))


def _source(cfg: dict) -> str:
    spec = {k: v for k, v in cfg.items() if k != "cube_dim"}
    spec.setdefault("rowwise", False)
    return mf.matmul_fp8.kernel.source("cuda", cube_dim=tuple(cfg["cube_dim"]), checked=False,
                                       line_sizes={"a": 16, "b": 16, "c": 8}, F8A=e4m3, F8B=e4m3,
                                       Float=cubepy.bf16, **spec)


def test_cuda_source_copies_16_bytes_and_multiplies_k32_from_the_swizzle():
    src = _source(mf.CONFIGS[0])  # 2 warpgroups, bn 256, 4 stages
    loop = src[src.index("for (unsigned int step"):src.index("wgmma.wait_group.sync.aligned 1;")]
    assert loop.count("cube_wgmma_m64n256k32_f32_e4m3_e4m3(acc") == 4
    # A 128 x 128 bytes and B 256 x 128 bytes, K-major, 128-byte swizzle
    assert len(re.findall(r"cube_wgmma_desc_sw128\(a_s \+ [^;]*?, 16u, 1024u\)", loop)) == 4
    assert len(re.findall(r"cube_wgmma_desc_sw128\(b_s \+ [^;]*?, 16u, 1024u\)", loop)) == 4
    # per unit and slice: 4 lines of A and 8 of B; 2 slices in the prologue, 1 per step
    assert src.count("cp.async.cg.shared.global") == 3 * 12
    assert "if (" not in loop  # every copy unconditional


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("index", range(len(mf.CONFIGS)))
def test_every_config_compiles_without_spills(tmp_path, index):
    out = check_cuda(_source(mf.CONFIGS[index]), tmp_path, arch="sm_90a", name="matmul_fp8")
    assert_no_spills(out)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("index", [0, 9])
def test_row_wise_configs_compile_without_spills(tmp_path, index):
    src = _source({**mf.CONFIGS[index], "rowwise": True})
    assert "cmma.scale_rows" in src and "cmma.scale_cols" in src
    assert_no_spills(check_cuda(src, tmp_path, arch="sm_90a", name="matmul_fp8_rowwise"))


@pytest.mark.parametrize("m, n, k, scales", [(512, 512, 1024, None),
                                             (256, 768, 256, (0.375, -12.0)),
                                             (512, 256, 384, "rows")])
@CUDA_HOPPER[0]
@CUDA_HOPPER[1]
def test_on_a_hopper_gpu(m, n, k, scales):
    got, want, scale = _run(cubepy.client("cuda"), m, n, k, scale=True, scales=scales)
    # Hopper's tensor cores add fp8 products with about 13 mantissa bits, not f32's 23:
    # the error is bounded by the sum of the |products| (test_lang_wgmma_fp8.py)
    assert np.all(np.abs(got - want) <= 1e-3 * scale + 1e-6)
