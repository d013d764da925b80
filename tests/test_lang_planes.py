"""Plane breadth, barriers and fences: plane_ballot, plane_elect, the product scans,
plane operations on every element type a target has, sync_plane, fence_cube and
fence_device. Each runs on every runtime present against a numpy reference computed
from the plane size the client reports (`client.limits.plane_dim`, checked against what
kernels read); nvcc, naga and clang++ accept each construct's source; a target lacking
an op or a type says so."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, CUBE_COUNT, CUBE_DIM, CUBE_POS, PLANE_DIM, UNIT_POS,
                    UNIT_POS_PLANE, Array, CompileError, CubeCount, CubeDim, Numeric,
                    SharedMemory, atomic_add, cube, f16, f32, f64, i32, i64, u32, u64,
                    unroll)
from cubepy.ir.ops import SyncOp
from cubepy.targets import get_target

from source_check import validate_sources

DIM = 64  # units per cube: a multiple of every plane size seen (8, 32)
CUBES = 2
N = DIM * CUBES


@cube(launch=True)
def plane_dim_seen(out: Array[u32]):
    out[ABSOLUTE_POS] = PLANE_DIM


def planes(c) -> int:
    """The plane size the client reports, after checking kernels see the same."""
    out = c.zeros((DIM,), u32)
    plane_dim_seen.launch(c, CubeCount(1), CubeDim(DIM), out)
    seen = set(out.numpy().tolist())
    assert seen == {c.limits.plane_dim}, (seen, c.limits.plane_dim)
    return c.limits.plane_dim


def test_limits_plane_dim_is_the_plane_size_kernels_see(runtime_client):
    p = planes(runtime_client)
    assert p in (8, 16, 32, 64) and DIM % p == 0


def _active_planes(n: int, p: int, act: np.ndarray):
    """Per plane: (its unit positions, the active ones among them)."""
    for start in range(0, n, p):
        lanes = np.arange(start, start + p)
        yield lanes, lanes[act[lanes]]


# -- plane_ballot and plane_elect -------------------------------------------------------

@cube(launch=True)
def ballot_elect(x: Array[u32], act: Array[u32], words: Array[u32], elected: Array[u32]):
    i = ABSOLUTE_POS
    if act[i] != u32(0):  # divergent: only the active units vote
        mask = plane_ballot_of(x[i] % u32(3) == u32(0))
        for k in unroll(range(4)):
            words[i * u32(4) + u32(k)] = mask[k]
        elected[i] = cubepy.select(cubepy.plane_elect(), u32(1), u32(2))


@cube
def plane_ballot_of(cond: cubepy.bool_):
    return cubepy.plane_ballot(cond)


def test_ballot_and_elect_over_the_active_units(runtime_client):
    c = runtime_client
    p = planes(c)
    rng = np.random.default_rng(11)
    x = rng.integers(0, 9, N).astype(np.uint32)
    act = rng.random(N) < 0.6
    act[p - 1::p] = True  # every plane keeps an active unit
    words, elected = c.zeros((4 * N,), u32), c.zeros((N,), u32)
    ballot_elect.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x),
                        c.tensor(act.astype(np.uint32)), words, elected)
    want_words = np.zeros((N, 4), np.uint32)
    want_elected = np.zeros(N, np.uint32)
    for lanes, active in _active_planes(N, p, act):
        mask = 0
        for unit in active:
            if x[unit] % 3 == 0:
                mask |= 1 << int(unit - lanes[0])
        want_words[active] = [(mask >> (32 * k)) & 0xFFFFFFFF for k in range(4)]
        want_elected[active] = 2
        want_elected[active.min()] = 1  # the lowest active lane
    np.testing.assert_array_equal(words.numpy().reshape(N, 4), want_words,
                                  err_msg=f"plane size {p}")
    np.testing.assert_array_equal(elected.numpy(), want_elected)


# -- product scans ---------------------------------------------------------------------

@cube(launch=True)
def prod_scans(x: Array[Numeric], act: Array[u32], incl: Array[Numeric],
               excl: Array[Numeric]):
    i = ABSOLUTE_POS
    if act[i] != u32(0):
        incl[i] = cubepy.plane_inclusive_prod(x[i])
        excl[i] = cubepy.plane_exclusive_prod(x[i])


@pytest.mark.parametrize("dtype", [i32, u32, f32, f16], ids=lambda t: t.name)
def test_inclusive_and_exclusive_products_over_the_active_lanes(runtime_client, dtype):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"no {dtype.name} on {c.device}")
    p = planes(c)
    rng = np.random.default_rng(5)
    pool = [1, 2, 3] if dtype is u32 else [1, 2, -1, 1]  # exact in every float type
    x = rng.choice(np.array(pool), N).astype(dtype.numpy)
    act = np.arange(N) % 3 != 1
    incl, excl = c.zeros((N,), dtype), c.zeros((N,), dtype)
    prod_scans.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x),
                      c.tensor(act.astype(np.uint32)), incl, excl)
    want_incl, want_excl = np.zeros_like(x), np.zeros_like(x)
    with np.errstate(over="ignore"):
        for _, active in _active_planes(N, p, act):
            scan = np.cumprod(x[active], dtype=x.dtype)
            want_incl[active] = scan
            want_excl[active] = np.concatenate([np.ones(1, x.dtype), scan[:-1]])
    np.testing.assert_array_equal(incl.numpy(), want_incl, err_msg=f"plane size {p}")
    np.testing.assert_array_equal(excl.numpy(), want_excl, err_msg=f"plane size {p}")


# -- every element type the target has -------------------------------------------------

@cube(launch=True)
def wide(x: Array[Numeric], out: Array[Numeric]):
    i = ABSOLUTE_POS
    v = x[i]
    out[i * u32(6)] = cubepy.plane_shuffle_xor(v, u32(1))
    out[i * u32(6) + u32(1)] = cubepy.plane_sum(v)
    out[i * u32(6) + u32(2)] = cubepy.plane_inclusive_sum(v)
    out[i * u32(6) + u32(3)] = cubepy.plane_broadcast(v, u32(2))
    out[i * u32(6) + u32(4)] = cubepy.plane_min(v)
    out[i * u32(6) + u32(5)] = cubepy.plane_max(v)


WIDE_TYPES = [f64, i64, u64]


@pytest.mark.parametrize("dtype", WIDE_TYPES, ids=lambda t: t.name)
def test_wide_types_move_and_combine_across_the_plane(runtime_client, dtype):
    c = runtime_client
    if dtype.name not in get_target(c.target).plane_dtypes:
        with pytest.raises(CompileError, match=get_target(c.target).title):
            wide._compile(wide._specialization(CubeDim(DIM), {"Numeric": dtype}),
                          c.target, True)
        return
    p = planes(c)
    x = (np.arange(N) % 7 + (1 << 33 if dtype.is_int else 0.5)).astype(dtype.numpy)
    out = c.zeros((6 * N,), dtype)
    wide.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out)
    want = np.zeros((N, 6), x.dtype)
    for lanes, _ in _active_planes(N, p, np.ones(N, bool)):
        v = x[lanes]
        want[lanes, 0] = v[np.arange(p) ^ 1]
        want[lanes, 1] = v.sum(dtype=x.dtype)
        want[lanes, 2] = np.cumsum(v, dtype=x.dtype)
        want[lanes, 3] = v[2]
        want[lanes, 4], want[lanes, 5] = v.min(), v.max()
    np.testing.assert_array_equal(out.numpy().reshape(N, 6), want, err_msg=f"plane size {p}")


# -- sync_plane ------------------------------------------------------------------------

@cube(launch=True)
def rotate_in_plane(x: Array[f32], out: Array[f32]):
    sh = SharedMemory(f32, 64)
    u = UNIT_POS
    if (u // PLANE_DIM) % u32(2) == u32(0):  # whole planes take the branch
        sh[u] = x[ABSOLUTE_POS]
        cubepy.sync_plane()
        out[ABSOLUTE_POS] = sh[u - UNIT_POS_PLANE + (UNIT_POS_PLANE + u32(1)) % PLANE_DIM]


def test_sync_plane_makes_shared_writes_visible_within_the_plane(runtime_client):
    c = runtime_client
    p = planes(c)
    x = np.arange(N, dtype=np.float32) * 1.5
    out = c.zeros((N,), f32)
    rotate_in_plane.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out)
    want = np.zeros(N, np.float32)
    for lanes, _ in _active_planes(N, p, np.ones(N, bool)):
        if (lanes[0] % DIM) // p % 2 == 0:
            want[lanes] = x[lanes[(np.arange(p) + 1) % p]]
    np.testing.assert_array_equal(out.numpy(), want, err_msg=f"plane size {p}")


@cube(launch=True)
def rotate_after_terminate(x: Array[f32], out: Array[f32]):
    sh = SharedMemory(f32, 64)
    u = UNIT_POS
    if UNIT_POS_PLANE < u32(2):
        cubepy.terminate()  # the first two lanes of each plane never arrive
    sh[u] = x[ABSOLUTE_POS]
    cubepy.sync_plane()
    out[ABSOLUTE_POS] = sh[u - UNIT_POS_PLANE + (UNIT_POS_PLANE + u32(1)) % PLANE_DIM]


def test_sync_plane_does_not_wait_for_terminated_units(runtime_client):
    c = runtime_client
    p = planes(c)
    x = np.arange(N, dtype=np.float32) + 1
    out = c.zeros((N,), f32)
    rotate_after_terminate.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out)
    lane = np.arange(N) % p
    source = np.arange(N) - lane + (lane + 1) % p
    alive = (lane >= 2) & (source % p >= 2)  # the reader ran and its source wrote
    got = out.numpy()
    np.testing.assert_array_equal(got[alive], x[source[alive]], err_msg=f"plane size {p}")
    assert not got[lane < 2].any()  # terminated units wrote nothing


# -- fences ----------------------------------------------------------------------------

@cube(launch=True)
def fenced_exchange(x: Array[f32], out: Array[f32], nxt: Array[f32]):
    sh = SharedMemory(f32, 64)
    i = ABSOLUTE_POS
    sh[UNIT_POS] = x[i] * f32(2)
    out[i] = x[i] + f32(1)
    cubepy.fence_cube()
    cubepy.sync_cube()
    nxt[i] = sh[(UNIT_POS + u32(1)) % CUBE_DIM]


def test_fence_cube_runs_everywhere(runtime_client):
    c = runtime_client
    x = np.arange(N, dtype=np.float32)
    out, nxt = c.zeros((N,), f32), c.zeros((N,), f32)
    fenced_exchange.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out, nxt)
    np.testing.assert_array_equal(out.numpy(), x + 1)
    unit = np.arange(N) % DIM
    np.testing.assert_array_equal(nxt.numpy(), 2 * x[np.arange(N) - unit + (unit + 1) % DIM])


@cube(launch=True)
def last_cube_total(x: Array[u32], partial: Array[u32], count: Array[u32],
                    total: Array[u32]):
    if UNIT_POS == u32(0):
        s = u32(0)
        for k in range(CUBE_DIM):
            s += x[CUBE_POS * CUBE_DIM + k]
        partial[CUBE_POS] = s
        cubepy.fence_device()  # the partial is seen before the ticket by every cube
        ticket = atomic_add(count, 0, u32(1))
        if ticket == CUBE_COUNT - u32(1):
            t = u32(0)
            for k in range(CUBE_COUNT):
                t += partial[k]
            total[0] = t


def test_fence_device_orders_a_partial_before_the_ticket(runtime_client):
    c = runtime_client
    cubes = 16
    x = np.arange(cubes * DIM, dtype=np.uint32)
    args = (c.tensor(x), c.zeros((cubes,), u32), c.zeros((1,), u32), c.zeros((1,), u32))
    if not get_target(c.target).supports_op(SyncOp.FENCE_DEVICE):
        with pytest.raises(CompileError, match="WGSL has no fence_device"):
            last_cube_total.launch(c, CubeCount(cubes), CubeDim(DIM), *args)
        return
    last_cube_total.launch(c, CubeCount(cubes), CubeDim(DIM), *args)
    assert int(args[3].numpy()[0]) == int(x.sum())
    assert int(args[2].numpy()[0]) == cubes


# -- the IR, the targets' sources, the compilers ---------------------------------------

def test_ir_text_names_each_barrier_and_vote():
    text = fenced_exchange.ir(cube_dim=CubeDim(DIM))
    assert "barrier.fence_cube" in text and "\n  barrier  #" in text
    assert "barrier.sync_plane" in rotate_in_plane.ir(cube_dim=CubeDim(DIM))
    text = ballot_elect.ir(cube_dim=CubeDim(DIM))
    # one plane op per word of the mask, on the condition evaluated once
    assert all(f"plane.ballot(%cond, {k}:u32)" in text for k in range(4))
    assert "plane.elect(true)" in text


def test_each_target_spells_the_new_ops():
    dim = CubeDim(DIM)
    cuda, wgsl, metal = (ballot_elect.source(t, cube_dim=dim) for t in ("cuda", "wgsl", "metal"))
    assert "__ballot_sync(__activemask()" in cuda and "thread_rank() == 0" in cuda
    assert "subgroupBallot(" in wgsl and "subgroupExclusiveAdd(1u) == 0u" in wgsl
    assert "metal::simd_ballot(" in metal and "metal::simd_is_first()" in metal
    barriers = {t: rotate_in_plane.source(t, cube_dim=dim) for t in ("cuda", "wgsl", "metal")}
    assert "__syncwarp();" in barriers["cuda"]
    assert "subgroupBarrier();" in barriers["wgsl"]
    assert "simdgroup_barrier(mem_flags::mem_threadgroup);" in barriers["metal"]
    fence = last_cube_total.source("cuda", cube_dim=dim)
    assert "__threadfence();" in fence
    assert "thread_scope_device" in last_cube_total.source("metal", cube_dim=dim)
    assert "__threadfence_block();" in fenced_exchange.source("cuda", cube_dim=dim)
    assert "storageBarrier();\n    workgroupBarrier();" in fenced_exchange.source(
        "wgsl", cube_dim=dim)


@pytest.mark.nvcc
@pytest.mark.parametrize("kernel, spec", [
    (ballot_elect, {}), (prod_scans, {"Numeric": i32}), (prod_scans, {"Numeric": f32}),
    (prod_scans, {"Numeric": f16}), (rotate_in_plane, {}), (fenced_exchange, {}),
    (wide, {"Numeric": f16})], ids=lambda v: getattr(v, "__name__", str(v)))
def test_new_constructs_compile_with_nvcc_naga_and_clang(tmp_path, kernel, spec):
    validate_sources(kernel, tmp_path, cube_dim=(DIM, 1, 1), **spec)


@pytest.mark.nvcc
def test_fence_device_compiles_with_nvcc_and_clang(tmp_path):
    validate_sources(last_cube_total, tmp_path, cube_dim=(DIM, 1, 1),
                     targets=("cuda", "metal"))


@pytest.mark.nvcc
@pytest.mark.parametrize("dtype", WIDE_TYPES + [cubepy.bf16], ids=lambda t: t.name)
def test_wide_plane_types_compile_with_nvcc(tmp_path, dtype):
    validate_sources(wide, tmp_path, cube_dim=(DIM, 1, 1), targets=("cuda",), Numeric=dtype)
    validate_sources(prod_scans, tmp_path, cube_dim=(DIM, 1, 1), targets=("cuda",),
                     Numeric=dtype)


# -- what a target lacks, and the user's mistakes --------------------------------------

def test_wgsl_has_no_fence_device():
    with pytest.raises(CompileError, match="WGSL has no fence_device") as info:
        last_cube_total.source("wgsl", cube_dim=CubeDim(DIM))
    assert "fence_device()" in str(info.value) and "two launches" in str(info.value)


@cube(launch=True)
def divergent_fence(x: Array[f32]):
    if x[ABSOLUTE_POS] > f32(0):
        x[ABSOLUTE_POS] = f32(1)
        cubepy.fence_cube()


def test_a_divergent_fence_cube_is_fine_except_in_wgsl():
    for target in ("cuda", "metal"):
        assert divergent_fence.source(target, cube_dim=CubeDim(DIM))
    divergent_fence.ir(cube_dim=CubeDim(DIM))
    with pytest.raises(CompileError, match="WGSL writes it as a workgroup barrier"):
        divergent_fence.source("wgsl", cube_dim=CubeDim(DIM))


def test_divergent_fence_cube_runs_on_the_cpu_runtime():
    c = cubepy.client("cpu")
    x = np.array([1, -1] * 32, np.float32)
    t = c.tensor(x)
    divergent_fence.launch(c, CubeCount(1), CubeDim(DIM), t)
    np.testing.assert_array_equal(t.numpy(), np.where(x > 0, 1, x))


@pytest.mark.parametrize("target, dtype", [("metal", i64), ("metal", u64), ("wgsl", f64),
                                           ("cpu", cubepy.bf16)])
def test_a_plane_type_the_target_lacks_is_a_compile_error(target, dtype):
    title = get_target(target).title
    with pytest.raises(CompileError, match=title):
        wide._compile(wide._specialization(CubeDim(DIM), {"Numeric": dtype}), target, True)


def _message(fn) -> str:
    with pytest.raises(CompileError) as info:
        fn.ir(cube_dim=CubeDim(DIM))
    return str(info.value)


def test_ballot_takes_a_condition():
    @cube(launch=True)
    def k(x: Array[u32], out: Array[u32]):
        out[0] = cubepy.plane_ballot(x[0])[0]
    assert "plane_ballot() needs a bool" in _message(k)


def test_elect_takes_no_argument():
    @cube(launch=True)
    def k(out: Array[u32]):
        out[0] = cubepy.select(cubepy.plane_elect(1), u32(1), u32(0))
    assert "plane_elect" in _message(k)


def test_elect_is_not_allowed_inside_a_short_circuit():
    @cube(launch=True)
    def k(x: Array[u32]):
        if x[0] > u32(1) and cubepy.plane_elect():
            x[0] = u32(0)
    assert "plane_elect() cannot be used inside" in _message(k)


def test_fences_take_no_argument():
    @cube(launch=True)
    def k(x: Array[u32]):
        cubepy.fence_device(x)
    assert "fence_device" in _message(k)


def test_the_ir_reader_and_verifier_reject_malformed_barriers_and_votes():
    from cubepy.ir.parser import IRParseError, parse_kernel
    from cubepy.ir.verify import IRVerifyError, verify
    text = rotate_in_plane.ir(cube_dim=CubeDim(DIM))
    with pytest.raises(IRParseError, match="unknown barrier"):
        parse_kernel(text.replace("barrier.sync_plane", "barrier.sync_galaxy"))
    votes = ballot_elect.ir(cube_dim=CubeDim(DIM))
    with pytest.raises(IRVerifyError, match="constant 0..3"):
        verify(parse_kernel(votes.replace("plane.ballot(%cond, 3:u32)",
                                          "plane.ballot(%cond, 4:u32)")))
    with pytest.raises(IRVerifyError, match="plane.elect takes the constant true"):
        verify(parse_kernel(votes.replace("plane.elect(true)", "plane.elect(false)")))


def test_sync_plane_asks_the_wgpu_device_for_subgroup_barriers():
    from cubepy.runtime.wgpu_runtime import scan_features
    compiled = rotate_in_plane._compile(rotate_in_plane._specialization(CubeDim(DIM), {}),
                                        "wgsl", True)
    assert {"subgroups", "subgroup_barrier"} <= compiled.artefact.features
    assert "subgroup_barrier" in scan_features(compiled.artefact.source)
    plain = fenced_exchange._compile(fenced_exchange._specialization(CubeDim(DIM), {}),
                                     "wgsl", True)
    assert "subgroup_barrier" not in plain.artefact.features


class _NoSubgroups:
    features = frozenset()


def test_wgpu_plane_dim_from_the_adapter_or_a_measurement():
    from cubepy.runtime.wgpu_runtime import _plane_dim
    assert _plane_dim({"subgroup_min_size": 32, "subgroup_max_size": 32}, _NoSubgroups()) == 32
    assert _plane_dim({"stackgroup_min_size": 64, "stackgroup_max_size": 64},
                      _NoSubgroups()) == 64
    # a range and no subgroups to measure with: the portable guess
    assert _plane_dim({"subgroup_min_size": 4, "subgroup_max_size": 128}, _NoSubgroups()) == 32
