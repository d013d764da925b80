"""Plane (warp / subgroup) operations: every op on every runtime present against a numpy
reference computed with the runtime's own plane size (llvmpipe's subgroups are 8 wide,
CUDA's warps 32), with divergence and early terminate; the emitted source of each
target; the IR text; the user's mistakes."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, PLANE_DIM, UNIT_POS, UNIT_POS_PLANE, Array, CompileError,
                    Comptime, CubeCount, CubeDim, Numeric, cube, f16, f32, i32, terminate,
                    u32, unroll)
from cubepy.ir.parser import parse_kernel
from cubepy.ir.printer import print_kernel
from cubepy.ir.verify import IRVerifyError, verify

import corpus

DIM = 64  # units per cube: a multiple of every plane size seen (8, 16, 32, 64)
CUBES = 2
N = DIM * CUBES
REDUCTIONS = ("sum", "prod", "min", "max", "inclusive_sum", "exclusive_sum")
SHUFFLES = ("broadcast", "shuffle", "shuffle_xor", "shuffle_up", "shuffle_down")


@cube(launch=True)
def plane_dim_of(out: Array[u32]):
    out[ABSOLUTE_POS] = PLANE_DIM * u32(1000) + UNIT_POS_PLANE


def plane_size(c) -> int:
    out = c.zeros((DIM,), u32)
    plane_dim_of.launch(c, CubeCount(1), CubeDim(DIM), out)
    got = out.numpy()
    p = int(got[0] // 1000)
    assert p in (4, 8, 16, 32, 64) and DIM % p == 0
    np.testing.assert_array_equal(got % 1000, np.arange(DIM) % p)  # lanes are consecutive
    return p


@cube(launch=True)
def reduce_kernel(x: Array[Numeric], act: Array[u32], out: Array[Numeric],
                  op: Comptime[str], mode: Comptime[str]):
    i = ABSOLUTE_POS
    v = x[i]
    if mode == "terminate":
        if act[i] == u32(0):
            terminate()
    if act[i] != u32(0):
        if op == "sum":
            out[i] = cubepy.plane_sum(v)
        elif op == "prod":
            out[i] = cubepy.plane_prod(v)
        elif op == "min":
            out[i] = cubepy.plane_min(v)
        elif op == "max":
            out[i] = cubepy.plane_max(v)
        elif op == "inclusive_sum":
            out[i] = cubepy.plane_inclusive_sum(v)
        else:
            out[i] = cubepy.plane_exclusive_sum(v)


def reference(op: str, x: np.ndarray, act: np.ndarray, p: int) -> np.ndarray:
    """Per plane of p consecutive units: the op over the active units, in lane order."""
    out = np.zeros_like(x)
    for start in range(0, len(x), p):
        lanes = [start + j for j in range(p) if act[start + j]]
        vals = x[lanes]
        with np.errstate(over="ignore"):
            if op == "sum":
                res = [np.sum(vals, dtype=x.dtype)] * len(lanes)
            elif op == "prod":
                res = [np.prod(vals, dtype=x.dtype)] * len(lanes)
            elif op == "min":
                res = [vals.min()] * len(lanes)
            elif op == "max":
                res = [vals.max()] * len(lanes)
            elif op == "inclusive_sum":
                res = np.cumsum(vals, dtype=x.dtype)
            else:
                res = np.cumsum(vals, dtype=x.dtype) - vals
        out[lanes] = res
    return out


def _values(dtype, rng) -> np.ndarray:
    if dtype is u32:
        return rng.integers(1, 4, N).astype(np.uint32)
    choice = rng.choice(np.array([1, 2, -1, 1, 1]), N)  # products stay exact in f32
    return choice.astype(dtype.numpy)


@pytest.mark.parametrize("mode", ["all", "divergent", "terminate"])
@pytest.mark.parametrize("dtype", [i32, u32, f32, f16], ids=lambda t: t.name)
def test_plane_reductions_and_scans(runtime_client, dtype, mode):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"no {dtype.name} on {c.device}")
    p = plane_size(c)
    rng = np.random.default_rng(7)
    x = _values(dtype, rng)
    if mode == "all":
        act = np.ones(N, np.uint32)
    elif mode == "divergent":
        act = (np.arange(N) % 2 == 0).astype(np.uint32)  # only even units call it
    else:
        act = (rng.random(N) < 0.7).astype(np.uint32)  # the others terminate first
    act[::p] = 1  # every plane keeps an active unit
    for op in REDUCTIONS:
        out = c.zeros((N,), dtype)
        reduce_kernel.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), c.tensor(act),
                             out, op=op, mode=mode)
        np.testing.assert_array_equal(out.numpy(), reference(op, x, act.astype(bool), p),
                                      err_msg=f"plane_{op} ({mode}, plane size {p})")


@cube(launch=True)
def vote_kernel(x: Array[i32], out: Array[u32]):
    i = ABSOLUTE_POS
    if x[i] != 0:
        out[i] = u32(cubepy.plane_all(x[i] > 1)) + u32(cubepy.plane_any(x[i] > 2)) * u32(2)


def test_plane_all_any_over_the_active_units(runtime_client):
    c = runtime_client
    p = plane_size(c)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, N).astype(np.int32)
    x[::p] = 2
    out = c.zeros((N,), u32)
    vote_kernel.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out)
    want = np.zeros(N, np.uint32)
    for start in range(0, N, p):
        lanes = [start + j for j in range(p) if x[start + j] != 0]
        vals = x[lanes]
        want[lanes] = int(np.all(vals > 1)) + 2 * int(np.any(vals > 2))
    np.testing.assert_array_equal(out.numpy(), want)


@cube(launch=True)
def shuffle_kernel(x: Array[Numeric], out: Array[Numeric], flags: Array[u32], lane: u32,
                   op: Comptime[str]):
    i = ABSOLUTE_POS
    v = x[i]
    if op == "broadcast":
        out[i] = cubepy.plane_broadcast(v, lane)
    elif op == "shuffle":
        out[i] = cubepy.plane_shuffle(v, PLANE_DIM - u32(1) - UNIT_POS_PLANE)
    elif op == "shuffle_xor":
        out[i] = cubepy.plane_shuffle_xor(v, u32(3))
    elif op == "shuffle_up":
        out[i] = cubepy.plane_shuffle_up(v, u32(1))
    else:
        out[i] = cubepy.plane_shuffle_down(v, u32(2))
    flags[i] = u32(cubepy.plane_shuffle_xor(v > x[0], u32(1)))


@pytest.mark.parametrize("dtype", [i32, u32, f32, f16], ids=lambda t: t.name)
def test_plane_broadcast_and_shuffles(runtime_client, dtype):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"no {dtype.name} on {c.device}")
    p = plane_size(c)
    x = (np.arange(N) * 3 + 1).astype(dtype.numpy)
    lane_of = np.arange(N) % p
    plane_start = np.arange(N) - lane_of
    sources = {"broadcast": np.full(N, 3), "shuffle": p - 1 - lane_of,
               "shuffle_xor": lane_of ^ 3, "shuffle_up": lane_of - 1,
               "shuffle_down": lane_of + 2}
    for op in SHUFFLES:
        out, flags = c.zeros((N,), dtype), c.zeros((N,), u32)
        shuffle_kernel.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out, flags, 3,
                              op=op)
        src = sources[op]
        inside = (src >= 0) & (src < p)
        got = out.numpy()
        np.testing.assert_array_equal(got[inside], x[(plane_start + src)[inside]],
                                      err_msg=f"plane_{op} (plane size {p})")
        if op in ("shuffle_up", "shuffle_down") and c.runtime in ("cpu", "cuda"):
            # past either end of the plane: the caller's own value (unspecified in WGSL:
            # llvmpipe wraps around the subgroup)
            np.testing.assert_array_equal(got[~inside], x[~inside])
        partner = plane_start + (lane_of ^ 1)
        np.testing.assert_array_equal(flags.numpy(), (x[partner] > x[0]).astype(np.uint32))


@cube(launch=True)
def warp_reduce(x: Array[f32], total: Array[u32]):
    """One atomic per plane: the plane's sum (integer valued, exact) from its lane 0."""
    i = ABSOLUTE_POS
    if i >= len(x):
        terminate()
    s = cubepy.plane_sum(u32(x[i]))
    if UNIT_POS_PLANE == u32(0):
        cubepy.atomic_add(total, 0, s)


def test_warp_level_reduction_matches_numpy(runtime_client):
    c = runtime_client
    rng = np.random.default_rng(11)
    x = rng.integers(0, 100, 1000).astype(np.float32)
    total = c.zeros((1,), u32)
    warp_reduce.launch(c, CubeCount(-(-1000 // 128)), CubeDim(128), c.tensor(x), total)
    assert int(total.numpy()[0]) == int(np.sum(x, dtype=np.int64))


@cube(launch=True)
def loop_kernel(x: Array[i32], out: Array[i32]):
    """Unit u runs u % 5 iterations; iteration k sums over the units still looping."""
    i = ABSOLUTE_POS
    acc = 0
    for k in range(UNIT_POS % u32(5)):
        acc += cubepy.plane_sum(x[i] + i32(k))
    out[i] = acc


def test_plane_sum_in_a_loop_with_unit_dependent_trip_counts(runtime_client):
    c = runtime_client
    p = plane_size(c)
    x = np.arange(N, dtype=np.int32) % 7
    out = c.zeros((N,), i32)
    loop_kernel.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out)
    trips = (np.arange(N) % DIM) % 5
    want = np.zeros(N, np.int32)
    for k in range(5):
        active = trips > k
        want += np.where(active, reference("sum", x + k, active, p), 0).astype(np.int32)
    np.testing.assert_array_equal(out.numpy(), want)


@cube
def plane_total(v: Numeric) -> Numeric:
    return cubepy.plane_sum(v)


@cube(launch=True)
def inlined_kernel(x: Array[f32], out: Array[f32], count: Array[i32]):
    """A plane operation in a device function, a literal one (counts the active units)
    and plane operations in an unrolled loop."""
    i = ABSOLUTE_POS
    if x[i] > 0.0:
        out[i] = plane_total(x[i])
        count[i] = cubepy.plane_sum(1)
    for j in unroll(range(2)):
        out[i] += cubepy.plane_broadcast(x[i], u32(j))


def test_plane_ops_in_device_functions_and_unrolled_loops(runtime_client):
    c = runtime_client
    p = plane_size(c)
    x = np.tile(np.array([1, -1, 2, 3, -5, 4, 1, 1], np.float32), N // 8)
    out, count = c.zeros((N,), f32), c.zeros((N,), i32)
    inlined_kernel.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out, count)
    active = x > 0
    lanes = np.arange(N) % p
    starts = np.arange(N) - lanes
    want = np.where(active, reference("sum", x, active, p), 0) + x[starts] + x[starts + 1]
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(count.numpy(), np.where(
        active, reference("sum", np.ones(N, np.int32), active, p), 0))


def test_cpu_reads_zero_from_inactive_lanes_and_own_value_past_the_end():
    c = cubepy.client("cpu")

    @cube(launch=True)
    def k(x: Array[i32], out: Array[i32]):
        i = ABSOLUTE_POS
        if UNIT_POS % u32(2) == u32(0):
            out[i] = cubepy.plane_shuffle_down(x[i], u32(1)) + cubepy.plane_shuffle_up(
                x[i], u32(40))

    x = np.arange(1, 65, dtype=np.int32)
    out = c.zeros((64,), i32)
    k.launch(c, CubeCount(1), CubeDim(64), c.tensor(x), out)
    # shuffle_down(1) reads an odd (inactive) lane: 0; shuffle_up(40) is past the start
    np.testing.assert_array_equal(out.numpy()[::2], x[::2])
    assert not out.numpy()[1::2].any()


# ----------------------------------------------------------------------------- sources

def test_cuda_source_uses_cooperative_groups_and_sync_shuffles():
    src = corpus.plane_reductions.source("cuda", cube_dim=CubeDim(64), Numeric=f32)
    assert "#include <cooperative_groups/reduce.h>" in src
    assert ("cooperative_groups::reduce(cooperative_groups::coalesced_threads(), v, "
            "[](float a, float b) { return a + b; })") in src
    assert "[](float a, float b) { return fminf(a, b); }" in src
    assert "cooperative_groups::inclusive_scan(g, v, op)" in src
    assert "__all_sync(__activemask(), big) != 0" in src
    src = corpus.plane_shuffles.source("cuda", cube_dim=CubeDim(64), Numeric=i32)
    assert "__shfl_sync(__activemask(), v, 0u)" in src
    assert "__shfl_xor_sync(__activemask(), v, 1u)" in src
    assert "__shfl_down_sync(__activemask(), v, 2u)" in src
    assert "cooperative_groups" not in src  # shuffles need no header


def test_wgsl_source_uses_subgroup_builtins():
    src = corpus.plane_reductions.source("wgsl", cube_dim=CubeDim(64), Numeric=i32)
    for fn in ("subgroupAdd(v)", "subgroupMul(v)", "subgroupMin(v)", "subgroupMax(v)",
               "subgroupInclusiveAdd(v)", "subgroupExclusiveAdd(v)", "subgroupAll(big)",
               "subgroupAny(big)"):
        assert fn in src
    assert "enable subgroups" not in src  # naga rejects it; the device feature suffices
    src = corpus.plane_shuffles.source("wgsl", cube_dim=CubeDim(64), Numeric=f32)
    assert "subgroupBroadcast(v, 0u)" in src
    assert "subgroupShuffle(v, lane)" in src  # a runtime lane is no const-expression
    assert "subgroupShuffleXor(select(0u, 1u, " in src  # a bool travels as u32


def test_metal_source_uses_simd_functions():
    src = corpus.plane_reductions.source("metal", cube_dim=CubeDim(64), Numeric=f32)
    for fn in ("metal::simd_sum(v)", "metal::simd_product(v)",
               "metal::simd_prefix_exclusive_sum(v)", "metal::simd_all(big)"):
        assert fn in src
    src = corpus.plane_shuffles.source("metal", cube_dim=CubeDim(64), Numeric=f32)
    assert "metal::simd_broadcast(v, ushort(0u))" in src
    assert "metal::simd_shuffle(v, ushort(lane))" in src
    assert "metal::simd_shuffle_up(v, ushort(1u))" in src


def test_plane_ops_in_ir_text_round_trip_and_are_verified():
    text = corpus.plane_shuffles.ir(Numeric=f32)
    assert "plane.broadcast(%v, 0:u32)" in text
    assert "plane.shuffle_xor(" in text
    assert print_kernel(parse_kernel(text)) == text
    # a plane operation inside another statement than an assignment breaks the invariant
    src = ("kernel k(@x: array<f32>) cube_dim(32, 1, 1) {\n"
           "  @x[0:u32] = plane.sum(@x[1:u32])\n}\n")
    with pytest.raises(IRVerifyError, match="whole value"):
        verify(parse_kernel(src))


# ----------------------------------------------------------------------------- errors

def _error(fn) -> CompileError:
    with pytest.raises(CompileError) as info:
        fn.ir()
    return info.value


def test_plane_sum_of_bool_is_a_compile_error():
    @cube(launch=True)
    def k(x: Array[i32]):
        x[0] = i32(cubepy.plane_sum(x[0] > 1))
    err = _error(k)
    assert "plane_sum() takes i32, u32, i64, u64, f64, f32, bf16 or f16 values, not bool" \
        in err.msg
    assert err.lineno > 0


def test_plane_all_needs_a_bool():
    @cube(launch=True)
    def k(x: Array[i32]):
        x[0] = i32(cubepy.plane_all(x[0]))
    assert "plane_all() takes a bool" in _error(k).msg


def test_plane_lane_must_be_u32():
    @cube(launch=True)
    def k(x: Array[f32]):
        x[0] = cubepy.plane_broadcast(x[1], i32(2))
    assert "the lane of plane_broadcast() must be u32, not i32" in _error(k).msg


def test_plane_op_inside_and_or_while_condition_is_a_compile_error():
    @cube(launch=True)
    def k(x: Array[i32]):
        if x[0] > 1 and cubepy.plane_any(x[1] > 0):
            x[2] = 1
    assert "plane_any() cannot be used inside 'and'" in _error(k).msg

    @cube(launch=True)
    def w(x: Array[i32]):
        while cubepy.plane_any(x[1] > 0):
            x[1] = x[1] - 1
    assert "plane_any() cannot be used inside a while condition" in _error(w).msg


def test_plane_op_arity_is_checked():
    @cube(launch=True)
    def k(x: Array[f32]):
        x[0] = cubepy.plane_shuffle(x[1])
    assert "plane_shuffle() takes 2 arguments, got 1" in _error(k).msg


# ----------------------------------------------------------------------------- real tools

@pytest.mark.parametrize("case", [c for c in corpus.SOURCE_CASES if c[0].startswith("plane_")],
                         ids=lambda c: c[0])
def test_corpus_plane_kernels_create_wgpu_pipelines(case):
    """naga validates the WGSL of every corpus plane kernel (its results depend on the
    subgroup size, so the corpus does not compare them with the cpu runtime)."""
    name, kernel, cube_dim, spec, _ = case
    try:
        c = cubepy.client("wgpu")
    except cubepy.LaunchError:
        pytest.skip("no wgpu adapter")
    dtype = spec["Numeric"]
    if dtype not in c.limits.dtypes:
        pytest.skip(f"no {dtype.name} on {c.device}")
    args = [c.tensor(np.ones(N * 6, dtype.numpy)), c.zeros((N * 6,), dtype),
            c.zeros((N,), u32)]
    if "lane" in [p.name for p in kernel._parse().params]:
        args.append(3)
    kernel.launch(c, CubeCount(1), CubeDim(*cube_dim), *args)
    assert args[1].numpy()[0] != 0  # every kernel writes a plane result at 0


@pytest.mark.nvcc
def test_f16_plane_reductions_compile_with_nvcc(tmp_path):
    import shutil
    import subprocess
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    src = corpus.plane_reductions.source("cuda", cube_dim=CubeDim(64), Numeric=cubepy.f16)
    path = tmp_path / "k.cu"
    path.write_text(src)
    r = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "k.cubin"),
                        str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ----------------------------------------------------------------------------- barriers

@cube(launch=True)
def shared_then_plane(x: Array[i32], out: Array[i32]):
    """After terminate() in a kernel with a barrier the terminated units keep walking to
    the barrier, but must not contribute to the plane sum."""
    buf = cubepy.SharedMemory(i32, 64)
    u = UNIT_POS
    i = ABSOLUTE_POS
    if x[i] == 0:
        terminate()
    buf[u] = x[i]
    cubepy.sync_cube()
    out[i] = cubepy.plane_sum(buf[u])


def test_plane_sum_after_terminate_in_a_kernel_with_barriers(runtime_client):
    c = runtime_client
    p = plane_size(c)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, N).astype(np.int32)
    x[::p] = 1
    out = c.zeros((N,), i32)
    shared_then_plane.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out)
    np.testing.assert_array_equal(out.numpy(), reference("sum", x, x != 0, p))


def test_barrier_under_a_plane_result_is_not_uniform():
    @cube(launch=True)
    def k(x: Array[i32], n: u32):
        if cubepy.plane_all(n > u32(0)):
            cubepy.sync_cube()
        x[0] = 1
    with pytest.raises(CompileError, match="plane operation"):
        k.source("cuda", cube_dim=CubeDim(32))


# ----------------------------------------------------------------------------- example

@pytest.mark.parametrize("shape", [[], ["--rows", "7", "--cols", "3"],
                                   ["--rows", "5", "--cols", "1031"]])
def test_row_stats_example_verifies_against_numpy(runtime_client, capsys, shape):
    from examples_loader import load_example
    example = load_example("plane_row_stats")
    assert example.main(["--runtime", runtime_client.runtime, *shape]) == 0
    out = capsys.readouterr().out
    assert "sums:    OK" in out and "maxima:  OK" in out


def test_row_stats_example_shows_source(capsys):
    from examples_loader import load_example
    assert load_example("plane_row_stats").main(["--show-source", "wgsl"]) == 0
    assert "subgroupMax(m)" in capsys.readouterr().out
