"""In-memory caches of kernels and clients: exact specialisation keys (comptime floats by
bit pattern), bounded (LRU) per-kernel caches, executables freed with their kernel, and
wgpu buffers dropped before a submit released."""
from __future__ import annotations

import gc
import math
import weakref

import numpy as np
import pytest

import cubepy
import cubepy.kernel as kernel_mod
from cubepy import ABSOLUTE_POS, Array, Comptime, cube, f32, u32
from cubepy.lru import LRU
from cubepy.spec import Specialization


@cube(launch=True)
def _reciprocal(c: Comptime[float], out: Array[f32]):
    if ABSOLUTE_POS == 0:
        out[0] = f32(1.0) / f32(c)


@cube(launch=True)
def _add_const(c: Comptime[int], x: Array[u32], out: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(out):
        out[i] = x[i] + u32(c)


def _run_reciprocal(client, c) -> float:
    out = client.zeros(1, f32)
    _reciprocal.launch(client, 1, 1, c, out)
    return float(out.numpy()[0])


# -- exact keys --------------------------------------------------------------------------

def test_specialisations_compare_comptime_floats_by_bits():
    zero, neg = Specialization.make({}, {"c": 0.0}), Specialization.make({}, {"c": -0.0})
    assert zero != neg and zero == Specialization.make({}, {"c": 0.0})
    nan1 = Specialization.make({}, {"c": float("nan")})
    nan2 = Specialization.make({}, {"c": float("nan")})
    assert nan1 == nan2 and hash(nan1) == hash(nan2)
    assert Specialization.make({}, {"c": 1}) != Specialization.make({}, {"c": True})
    assert len({zero, neg, nan1, nan2}) == 3


def test_negative_zero_comptime_gets_its_own_kernel(runtime_client):
    assert _run_reciprocal(runtime_client, 0.0) == math.inf
    assert _run_reciprocal(runtime_client, -0.0) == -math.inf  # not the 0.0 kernel
    assert _run_reciprocal(runtime_client, 0.0) == math.inf


def test_negative_zero_comptime_source_differs():
    assert _reciprocal.source("cuda", c=0.0) != _reciprocal.source("cuda", c=-0.0)


def test_nan_comptime_compiles_once(runtime_client):
    before_plans, before_compiled = len(_reciprocal._plans), len(_reciprocal._compiled)
    for _ in range(5):  # a new NaN object each time
        assert math.isnan(_run_reciprocal(runtime_client, float("nan")))
    assert len(_reciprocal._plans) == before_plans + 1
    assert len(_reciprocal._compiled) == before_compiled + 1


def test_nan_comptime_source_compiles_once():
    before = len(_reciprocal._compiled)
    first = _reciprocal.source("metal", c=float("nan"))
    assert _reciprocal.source("metal", c=float("nan")) == first
    assert len(_reciprocal._compiled) == before + 1


# -- bounded caches ----------------------------------------------------------------------

def test_lru_keeps_the_most_recently_used():
    lru = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recent
    lru.put("c", 3)
    assert "b" not in lru and lru.get("a") == 1 and lru["c"] == 3 and len(lru) == 2
    with pytest.raises(ValueError):
        LRU(0)


def test_per_kernel_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(kernel_mod, "COMPILED_CACHE", 3)
    monkeypatch.setattr(kernel_mod, "PLAN_CACHE", 4)

    @cube(launch=True)
    def add_const(c: Comptime[int], x: Array[u32], out: Array[u32]):
        i = ABSOLUTE_POS
        if i < len(out):
            out[i] = x[i] + u32(c)

    client = cubepy.client("cpu")
    x = client.tensor(np.arange(8, dtype=np.uint32))
    for c in list(range(10)) + [0, 1]:  # 0 and 1 were evicted: compiled again, correctly
        out = client.zeros(8, u32)
        add_const.launch(client, 1, 8, c, x, out)
        assert np.array_equal(out.numpy(), np.arange(8, dtype=np.uint32) + c)
        assert len(add_const._compiled) <= 3 and len(add_const._plans) <= 4
    assert len(add_const._compiled) == 3 and len(add_const._plans) == 4


def test_plan_cache_drops_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(kernel_mod, "PLAN_CACHE", 2)

    @cube(launch=True)
    def add_const(c: Comptime[int], x: Array[u32], out: Array[u32]):
        i = ABSOLUTE_POS
        if i < len(out):
            out[i] = x[i] + u32(c)

    client = cubepy.client("cpu")
    x, out = client.tensor(np.zeros(4, np.uint32)), client.zeros(4, u32)
    for c in (1, 2, 1, 1, 3):  # 1 was used after 2: 2 is the one to go
        add_const.launch(client, 1, 4, c, x, out)
    assert sorted(key[-9] for key in add_const._plans) == [1, 3]


def test_plans_of_one_specialisation_share_the_executable(runtime_client):
    x = runtime_client.tensor(np.arange(64, dtype=np.uint32))
    out = runtime_client.zeros(64, u32)
    for cubes in (1, 2, 3):  # three plans (cube counts), one compiled program
        _add_const.launch(runtime_client, cubes, 64, 7, x, out)
    exes = {id(p.executable) for k, p in _add_const._plans.items()
            if p.client is runtime_client and 7 in k}
    assert len(exes) == 1
    assert np.array_equal(out.numpy(), np.arange(64, dtype=np.uint32) + 7)


# -- freed with their kernel -------------------------------------------------------------

def _make_and_launch(client):
    @cube(launch=True)
    def scale(x: Array[f32], out: Array[f32]):
        i = ABSOLUTE_POS
        if i < len(out):
            out[i] = x[i] * f32(3.0)

    x = client.tensor(np.ones(16, np.float32))
    out = client.zeros(16, f32)
    scale.launch(client, 1, 16, x, out)
    assert np.array_equal(out.numpy(), np.full(16, 3, np.float32))
    (plan,) = scale._plans.values()
    return weakref.ref(scale), weakref.ref(plan.executable)


def test_executables_are_freed_with_their_kernel(runtime_client):
    kernel_ref, exe_ref = _make_and_launch(runtime_client)
    runtime_client.sync()
    gc.collect()
    assert kernel_ref() is None
    assert exe_ref() is None  # no client cache keeps the compiled program


# -- wgpu: buffers dropped before a submit ----------------------------------------------

@pytest.mark.wgpu
def test_wgpu_bind_group_of_dropped_tensor_is_released_after_submit():
    try:
        client = cubepy.client("wgpu")
    except cubepy.LaunchError:
        pytest.skip("no wgpu adapter")
    x = client.tensor(np.ones(64, np.uint32))
    out = client.zeros(64, u32)

    @cube(launch=True)
    def add_five(x: Array[u32], out: Array[u32]):
        i = ABSOLUTE_POS
        if i < len(out):
            out[i] = x[i] + u32(5)

    add_five.launch(client, 1, 64, x, out)  # recorded, not submitted
    (plan,) = add_five._plans.values()
    (bind_group,) = plan.executable.bind_groups.values()
    bg_ref, buf_ref = weakref.ref(bind_group), weakref.ref(out.handle)
    del bind_group, out, x  # dropped before the submit
    gc.collect()
    client.sync()
    gc.collect()
    # The bind group references its buffers natively: holding it would pin their memory.
    assert buf_ref() is None and bg_ref() is None


@pytest.mark.parametrize("bad", ["", None, [0.0]])
def test_wrong_comptime_value_is_a_launch_error_naming_it(bad):
    client = cubepy.client("cpu")
    with pytest.raises(cubepy.LaunchError, match="'c'"):
        _reciprocal.launch(client, 1, 1, bad, client.zeros(1, f32))
