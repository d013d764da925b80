"""Kernels typed interactively: IPython/Jupyter cells and the Python 3.13 REPL keep their
source in linecache, so kernels defined there compile, launch and report errors at the
right cell line; where no source is kept (`python -c`, stdin, exec) the error says why
and what to do."""
from __future__ import annotations

import linecache
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cubepy

ROOT = Path(__file__).resolve().parent.parent

KERNEL_CELL = """
import numpy as np
import cubepy
from cubepy import cube, Array, Float, ABSOLUTE_POS

@cube(launch=True)
def scale(x: Array[Float], a: Float):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = x[i] * a

client = cubepy.client("cpu")
t = client.tensor(np.arange(10, dtype=np.float32))
scale.launch(client, 1, 16, t, 3.0)
result = t.numpy()
"""

BAD_CELL = """@cube(launch=True)
def mixed(x: Array[Float], n: cubepy.u32):
    i = ABSOLUTE_POS
    x[i] = x[i] / n
mixed.launch(client, 1, 4, t, 2)
"""


@pytest.fixture(scope="module")
def shell():
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactive.InteractiveShell.instance()
    yield shell
    interactive.InteractiveShell.clear_instance()


def test_kernel_defined_in_an_ipython_cell_launches(shell):
    run = shell.run_cell(KERNEL_CELL, store_history=True)
    assert run.success, run.error_in_exec
    np.testing.assert_array_equal(shell.user_ns["result"],
                                  np.arange(10, dtype=np.float32) * 3)
    # generated source cites the cell's lines (the cell starts with an empty line,
    # which IPython drops: `x[i] = x[i] * a` is line 9 of what it runs)
    assert "// 9: x[i] = x[i] * a" in shell.user_ns["scale"].source("cuda", Float=cubepy.f32)


def test_kernel_from_a_cell_runs_on_every_runtime(shell, runtime_client):
    assert shell.run_cell(KERNEL_CELL, store_history=True).success
    scale = shell.user_ns["scale"]
    t = runtime_client.tensor(np.arange(100, dtype=np.float32))
    scale.launch(runtime_client, cubepy.CubeCount.cover(100, 32), 32, t, 0.5)
    np.testing.assert_allclose(t.numpy(), np.arange(100, dtype=np.float32) * 0.5)


def test_errors_in_an_ipython_cell_point_at_the_cell_line(shell):
    assert shell.run_cell(KERNEL_CELL, store_history=True).success
    run = shell.run_cell(BAD_CELL, store_history=True)
    err = run.error_in_exec
    assert isinstance(err, cubepy.CompileError)
    assert (err.lineno, err.col_offset) == (4, 11)       # line 4 of the cell, at `x[i] / n`
    assert err.source_line.strip() == "x[i] = x[i] / n"
    cell = shell.execution_count - 1
    text = str(err).splitlines()
    assert text[1].strip() == f"--> Cell In[{cell}]:4:12"
    assert text[3].index("^") - text[2].index("x[i] / n") == 0
    assert text[3].count("^") == len("x[i] / n")
    # the traceback the user sees stops at the cell: no cubepy frames
    frames = [f.filename for f in __import__("traceback").extract_tb(err.__traceback__)]
    assert not any(f.startswith(str(ROOT / "cubepy")) for f in frames), frames


def test_kernel_typed_in_the_python_313_repl_compiles():
    """Python 3.13's REPL names each input <python-input-N> and registers its text in
    linecache (linecache._register_code); a kernel typed there works like one in a file."""
    source = textwrap.dedent("""
        from cubepy import cube, Array, f32, u32, ABSOLUTE_POS

        @cube(launch=True)
        def halve(x: Array[f32], n: u32):
            x[ABSOLUTE_POS] = x[ABSOLUTE_POS] / n
    """)
    name = "<python-input-7>"
    register = getattr(linecache, "_register_code", None)
    if register is not None and sys.version_info >= (3, 13):
        register(name, source, "<stdin>")
    else:  # what _register_code does
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace: dict = {}
    exec(compile(source, name, "exec"), namespace)
    with pytest.raises(cubepy.CompileError) as info:
        namespace["halve"].source("cuda")
    err = info.value
    assert (err.filename, err.lineno, err.col_offset) == (name, 6, 22)
    assert err.source_line.strip() == "x[ABSOLUTE_POS] = x[ABSOLUTE_POS] / n"
    assert f"--> {name}:6:23" in str(err)


def _run(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUBEPY_RUNTIME="cpu")
    env.pop("CUBEPY_DEBUG", None)
    return subprocess.run([sys.executable, *args], input=stdin, env=env, text=True,
                          capture_output=True, timeout=300)


SNIPPET = """from cubepy import cube, Array, f32, ABSOLUTE_POS
@cube(launch=True)
def k(x: Array[f32]):
    x[ABSOLUTE_POS] = f32(1.0)
"""


@pytest.mark.parametrize("how", ["python -c", "stdin"])
def test_kernels_without_source_say_what_to_do(how):
    run = _run(["-c", SNIPPET]) if how == "python -c" else _run(["-"], stdin=SNIPPET)
    assert run.returncode == 1
    assert "cubepy.CompileError: cannot read the source of k" in run.stderr
    assert "Put the kernel in a .py file" in run.stderr
    assert "IPython/Jupyter" in run.stderr
    where = "`python -c` or exec()" if how == "python -c" else "standard input"
    assert where in run.stderr
    assert str(ROOT / "cubepy") not in run.stderr  # one short traceback


def test_exec_of_a_string_says_so():
    namespace: dict = {}
    with pytest.raises(cubepy.CompileError, match="exec\\(\\)") as info:
        exec(compile(SNIPPET, "<string>", "exec"), namespace)
    assert info.value.lineno == 2  # the decorator line: where the definition starts
