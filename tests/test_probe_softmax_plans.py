"""benchmarks/probe_softmax_plans.py: every variant it times computes softmax (the
benchmark's plans, exponentials through exp2, the expf and prefetched variants it
compares them with), and its JSON holds each one's times."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def test_every_variant_matches_numpy_on_the_cpu_runtime(tmp_path):
    from benchmarks import probe_softmax_plans as probe
    from benchmarks.kernels import softmax
    out = tmp_path / "probe.json"
    assert probe.main(["--rows", "6", "--cols", "1024", "--rounds", "2", "--reps", "1",
                       "--runtime", "cpu", "--out", str(out)]) == 0
    (shape,) = json.loads(out.read_text())["shapes"]
    assert shape["left_out"] == []
    names = set(shape["times_ms"])
    plans = softmax.register_plans(1024 // 4)
    assert sum(n.startswith("expf ") for n in names) == len(plans) > 0
    assert sum(n.startswith("plan cube per row in registers, one barrier") for n in names) \
        == len(plans)
    assert sum(n.startswith("plan cube per row") for n in names) == 2 * len(plans)
    assert sum(n.startswith("prefetched, ") for n in names) == \
        len(plans) * len(probe.PREFETCHED_ROWS_PER_CUBE)
    assert "plan online (cube per row)" in names
    assert all(len(t) == 2 for t in shape["times_ms"].values())
    assert all(e < 1e-6 for e in shape["max_error"].values()), shape["max_error"]


class _Timing:
    def __init__(self, median_ms):
        self.median_ms = median_ms


def test_choose_plan_ranks_plans_by_their_median_over_rounds(monkeypatch):
    """One slow round does not lose a plan its place, nor one fast round win it; a plan
    the device refuses drops out; the medians are kept for the benchmark's record."""
    import cubepy
    from benchmarks.kernels import softmax

    class Client:
        runtime = "wgpu"

    a, b, c = ("cube", 128, 8), ("cube", 256, 4), ("cube", 512, 2)
    script = {a: [1.0, 5.0, 1.0], b: [0.5, 2.0, 2.0], c: [cubepy.LaunchError("no")],
              None: [3.0, 3.0, 3.0]}
    calls = {plan: 0 for plan in script}

    def bench(launch, plan, **kwargs):
        got = script[plan][calls[plan]]
        calls[plan] += 1
        if isinstance(got, Exception):
            raise got
        return _Timing(got)

    monkeypatch.setattr(cubepy, "bench", bench)
    monkeypatch.setattr(softmax, "CHOICE_TIMES", {})
    memo: dict = {}
    chosen = softmax.choose_plan(memo, ("key",), Client(), [a, b, c], lambda plan: None,
                                 lambda plan: True)
    assert chosen == a and memo[("key",)] == a
    assert calls == {a: 3, b: 3, c: 1, None: 3}
    assert softmax.CHOICE_TIMES[("key",)] == {a: 1.0, b: 2.0, None: 3.0}
    assert softmax.timed_plans(("key",), "online") == {
        softmax.describe_plan(a): 1.0, softmax.describe_plan(b): 2.0, "online": 3.0}


def test_min_cubes_edits_the_launch_bounds_of_kernels_compiled_inside(monkeypatch):
    from benchmarks import probe_softmax_plans as probe
    from benchmarks.kernels import softmax
    from cubepy import CubeDim, cube
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    kernel = softmax.ROW_KERNELS["cube"].fn
    with probe.min_cubes_per_sm(3):
        assert os.environ["CUBEPY_NO_CACHE"] == "1"  # the edited source stays here
        edited = cube(launch=True)(kernel).source("cuda", cube_dim=CubeDim(256), per_unit=4)
    assert "CUBEPY_NO_CACHE" not in os.environ
    plain = cube(launch=True)(kernel).source("cuda", cube_dim=CubeDim(256), per_unit=4)
    assert "__launch_bounds__(256, 3)" in edited and "__launch_bounds__(256)" in plain
    assert edited.replace("__launch_bounds__(256, 3)", "__launch_bounds__(256)") == plain


def test_cache_hints_route_line_accesses_through_the_intrinsics():
    from benchmarks import probe_softmax_plans as probe
    from benchmarks.kernels import softmax
    from cubepy import CubeDim
    plain = softmax.ROW_KERNELS["cube"].source("cuda", cube_dim=CubeDim(128), checked=False,
                                               line_sizes={"x": 4, "out": 4}, per_unit=8)
    loads = plain.count("*reinterpret_cast<const float4*>(&x[")
    stores = plain.count("*reinterpret_cast<float4*>(&out[")
    assert loads == stores == 8
    both = probe.cache_hints("ldcs", "stcs")(plain)
    assert both.count("__ldcs(reinterpret_cast<const float4*>(&x[") == loads
    assert both.count("__stcs(reinterpret_cast<float4*>(&out[") == stores
    assert "*reinterpret_cast" not in both
    stores_only = probe.cache_hints("-", "stwt")(plain)
    assert "__ldcs" not in stores_only and stores_only.count("__stwt(") == stores
