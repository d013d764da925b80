"""@cubepy.autotune: picks the fastest config, keeps the choice on disk, CUBEPY_AUTOTUNE=0."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Comptime, CubeCount, CubeDim, Tensor, cube, f32

SLOW_FIRST = [{"cube_dim": CubeDim(64), "loops": 4000},  # deliberately slow
              {"cube_dim": CubeDim(64), "loops": 1}]


@cube(launch=True)
def spin(x: Tensor[f32], loops: Comptime[int]):
    i = ABSOLUTE_POS
    v = x[i]
    for _ in range(loops):
        v = v * 0.5 + 0.5
    x[i] = v


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_AUTOTUNE", raising=False)
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)


def tuned(configs=SLOW_FIRST):
    return cubepy.autotune(configs=configs, key=["x"], warmup=1, reps=3)(spin)


def test_picks_the_faster_config(runtime_client):
    kernel = tuned()
    x = runtime_client.zeros((64 * 32,), f32)
    assert kernel.best_config(runtime_client, CubeCount(32), x) is kernel.configs[1]
    slow, fast = kernel.last_timings
    assert fast < slow
    kernel.launch(runtime_client, CubeCount(32), x)
    assert float(x.numpy()[0]) > 0  # it ran (0.5 after one loop from 0)


def test_choice_is_reused_from_disk_by_a_new_instance(monkeypatch):
    client = cubepy.client("cpu")
    x = client.zeros((64 * 32,), f32)
    tuned().launch(client, CubeCount(32), x)
    again = tuned()
    monkeypatch.setattr(again, "_tune", lambda *a, **k: pytest.fail("tuned again"))
    assert again.best_config(client, CubeCount(32), x) is again.configs[1]


def test_a_new_key_is_tuned_again():
    client = cubepy.client("cpu")
    kernel = tuned()
    kernel.launch(client, CubeCount(32), client.zeros((64 * 32,), f32))
    kernel.last_timings = []
    kernel.launch(client, CubeCount(16), client.zeros((64 * 16,), f32))
    assert len(kernel.last_timings) == 2


def test_choice_is_reused_by_a_fresh_process(tmp_path):
    script = tmp_path / "tune_once.py"
    script.write_text(textwrap.dedent("""
        import json, cubepy
        from cubepy import ABSOLUTE_POS, Comptime, CubeCount, CubeDim, Tensor, cube, f32

        @cubepy.autotune(configs=[{"cube_dim": CubeDim(64), "loops": 4000},
                                  {"cube_dim": CubeDim(64), "loops": 1}], key=["x"],
                         warmup=1, reps=3)
        @cube(launch=True)
        def spin(x: Tensor[f32], loops: Comptime[int]):
            i = ABSOLUTE_POS
            v = x[i]
            for _ in range(loops):
                v = v * 0.5 + 0.5
            x[i] = v

        client = cubepy.client("cpu")
        x = client.zeros((64 * 32,), f32)
        spin.launch(client, CubeCount(32), x)
        print(json.dumps({"tuned": spin.last_timings != [],
                          "best": spin.best_config(client, CubeCount(32), x)["loops"]}))
    """))
    env = dict(os.environ, CUBEPY_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.path.dirname(os.path.dirname(cubepy.__file__)))
    runs = [json.loads(subprocess.run([sys.executable, str(script)], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert runs == [{"tuned": True, "best": 1}, {"tuned": False, "best": 1}]


def test_autotune_0_uses_the_first_config(monkeypatch):
    monkeypatch.setenv("CUBEPY_AUTOTUNE", "0")
    client = cubepy.client("cpu")
    kernel = tuned()
    x = client.zeros((64 * 32,), f32)
    assert kernel.best_config(client, CubeCount(32), x) is kernel.configs[0]
    kernel.launch(client, CubeCount(32), x)
    assert kernel.last_timings == []  # nothing was timed


def test_configs_beyond_the_device_are_skipped():
    client = cubepy.client("cpu")
    too_big = client.limits.max_units_per_cube * 2
    kernel = tuned([{"cube_dim": CubeDim(too_big), "loops": 1}] + SLOW_FIRST)
    x = client.zeros((64 * 32,), f32)
    assert kernel.best_config(client, lambda cfg: CubeCount(32), x) is kernel.configs[2]
    assert kernel.last_timings[0] is None


def test_no_config_fits_raises_the_launch_error():
    client = cubepy.client("cpu")
    too_big = client.limits.max_units_per_cube * 2
    kernel = tuned([{"cube_dim": CubeDim(too_big), "loops": 1}])
    with pytest.raises(cubepy.LaunchError):
        kernel.launch(client, CubeCount(1), client.zeros((64,), f32))


def test_cube_count_may_depend_on_the_config():
    client = cubepy.client("cpu")
    configs = [{"cube_dim": CubeDim(32), "loops": 1}, {"cube_dim": CubeDim(64), "loops": 1}]
    kernel = tuned(configs)
    x = client.zeros((256,), f32)
    seen = []
    kernel.launch(client, lambda cfg: seen.append(cfg) or CubeCount(256 // cfg["cube_dim"].x),
                  x)
    assert (x.numpy() >= 0.5).all()  # each config covered all 256 elements
    assert configs[0] in seen and configs[1] in seen


@pytest.mark.parametrize("configs, key, match", [
    ([], ["x"], "configs is empty"),
    ([{"loops": 1}], ["x"], "needs a 'cube_dim'"),
    ([{"cube_dim": CubeDim(64), "bogus": 1}], ["x"], "not parameters of the kernel"),
    ([{"cube_dim": CubeDim(64), "loops": 1}], ["y"], "key names \\['y'\\]"),
])
def test_bad_decorator_arguments(configs, key, match):
    with pytest.raises(ValueError, match=match):
        cubepy.autotune(configs=configs, key=key)(spin)


def test_autotune_goes_above_a_kernel():
    @cube
    def helper(v: f32) -> f32:
        return v

    with pytest.raises(TypeError, match="above @cube\\(launch=True\\)"):
        cubepy.autotune(configs=SLOW_FIRST)(helper)


def same(fn):
    return fn


def test_decorators_below_cube_stay_an_error():
    with pytest.raises(cubepy.CompileError, match="no other decorators below @cube"):
        @cube(launch=True)
        @same
        def wrapped(x: Tensor[f32]):
            x[0] = 1.0


def test_the_kernel_methods_stay_reachable():
    kernel = tuned()
    assert "loops" in [p.name for p in kernel.params]
    assert "__global__" in kernel.source("cuda", cube_dim=CubeDim(64), loops=2)
    with pytest.raises(AttributeError):
        kernel.no_such_attribute


def _scripted_bench(monkeypatch, script: dict[int, list[float]]):
    """cubepy.autotune's bench answering, per config index (the kernel's `loops`), the
    next of its scripted times; returns the list of indices timed, in order."""
    import importlib
    from cubepy import BenchResult
    # the module (`cubepy.autotune` as an attribute is the decorator)
    autotune_mod = importlib.import_module("cubepy.autotune")
    timed: list[int] = []

    def fake_bench(run, launcher, device, count, cfg, args, kwargs, **options):
        index = cfg["loops"]
        timed.append(index)
        return BenchResult((script[index].pop(0),) * options["reps"], "wall")

    monkeypatch.setattr(autotune_mod, "bench", fake_bench)
    return timed


def test_configs_close_to_the_fastest_are_timed_again_in_turns(monkeypatch):
    # config 1 is fastest at first, config 0 within 5% of it, config 2 far behind; timed
    # again three times in turns, config 0 is the faster: it is chosen, and config 2 is
    # not timed again
    timed = _scripted_bench(monkeypatch, {0: [1.03, 0.95, 0.96, 0.94],
                                          1: [1.00, 1.10, 1.12, 1.09], 2: [2.0]})
    configs = [{"cube_dim": CubeDim(32), "loops": i} for i in range(3)]
    kernel = cubepy.autotune(configs=configs, key=["x"], reps=3)(spin)
    x = cubepy.client("cpu").zeros((64 * 32,), f32)
    assert kernel.best_config(cubepy.client("cpu"), CubeCount(32), x) is kernel.configs[0]
    assert timed == [0, 1, 2, 0, 1, 0, 1, 0, 1]
    assert kernel.last_timings == [pytest.approx(0.955), pytest.approx(1.095), 2.0]


def test_a_clear_winner_is_not_timed_again(monkeypatch):
    timed = _scripted_bench(monkeypatch, {0: [2.0], 1: [1.0], 2: [1.06]})
    configs = [{"cube_dim": CubeDim(32), "loops": i} for i in range(3)]
    kernel = cubepy.autotune(configs=configs, key=["x"], reps=3)(spin)
    x = cubepy.client("cpu").zeros((64 * 32,), f32)
    assert kernel.best_config(cubepy.client("cpu"), CubeCount(32), x) is kernel.configs[1]
    assert timed == [0, 1, 2]
    assert kernel.last_timings == [2.0, 1.0, 1.06]
