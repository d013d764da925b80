"""benchmarks/kernels/matmul_wgmma.py: under the cpu runtime's wgmma emulation against
numpy, compiled with nvcc for sm_90a (every config, f16 and bf16, no spills), and,
marked `cuda`, on a Hopper GPU at larger sizes."""
from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, LaunchError, bf16, cube, f16, f32
from source_check import NVCC, assert_no_spills, check_cuda

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchmarks.kernels import matmul_wgmma as mw  # noqa: E402


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("index", range(len(mw.CONFIGS)))
def test_every_config_on_cpu(index):
    mw.example(cubepy.client("cpu"), config=mw.CONFIGS[index])


@pytest.mark.parametrize("index", range(len(mw.PIPELINED)))
def test_pipelined_configs_cycle_their_copies_on_cpu(index):
    # 7 and 14 steps: every shared copy refilled more than once, the re-copies past the
    # end harmless; 1 step: the prologue's copies all of the one slice
    cfg = mw.PIPELINED[index]
    mw.example(cubepy.client("cpu"), k=448, seed=index, config=cfg)
    mw.example(cubepy.client("cpu"), k=64, seed=index, config=cfg)


def test_autotuned_rectangular_on_cpu():
    mw.example(cubepy.client("cpu"), m=512, n=256, k=192, seed=3)


def test_rejects_sizes_off_the_tile():
    client = cubepy.client("cpu")
    a = client.zeros((256, 96), f16).with_line_size(8)
    b = client.zeros((96, 256), f16).with_line_size(8)
    with pytest.raises(ValueError, match="K = 96"):
        mw.run(client, a, b, client.zeros((256, 256), f16))
    empty = client.zeros((256, 0), f16).with_line_size(8)
    with pytest.raises(ValueError, match="K = 0 a positive multiple"):
        mw.run(client, empty, client.zeros((0, 256), f16).with_line_size(8),
               client.zeros((256, 256), f16))


def _source(cfg: dict, dtype, checked: bool = False) -> str:
    spec = {k: v for k, v in cfg.items() if k != "cube_dim"}
    return mw.matmul_wgmma.kernel.source("cuda", cube_dim=tuple(cfg["cube_dim"]),
                                         checked=checked,
                                         line_sizes={"a": 8, "b": 8, "c": 8},
                                         Float=dtype, **spec)


def test_cuda_source_reads_shared_tiles_through_descriptors():
    src = _source(mw.CONFIGS[0], f16)  # 2 warpgroups, 64 x 256 each, bk = 32
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in src
    # A: a 128 x 32 tile (LBO 128 * 16, SBO 128); B: 32 x 256, MN-major (LBO 128, SBO 32 * 16)
    assert len(re.findall(r"cube_wgmma_desc\(a_s \+ [^;]*?, 2048u, 128u\)", src)) == 2
    assert len(re.findall(r"cube_wgmma_desc\(b_s \+ [^;]*?, 128u, 512u\)", src)) == 2
    assert "float acc[128];" in src
    assert src.count("__shared__ __align__(128)") == 2


def test_pipelined_cuda_source_copies_straight_to_shared_and_keeps_a_group_running():
    cfg = mw._config(2, 128, 64, stages=4, asynchronous=True)
    assert cfg in mw.PIPELINED
    src = _source(cfg, f16)
    # 4 lines of A and 4 of B per unit and slice: 2 slices in the prologue, 1 per step
    assert src.count("cp.async.cg.shared.global") == 3 * 8
    loop = src[src.index("for (unsigned int step"):src.index("wgmma.wait_group.sync.aligned 1;")]
    assert "cp.async.wait_group 1;" in loop and "__syncthreads();" in loop
    assert "if (" not in loop  # every copy unconditional (a branch serialises the wgmmas)
    assert loop.count("cube_wgmma_m64n128k16_f32_f16_tb(acc") == 4
    assert "wgmma.wait_group.sync.aligned 0;" in src[src.index("wgmma.wait_group.sync.aligned 1;"):]
    # four copies of the 128 x 64 A slice (16 KB each), then B's, 128-byte aligned
    assert "cube_smem + 65536" in src


def test_refill_after_wait_refills_the_previous_copy_after_a_second_barrier():
    cfg = mw._config(2, 128, 64, stages=4, asynchronous=True, refill_after_wait=True)
    assert cfg in mw.PIPELINED
    src = _source(cfg, f16)
    assert src.count("cp.async.cg.shared.global") == 4 * 8  # 3 slices ahead, 1 per step
    loop = src[src.index("for (unsigned int step"):src.index("wgmma.wait_group.sync.aligned 0;")]
    assert "cp.async.wait_group 2;" in loop and "if (" not in loop
    after_wait = loop[loop.index("wgmma.wait_group.sync.aligned 1;"):]
    assert "__syncthreads();" in after_wait and "cp.async.cg.shared.global" in after_wait
    assert after_wait.index("__syncthreads();") < after_wait.index("cp.async.cg")


def test_swizzled_configs_copy_into_the_swizzle_and_read_it_with_swizzled_descriptors():
    cfg = mw._config(2, 256, 64, stages=4, asynchronous=True, swizzle=128)
    assert cfg in mw.SWIZZLED and cfg in mw.PIPELINED and cfg in mw.CONFIGS
    src = _source(cfg, f16)
    loop = src[src.index("for (unsigned int step"):src.index("wgmma.wait_group.sync.aligned 1;")]
    # A 128 x 64 (K-major: LBO unused, SBO 8 rows of 128 bytes), B 64 x 256 (MN-major:
    # LBO the next 64 columns, 64 rows of 128 bytes; SBO 8 rows)
    assert len(re.findall(r"cube_wgmma_desc_sw128\(a_s \+ [^;]*?, 16u, 1024u\)", loop)) == 4
    assert len(re.findall(r"cube_wgmma_desc_sw128\(b_s \+ [^;]*?, 8192u, 1024u\)", loop)) == 4
    assert "cube_wgmma_desc(" not in src
    assert "^" in src  # the copies' chunk ^ row % 8
    # the copies of A (16 KB each), then B's, from a 1024-byte bound of the block
    assert "reinterpret_cast<__half*>(cube_smem_1k + 65536)" in src


def test_swizzled_configs_are_the_pipelined_bk_64_ones():
    assert len(mw.SWIZZLED) >= 4
    for cfg in mw.SWIZZLED:
        assert cfg["asynchronous"] and cfg["bk"] == 64 and cfg["groups"] == 2
    assert all(cfg["swizzle"] == 0 for cfg in mw.CONFIGS if cfg not in mw.SWIZZLED)


def test_epilogue_shared_configs_are_the_best_swizzled_ones():
    assert len(mw.EPILOGUE_SHARED) == 4
    for cfg in mw.EPILOGUE_SHARED:
        assert cfg in mw.CONFIGS and cfg in mw.PIPELINED and cfg in mw.SWIZZLED
        plain = dict(cfg, epilogue_shared=False)
        assert plain in mw.SWIZZLED  # the same config with the direct store
    assert {(c["bn"], c["stages"]) for c in mw.EPILOGUE_SHARED} == \
        {(256, 4), (256, 3), (128, 3), (128, 4)}
    assert sum(c["epilogue_shared"] for c in mw.CONFIGS if not c["group_m"]) == 4


def test_grouped_configs_are_ungrouped_ones_walking_tiles_in_groups():
    assert mw.GROUPED and all(cfg in mw.CONFIGS and cfg in mw.SWIZZLED for cfg in mw.GROUPED)
    for cfg in mw.GROUPED:
        assert cfg["group_m"] > 1 and dict(cfg, group_m=0) in mw.CONFIGS
    assert all(cfg["group_m"] == 0 for cfg in mw.CONFIGS if cfg not in mw.GROUPED)


@pytest.mark.parametrize("group_m", [4, 8])
def test_grouped_tiles_cover_c_once_with_a_partial_last_group_on_cpu(group_m):
    # 768 rows = 6 rows of 128-row tiles: groups of 4 + 2, or one group of 6; 3 columns
    mw.example(cubepy.client("cpu"), m=768, n=768, k=64,
               config=dict(mw.GROUPED[0], group_m=group_m))


def test_grouped_source_reads_the_cube_count_and_ungrouped_does_not():
    grouped = _source(mw.GROUPED[0], f16)
    assert "gridDim.x" in grouped and "gridDim.y" in grouped
    assert "gridDim" not in _source(dict(mw.GROUPED[0], group_m=0), f16)


def test_other_configs_compile_alike_whatever_c_line_size():
    # c is a Line tensor; a config storing the accumulator straight to c gives the same
    # code with c seen as lines of 8 (as run() does) or 1
    for cfg in (mw.CONFIGS[0], mw.SWIZZLED[3]):
        assert not cfg["epilogue_shared"]
        spec = {k: v for k, v in cfg.items() if k != "cube_dim"}
        srcs = [mw.matmul_wgmma.kernel.source("cuda", cube_dim=tuple(cfg["cube_dim"]),
                                              checked=False, Float=f16, **spec,
                                              line_sizes={"a": 8, "b": 8, "c": line})
                for line in (1, 8)]
        assert srcs[0] == srcs[1]


def test_shared_epilogue_goes_through_the_copies_of_b_as_lines():
    cfg = mw._config(2, 256, 64, stages=4, asynchronous=True, swizzle=128,
                     epilogue_shared=True)
    assert cfg in mw.EPILOGUE_SHARED
    src = _source(cfg, f16)
    plain = _source(dict(cfg, epilogue_shared=False), f16)
    tail = src[src.index("wgmma.wait_group.sync.aligned 0;"):]
    # the copies past the end land, everyone's multiplies are done: then b_s is free
    assert tail.index("cp.async.wait_group 0;") < tail.index("__syncthreads();")
    store = tail[tail.index("__syncthreads();"):]
    assert "__half* const cube_p" in store and "= b_s + wg * 64u * 264u;" in store
    assert "const unsigned cube_st" in store and "= 264u;" in store  # bn + 8
    assert store.count("__floats2half2_rn(") == 2
    copy = store[store.index("__syncthreads();", store.index("__floats2half2_rn(")):]
    # 128 x 256 halves in 16-byte lines: 16 per unit, read from b_s, written to c
    assert copy.count("*reinterpret_cast<uint4*>(&c[") == 16
    assert copy.count("*reinterpret_cast<const uint4*>(&b_s[") == 16
    assert copy.count("__syncthreads();") == 1
    # no shared memory beyond the pipeline's
    assert re.findall(r"cube_smem_1k \+ \d+", src) == re.findall(r"cube_smem_1k \+ \d+",
                                                                   plain)


# two shared copies of 64 x 128 (16384 halves) are less than the 128 x 136 tile: an
# array of its own; through registers (not asynchronous)
OWN_TILE = mw._config(2, 128, 64, epilogue_shared=True)


def test_shared_epilogue_with_a_tile_of_its_own_on_cpu():
    mw.example(cubepy.client("cpu"), k=192, seed=7, config=OWN_TILE)
    src = _source(OWN_TILE, f16)
    # after the two copies of A (2 x 16 KB) and of B (2 x 16 KB)
    assert "__half* const tile = reinterpret_cast<__half*>(cube_smem + 65536);" in src
    assert "= tile + wg * 64u * 136u;" in src
    assert "cp.async.wait_group" not in src


@pytest.mark.parametrize("line", [1, 4])
def test_shared_epilogue_writes_c_of_other_line_sizes_on_cpu(line):
    client = cubepy.client("cpu")
    rng = np.random.default_rng(line)
    m, n, k = 256, 256, 128
    a_h = rng.standard_normal((m, k)).astype(np.float16)
    b_h = rng.standard_normal((k, n)).astype(np.float16)
    c = client.zeros((m, n), f16).with_line_size(line)
    cfg = mw.EPILOGUE_SHARED[2]
    spec = {key: v for key, v in cfg.items() if key != "cube_dim"}
    mw.matmul_wgmma.kernel.launch_unchecked(
        client, mw.cube_count(m, n)(cfg), cfg["cube_dim"],
        client.tensor(a_h).with_line_size(8), client.tensor(b_h).with_line_size(8), c,
        **spec)
    np.testing.assert_allclose(c.numpy().astype(np.float64), mw.reference(a_h, b_h),
                               rtol=1e-2, atol=2e-2 * k ** 0.5)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
def test_shared_epilogue_with_a_tile_of_its_own_compiles_without_spills(tmp_path):
    assert_no_spills(check_cuda(_source(OWN_TILE, f16), tmp_path, arch="sm_90a", name="matmul_wgmma"))


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("dtype", [f16, bf16], ids=["f16", "bf16"])
@pytest.mark.parametrize("index", range(len(mw.CONFIGS)))
def test_every_config_compiles_for_sm_90a_without_spills(tmp_path, index, dtype):
    assert_no_spills(check_cuda(_source(mw.CONFIGS[index], dtype), tmp_path, arch="sm_90a", name="matmul_wgmma"))


# -- on a Hopper GPU ------------------------------------------------------------------------

def _hopper():
    try:
        client = cubepy.client("cuda")
    except LaunchError as e:
        pytest.skip(str(e))
    if client.compiler.arch != "sm_90":
        pytest.skip(f"wgmma needs sm_90; this device is {client.compiler.arch}")
    return client


@cube(launch=True)
def to_bf16(x: Array[f32], y: Array[bf16]):
    y[ABSOLUTE_POS] = bf16(x[ABSOLUTE_POS])


@pytest.mark.cuda
@pytest.mark.gpu
def test_every_config_on_hopper():
    client = _hopper()
    for cfg in mw.CONFIGS:
        mw.example(client, m=1024, n=768, k=512, config=cfg)
    for cfg in mw.PIPELINED:  # one step: the prologue's copies all of the one slice
        mw.example(client, m=256, n=512, k=64, config=cfg)
    mw.example(client, m=2048, n=2048, k=2048, seed=5)  # autotuned


@pytest.mark.cuda
@pytest.mark.gpu
def test_bf16_on_hopper():
    client = _hopper()
    rng = np.random.default_rng(2)
    m = n = k = 512
    a_h = rng.integers(-3, 4, (m, k)).astype(np.float32)  # exact in bf16
    b_h = rng.integers(-3, 4, (k, n)).astype(np.float32)
    a, b = client.zeros((m, k), bf16), client.zeros((k, n), bf16)
    to_bf16.launch(client, (m * k // 256, 1, 1), (256, 1, 1), client.tensor(a_h.ravel()),
                   a.reshape(m * k))
    to_bf16.launch(client, (k * n // 256, 1, 1), (256, 1, 1), client.tensor(b_h.ravel()),
                   b.reshape(k * n))
    for cfg in mw.CONFIGS:
        c = client.zeros((m, n), bf16)
        mw.run(client, a.with_line_size(8), b.with_line_size(8), c, config=cfg)
        got = c.numpy().astype(np.float64)
        want = a_h.astype(np.float64) @ b_h.astype(np.float64)  # |sums| < 2^8 * 9: exact
        np.testing.assert_allclose(got, want, rtol=8e-3, atol=1.0)
