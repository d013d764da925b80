"""Command-line polish and small conveniences: CLI errors in CLI terms, --version,
examples' --help, CubeCount.cover, the `cubepy` logger, the py.typed marker."""
from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, Float, cube
from cubepy.cli import main
from cubepy.log import configure_from_env, logger

ROOT = Path(__file__).resolve().parent.parent
SEED = str(ROOT / "examples" / "fused_matmul_add_relu.py") + ":fused_matmul_add_relu_kernel"


# -- the command line speaks command line ------------------------------------------------

@pytest.fixture
def comptime_kernel(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(textwrap.dedent("""
        from cubepy import cube, Array, Float, Comptime, ABSOLUTE_POS

        @cube(launch=True)
        def fill(x: Array[Float], n: Comptime[int]):
            x[ABSOLUTE_POS] = Float(n)

        @cube
        def helper(a: Float) -> Float:
            return a
    """))
    return src


def test_unbound_generic_on_the_command_line_says_dash_d(capsys):
    assert main(["emit", SEED]) == 1
    err = capsys.readouterr().err
    assert err.startswith("cubepy: error: Float is not bound: pass -D Float=f32 (one of")
    assert "source()" not in err and "parameter annotation" not in err


def test_unbound_comptime_on_the_command_line_says_dash_d(capsys, comptime_kernel):
    assert main(["emit", f"{comptime_kernel}:fill", "-D", "Float=f32"]) == 1
    err = capsys.readouterr().err
    assert "the comptime parameter 'n' is not bound: pass -D n=..." in err
    assert "source()" not in err


def test_the_python_api_still_names_its_keywords(comptime_kernel):
    import importlib.util
    spec = importlib.util.spec_from_file_location("k_mod", comptime_kernel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(cubepy.CompileError, match=r"pass n=\.\.\. to source\(\)/ir\(\)/launch"):
        module.fill.source("cuda", Float=cubepy.f32)
    with pytest.raises(cubepy.CompileError,
                       match=r"pass Float=f32 to source\(\)/ir\(\) \(one of"):
        module.fill.source("cuda", n=3)
    with pytest.raises(cubepy.OptionError, match="^line_sizes: fill has no Line"):
        module.fill.source("cuda", Float=cubepy.f32, n=3, line_sizes={"x": 4})


def test_line_size_errors_name_the_option(capsys, comptime_kernel):
    assert main(["emit", f"{comptime_kernel}:fill", "-D", "Float=f32", "-D", "n=2",
                 "--line-size", "x=4"]) == 2
    assert capsys.readouterr().err.startswith("cubepy: error: --line-size: fill has no Line")


def test_a_device_function_on_the_command_line(comptime_kernel):
    with pytest.raises(SystemExit, match="device function .* emit and ir take a kernel"):
        main(["emit", f"{comptime_kernel}:helper"])


def test_cubepy_debug_shows_the_traceback_on_the_command_line(monkeypatch):
    monkeypatch.setenv("CUBEPY_DEBUG", "1")
    with pytest.raises(cubepy.CompileError):
        main(["emit", SEED])


def test_version_has_one_source():
    run = subprocess.run([sys.executable, "-m", "cubepy", "--version"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert run.stdout.strip() == f"cubepy {cubepy.__version__}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]           # not written twice
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "cubepy.__version__"}


def test_py_typed_marker_ships_with_the_package():
    assert (ROOT / "cubepy" / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["cubepy"]


# -- examples' --help --------------------------------------------------------------------

EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_options_have_help_and_choices(name, monkeypatch):
    from examples_loader import load_example
    module = load_example(name)
    seen: list[argparse.ArgumentParser] = []

    def capture(parser, args=None, namespace=None):
        seen.append(parser)
        raise SystemExit(0)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(SystemExit):
        module.main([])
    (parser,) = seen
    for action in parser._actions:
        assert action.help, f"{name}: {action.option_strings} has no help text"
    runtime = next(a for a in parser._actions if "--runtime" in a.option_strings)
    # torch tensors live where torch puts them: wgpu cannot import that memory; WGSL has
    # no matrix units (cmma) and no 8-bit float
    runtimes = (("cuda", "cpu") if name in ("torch_autograd", "cmma_matmul", "fp8_quantize")
                else ("cuda", "wgpu", "cpu"))
    assert tuple(runtime.choices) == runtimes
    assert "CUBEPY_RUNTIME" in runtime.help


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_rejects_an_unknown_runtime_before_running(name):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"),
                          "--runtime", "metal"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2
    assert "invalid choice: 'metal'" in run.stderr and "cuda" in run.stderr


# -- CubeCount.cover ---------------------------------------------------------------------

@pytest.mark.parametrize("shape, dim, want", [
    (1000, CubeDim(256), CubeCount(4, 1, 1)),
    (1024, CubeDim(256), CubeCount(4, 1, 1)),
    (1025, 256, CubeCount(5, 1, 1)),
    ((100, 30), CubeDim(16, 16), CubeCount(7, 2, 1)),
    ((5, 6, 7), (2, 2, 2), CubeCount(3, 3, 4)),
    ((64, 3), CubeDim(64), CubeCount(1, 3, 1)),        # an axis the cube dim leaves at 1
    ((0,), CubeDim(64), CubeCount(1, 1, 1)),            # an empty shape: one idle cube
    (np.int64(65), (np.int32(64),), CubeCount(2, 1, 1)),
])
def test_cover_is_the_smallest_covering_count(shape, dim, want):
    got = CubeCount.cover(shape, dim)
    assert got == want and isinstance(got, CubeCount)
    sizes = (shape,) if np.isscalar(shape) else tuple(shape)
    dims = (dim,) if np.isscalar(dim) else tuple(dim)
    for i, size in enumerate(sizes):
        d = dims[i] if i < len(dims) else 1
        assert got[i] * d >= size                      # covers
        assert size == 0 or (got[i] - 1) * d < size    # and one cube fewer would not


@pytest.mark.parametrize("shape, dim, text", [
    ((1, 2, 3, 4), 1, "1 to 3 sizes"),
    ((), 1, "1 to 3 sizes"),
    ((-1,), 1, ">= 0"),
    ((4,), (0,), ">= 1"),
    ((4.0,), 1, "integers"),
    ((True,), 1, "integers"),
])
def test_cover_rejects_bad_shapes(shape, dim, text):
    with pytest.raises(ValueError, match=text):
        CubeCount.cover(shape, dim)


@cube(launch=True)
def _fill_index(out: Array[Float]):
    i = ABSOLUTE_POS
    if i < len(out):
        out[i] = Float(i)


def test_cover_launches_a_unit_per_element():
    client = cubepy.client("cpu")
    out = client.zeros(1000, cubepy.f32)
    _fill_index.launch(client, CubeCount.cover(out.shape, CubeDim(64)), CubeDim(64), out)
    np.testing.assert_array_equal(out.numpy(), np.arange(1000, dtype=np.float32))


# -- logging -----------------------------------------------------------------------------

@cube(launch=True)
def _double(x: Array[Float]):
    x[ABSOLUTE_POS] = x[ABSOLUTE_POS] * Float(2.0)


def test_compiles_and_cache_hits_are_logged(caplog):
    client = cubepy.client("cpu")
    x = client.tensor(np.ones(8, np.float32))
    with caplog.at_level(logging.DEBUG, logger="cubepy"):
        _double.launch(client, 1, 8, x)
        _double.launch(client, 1, 8, x)                      # a plan hit: no record
        _double.source("wgsl", cube_dim=CubeDim(8), Float=cubepy.f32)
        _double.source("wgsl", cube_dim=CubeDim(8), Float=cubepy.f32)
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("cubepy")]
    assert "launch plan miss: _double on cpu (Float=f32 cube_dim=8x1x1)" in messages
    assert sum(m.startswith("compiled _double for cpu (Float=f32 cube_dim=8x1x1) in ")
               for m in messages) == 1
    assert sum(m.startswith("built the cpu executable of _double") for m in messages) == 1
    assert sum(m.startswith("compiled _double for wgsl") for m in messages) == 1
    assert "compile cache hit: _double for wgsl (Float=f32 cube_dim=8x1x1)" in messages
    assert sum("plan miss" in m for m in messages) == 1


def test_runtime_choice_is_logged(caplog, monkeypatch):
    monkeypatch.delenv("CUBEPY_RUNTIME", raising=False)
    with caplog.at_level(logging.DEBUG, logger="cubepy"):
        chosen = cubepy.client()
    assert any(r.getMessage().startswith(f"chose the {chosen.runtime} runtime")
               for r in caplog.records)


def test_cubepy_log_env_prints_records_on_stderr(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, cubepy
        from cubepy import cube, Array, f32, ABSOLUTE_POS

        @cube(launch=True)
        def k(x: Array[f32]):
            x[ABSOLUTE_POS] = f32(1.0)

        c = cubepy.client("cpu")
        k.launch(c, 1, 4, c.tensor(np.zeros(4, np.float32)))
    """))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    quiet = subprocess.run([sys.executable, str(script)],  # (leaves the disk cache empty)
                           env={**env, "CUBEPY_LOG": "", "CUBEPY_NO_CACHE": "1"},
                           capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = subprocess.run([sys.executable, str(script)], env={**env, "CUBEPY_LOG": "debug"},
                          capture_output=True, text=True, timeout=300)
    assert loud.returncode == 0
    assert "cubepy INFO: opened runtime cpu" in loud.stderr
    assert "cubepy DEBUG: launch plan miss: k on cpu" in loud.stderr
    assert "cubepy INFO: compiled k for cpu" in loud.stderr
    again = subprocess.run([sys.executable, str(script)], env={**env, "CUBEPY_LOG": "info"},
                           capture_output=True, text=True, timeout=300)
    assert "cubepy INFO: read k for cpu (cube_dim=4x1x1) from the disk cache in " \
        in again.stderr
    bad = subprocess.run([sys.executable, str(script)], env={**env, "CUBEPY_LOG": "loud"},
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 0 and "CUBEPY_LOG='loud' is not a level" in bad.stderr


def test_configure_from_env_adds_one_handler(monkeypatch):
    before = list(logger.handlers), logger.level
    try:
        monkeypatch.setenv("CUBEPY_LOG", "info")
        configure_from_env()
        configure_from_env()
        assert sum(getattr(h, "_cubepy_env", False) for h in logger.handlers) == 1
        assert logger.level == logging.INFO
    finally:
        logger.handlers[:] = before[0]
        logger.setLevel(before[1])


def test_disabled_logging_costs_no_describe_call(monkeypatch):
    """With the logger off, the compile path does not even format the specialisation."""
    import cubepy.kernel as kernel_mod
    calls = []
    monkeypatch.setattr(kernel_mod, "describe", lambda spec: calls.append(spec) or "")
    assert not logger.isEnabledFor(logging.INFO)
    _double.source("metal", cube_dim=CubeDim(4), Float=cubepy.f32)
    _double.source("metal", cube_dim=CubeDim(4), Float=cubepy.f32)
    assert calls == []
