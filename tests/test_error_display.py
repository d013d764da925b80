"""Errors fit on a screen: tracebacks of CompileError / LaunchError end at the user's call
(cubepy's frames only with CUBEPY_DEBUG=1), missing packages name the pip command, unknown
runtimes list the valid names, and the examples print one message instead of a traceback."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, Float, cube, f32, u32
from cubepy.errors import _is_internal, exit_on_error, missing_package

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = str(ROOT / "cubepy")
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

BAD_AT_DECORATION = """
    from cubepy import cube, Array, f32, ABSOLUTE_POS

    def helper():
        @cube(launch=True)
        def k(x: Array[f32]):
            x[ABSOLUTE_POS] = x[ABSOLUTE_POS] + "a"
        return k

    helper()
"""

BAD_AT_LAUNCH = """
    import numpy as np
    import cubepy
    from cubepy import cube, Array, f32, u32, ABSOLUTE_POS

    @cube(launch=True)
    def k(x: Array[f32], n: u32):
        x[ABSOLUTE_POS] = x[ABSOLUTE_POS] / n

    c = cubepy.client("cpu")
    k.launch(c, 1, 4, c.tensor(np.ones(4, np.float32)), 2)
"""

WRONG_ARGUMENT = """
    import numpy as np
    import cubepy
    from cubepy import cube, Array, f32, ABSOLUTE_POS

    @cube(launch=True)
    def k(x: Array[f32]):
        x[ABSOLUTE_POS] = f32(1.0)

    c = cubepy.client("cpu")
    k.launch(c, 1, 4, c.tensor(np.ones(4, np.int32)))
"""


def _run_script(tmp_path: Path, body: str, debug: bool = False) -> subprocess.CompletedProcess:
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUBEPY_RUNTIME="cpu")
    env.pop("CUBEPY_DEBUG", None)
    if debug:
        env["CUBEPY_DEBUG"] = "1"
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def _frame_files(stderr: str) -> list[str]:
    return [line.split('"')[1] for line in stderr.splitlines()
            if line.startswith('  File "')]


@pytest.mark.parametrize("body, line, col, message, underlined", [
    (BAD_AT_DECORATION, 7, 45, "strings can only be compared", '"a"'),
    (BAD_AT_LAUNCH, 8, 23, "cannot mix f32 and u32 in '/'", "x[ABSOLUTE_POS] / n"),
], ids=["decoration", "launch"])
def test_compile_error_traceback_ends_at_the_user_call(tmp_path, body, line, col, message,
                                                       underlined):
    run = _run_script(tmp_path, body)
    assert run.returncode == 1
    err = run.stderr
    files = _frame_files(err)
    assert files and all(not f.startswith(PACKAGE) for f in files), err
    assert all(f.endswith("user_script.py") for f in files), err
    assert "During handling" not in err and "direct cause" not in err, err
    tail = err[err.index("cubepy.CompileError: "):].splitlines()
    assert message in tail[0]                                           # the message,
    assert tail[1].strip() == f"--> {tmp_path / 'user_script.py'}:{line}:{col}"  # where,
    assert tail[2].startswith("   | x[ABSOLUTE_POS] = ")                 # the line,
    start, width = tail[3].index("^"), tail[3].count("^")              # the caret under
    assert tail[2][start:start + width] == underlined                   # the culprit


def test_launch_error_traceback_ends_at_the_user_call(tmp_path):
    run = _run_script(tmp_path, WRONG_ARGUMENT)
    files = _frame_files(run.stderr)
    assert files and all(f.endswith("user_script.py") for f in files), run.stderr
    assert run.stderr.rstrip().endswith(
        "cubepy.LaunchError: parameter 'x' expects f32 elements, got i32")
    assert "k.launch(c, 1, 4" in run.stderr  # the user's line is the last frame shown


@pytest.mark.parametrize("body", [BAD_AT_DECORATION, BAD_AT_LAUNCH, WRONG_ARGUMENT],
                         ids=["decoration", "launch", "launch-error"])
def test_cubepy_debug_keeps_the_internal_frames(tmp_path, body):
    run = _run_script(tmp_path, body, debug=True)
    files = _frame_files(run.stderr)
    assert any(f.startswith(PACKAGE) for f in files), run.stderr
    assert run.stderr.count("cubepy.") >= 1


def _user_frames_only(exc: BaseException) -> list[str]:
    return [f.filename for f in traceback.extract_tb(exc.__traceback__)]


@cube(launch=True)
def _scale(x: Array[Float], a: Float):
    x[ABSOLUTE_POS] = x[ABSOLUTE_POS] * a


def test_every_public_entry_point_hides_its_frames():
    c = cubepy.client("cpu")
    calls = [
        lambda: _scale.source("cuda", Float=u32),          # OptionError
        lambda: _scale.source("ptx", Float=f32),           # OptionError (unknown target)
        lambda: _scale.ir(Double=f32),                     # OptionError
        lambda: _scale.launch(c, CubeCount(1), CubeDim(1), 1.0, 1.0),
        lambda: _scale.launch_unchecked(c, CubeCount(1), CubeDim(1), 1.0, 1.0),
        lambda: cubepy.client("metal"),
        lambda: c.zeros(4, "not-a-dtype"),
        lambda: c.empty(4, "not-a-dtype"),
        lambda: c.tensor(np.ones(3, dtype=np.complex64)),
        lambda: c.zeros(6, f32).with_line_size(4),
        lambda: cube(launch=True)(_bad_kernel_source),
    ]
    for call in calls:
        with pytest.raises(cubepy.CubepyError) as info:
            call()
        files = _user_frames_only(info.value)
        assert all(f == __file__ for f in files), (info.value, files)


def _bad_kernel_source(x: Array[f32]):
    x[ABSOLUTE_POS] = [1]


def test_option_errors_stay_type_and_value_errors():
    with pytest.raises(TypeError):
        _scale.source("cuda", Nope=f32)
    with pytest.raises(ValueError, match="unknown target 'ptx': expected one of cuda, wgsl"):
        _scale.source("ptx", Float=f32)


def test_internal_bugs_keep_their_full_traceback(monkeypatch):
    """Only cubepy's errors for a user's mistake are trimmed; a bug keeps every frame."""
    import cubepy.kernel as kernel_mod

    def broken(*args):
        raise KeyError("internal")
    monkeypatch.setattr(kernel_mod, "build_kernel", broken)
    with pytest.raises(KeyError) as info:
        _scale.source("cuda", Float=f32, cube_dim=(3, 1, 1))
    assert any(f.startswith(PACKAGE) for f in _user_frames_only(info.value))


def test_errors_pickle_and_print_under_their_public_name():
    assert cubepy.CompileError.__module__ == "cubepy"
    err = pickle.loads(pickle.dumps(cubepy.LaunchError("bad", "x")))
    assert str(err) == "bad"
    assert traceback.format_exception_only(err)[0].startswith("cubepy.LaunchError: ")


@pytest.mark.parametrize("runtime, module, extra", [("cuda", "pycuda", "cuda"),
                                                     ("wgpu", "wgpu", "wgpu")])
def test_a_missing_runtime_package_names_the_pip_command(runtime, module, extra, tmp_path):
    run = _run_script(tmp_path, f"""
        import sys
        sys.modules[{module!r}] = None   # as if not installed
        import cubepy
        cubepy.client({runtime!r})
    """)
    assert f'pip install "cubepy[{extra}]"' in run.stderr, run.stderr
    assert f"the {runtime} runtime needs the {module} package" in run.stderr
    assert all(f.endswith("user_script.py") for f in _frame_files(run.stderr))


def test_a_broken_package_install_is_not_called_missing():
    err = missing_package("the cuda runtime", "pycuda", "cuda",
                          ImportError("libcuda.so.1: cannot open shared object file"))
    assert "failed to import" in str(err) and "libcuda.so.1" in str(err)
    assert "pip install" not in str(err)


@pytest.mark.parametrize("name", ["metal", "gpu", "cuda:x", "cpu:1", "cuda:-1"])
def test_unknown_runtime_names_list_the_valid_ones(name):
    with pytest.raises(cubepy.LaunchError, match="expected cuda, cuda:N, wgpu, wgpu:N or cpu"):
        cubepy.client(name)


def test_unknown_runtime_from_the_environment_says_so(monkeypatch):
    monkeypatch.setenv("CUBEPY_RUNTIME", "vulkan")
    with pytest.raises(cubepy.LaunchError, match=r"'vulkan' \(from \$CUBEPY_RUNTIME\)"):
        cubepy.client()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_examples_without_pycuda_print_one_paragraph(example):
    code = ("import runpy, sys; sys.modules['pycuda'] = None; "
            f"sys.argv = [{str(example)!r}, '--runtime', 'cuda']; "
            f"runpy.run_path({str(example)!r}, run_name='__main__')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("CUBEPY_DEBUG", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1, run.stderr  # one paragraph: one line
    assert run.stderr.startswith(f"{example.name}: error: the cuda runtime needs")
    assert 'pip install "cubepy[cuda]"' in run.stderr


def test_exit_on_error_maps_errors_to_exit_codes(capsys, monkeypatch):
    monkeypatch.delenv("CUBEPY_DEBUG", raising=False)
    for exc, code in ((cubepy.CompileError("bad kernel"), 1), (cubepy.LaunchError("no"), 2)):
        with pytest.raises(SystemExit) as info:
            with exit_on_error("prog"):
                raise exc
        assert info.value.code == code
        assert capsys.readouterr().err.startswith("prog: error: ")
    monkeypatch.setenv("CUBEPY_DEBUG", "1")
    with pytest.raises(cubepy.LaunchError):
        with exit_on_error("prog"):
            raise cubepy.LaunchError("shown with its traceback")


def test_internal_frames_are_recognised():
    frame = sys._getframe()
    assert not _is_internal(frame)
    import cubepy.kernel as kernel_mod
    assert kernel_mod.__file__.startswith(PACKAGE)


def test_device_limit_errors_end_at_the_user_call_on_every_runtime(runtime_client):
    """The same trimming on each runtime (cuda and wgpu check their own device limits)."""
    x = runtime_client.zeros(4, f32)
    too_wide = runtime_client.limits.max_cube_dim[0] + 1
    with pytest.raises(cubepy.LaunchError, match="cube_dim.x") as info:
        _scale.launch(runtime_client, CubeCount(1), CubeDim(too_wide), x, 2.0)
    assert info.value.param == "cube_dim"
    assert all(f == __file__ for f in _user_frames_only(info.value))
