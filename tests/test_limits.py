"""Limits are errors, never crashes or hangs (docs/LANGUAGE.md, "Limits"): deep
expressions and long chains of device functions compile up to the documented depth and
are a CompileError beyond it; nested unroll() is capped; decorating something that is
not a function, or an annotation that raises, is a CompileError; literals out of range
of an annotated type are CompileErrors."""
from __future__ import annotations

import functools
import importlib.util
import sys
import time

import numpy as np
import pytest

import cubepy
from cubepy import Array, CompileError, CubeCount, CubeDim, Comptime, cube, f32, i32, \
    u32, unroll
from cubepy.frontend.calls import MAX_INLINE_DEPTH
from cubepy.frontend.parse import MAX_NESTING
from cubepy.ir.passes.unroll import MAX_UNROLLED_STATEMENTS

HEADER = "import cubepy\nfrom cubepy import *\n\n"


def load(tmp_path, source: str, name: str = "kernel"):
    """Imports a generated module (cubepy reads kernels from their source file)."""
    path = tmp_path / f"gen_{abs(hash(source))}.py"
    path.write_text(HEADER + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), str(path)


def sum_kernel(terms: int) -> str:
    body = " + ".join(f"x[{k}]" for k in range(terms))
    return ("@cube(launch=True)\ndef kernel(x: Array[f32], out: Array[f32]):\n"
            f"    out[0] = {body}\n")


def chain_kernel(depth: int) -> str:
    """g0 .. g{depth-1}, each calling the previous one, and a kernel calling the last."""
    parts = ["@cube\ndef g0(v: f32) -> f32:\n    return v + 1.0\n"]
    parts += [f"@cube\ndef g{k}(v: f32) -> f32:\n    return g{k - 1}(v) + 1.0\n"
              for k in range(1, depth)]
    parts.append("@cube(launch=True)\ndef kernel(out: Array[f32]):\n"
                 f"    out[0] = g{depth - 1}(f32(0.0))\n")
    return "\n".join(parts)


def run_cpu(kernel, *arrays) -> list[np.ndarray]:
    cpu = cubepy.client("cpu")
    tensors = [cpu.tensor(a) for a in arrays]
    kernel.launch(cpu, CubeCount(1), CubeDim(1), *tensors)
    return [t.numpy() for t in tensors]


# ----------------------------------------------------------------------------- depth

def test_a_400_term_sum_compiles_for_every_target_and_runs(tmp_path):
    kernel, _ = load(tmp_path, sum_kernel(400))
    for target in ("cuda", "wgsl", "metal"):
        assert "399" in kernel.source(target)
    x = np.arange(400, dtype=np.float32)
    _, out = run_cpu(kernel, x, np.zeros(1, np.float32))
    assert out[0] == sum(range(400))


@pytest.mark.parametrize("runtime", [pytest.param("wgpu", marks=pytest.mark.wgpu),
                                     pytest.param("cuda", marks=pytest.mark.cuda)])
def test_a_400_term_sum_runs_on_gpu_runtimes(tmp_path, runtime):
    try:
        client = cubepy.client(runtime)
    except cubepy.LaunchError:
        pytest.skip(f"no {runtime} runtime")
    kernel, _ = load(tmp_path, sum_kernel(400))
    x = client.tensor(np.arange(400, dtype=np.float32))
    out = client.zeros(1, f32)
    kernel.launch(client, CubeCount(1), CubeDim(1), x, out)
    assert out.numpy()[0] == sum(range(400))


def test_a_deep_unary_chain_compiles(tmp_path):
    source = ("@cube(launch=True)\ndef kernel(x: Array[i32], out: Array[i32]):\n"
              f"    out[0] = {'- ' * 600}x[0]\n")
    kernel, _ = load(tmp_path, source)
    _, out = run_cpu(kernel, np.array([7], np.int32), np.zeros(1, np.int32))
    assert out[0] == 7


def test_nesting_beyond_the_limit_is_a_compile_error_at_the_line(tmp_path):
    with pytest.raises(CompileError) as info:
        load(tmp_path, sum_kernel(MAX_NESTING + 5))
    err = info.value
    assert str(MAX_NESTING) in err.msg and "nested" in err.msg
    assert err.lineno == 6  # the header's 3 lines, the decorator, the def, the sum
    assert "^" in str(err).splitlines()[-1]


def test_a_chain_of_300_device_functions_compiles_and_runs(tmp_path):
    kernel, _ = load(tmp_path, chain_kernel(300))
    (out,) = run_cpu(kernel, np.zeros(1, np.float32))
    assert out[0] == 300
    assert "fn " in kernel.source("wgsl")


def test_device_functions_nested_beyond_the_limit_are_a_compile_error(tmp_path):
    kernel, path = load(tmp_path, chain_kernel(MAX_INLINE_DEPTH + 2))
    with pytest.raises(CompileError) as info:
        kernel.source("cuda")
    assert f"more than {MAX_INLINE_DEPTH} calls deep" in info.value.msg
    assert info.value.filename == path


def test_a_recursion_error_anywhere_becomes_a_compile_error(tmp_path, monkeypatch):
    """The safety net: a compiler walk that overflows even the deep thread's stack."""
    kernel, path = load(tmp_path, sum_kernel(3))

    def endless(*args):
        return endless(*args)

    monkeypatch.setattr(cubepy.kernel, "build_kernel", endless)
    monkeypatch.setattr(cubepy.deep, "RECURSION_LIMIT", 5000)
    with pytest.raises(CompileError) as info:
        kernel.source("cuda")
    assert "too deeply nested" in info.value.msg
    assert info.value.filename == path and info.value.lineno == 4
    assert sys.getrecursionlimit() < 5000  # restored


# ----------------------------------------------------------------------------- unroll

@cube(launch=True)
def nested_unroll(out: Array[u32], n: Comptime[int], m: Comptime[int]):
    acc = u32(0)
    for i in unroll(range(n)):  # E:outer
        for j in unroll(range(m)):
            acc += u32(i * j)
    out[0] = acc


@cube(launch=True)
def mixed_unroll(out: Array[u32], n: Comptime[int]):
    acc = u32(0)
    for i in unroll(range(n)):  # E:mixed
        for k in range(out.len()):
            for j in unroll(range(n)):
                acc += u32(i * j)
    out[0] = acc


def _line_of(marker: str) -> int:
    with open(__file__) as fh:
        return next(k + 1 for k, text in enumerate(fh) if text.rstrip().endswith(marker))


def test_a_1024_by_1024_unroll_nest_is_rejected_at_once():
    start = time.perf_counter()
    with pytest.raises(CompileError) as info:
        nested_unroll.source("cuda", n=1024, m=1024)
    assert time.perf_counter() - start < 5
    assert str(MAX_UNROLLED_STATEMENTS) in info.value.msg and "1048576" in info.value.msg
    assert info.value.lineno == _line_of("# E:outer")


def test_an_unroll_nest_within_the_cap_compiles():
    cpu = cubepy.client("cpu")
    out = cpu.zeros(1, u32)
    nested_unroll.launch(cpu, CubeCount(1), CubeDim(1), out, 8, 16)
    assert out.numpy()[0] == sum(i * j for i in range(8) for j in range(16))


def test_an_unroll_nest_through_a_plain_loop_is_capped():
    with pytest.raises(CompileError) as info:
        mixed_unroll.source("cuda", n=512)  # 512 * (1 + 512) statements
    assert str(MAX_UNROLLED_STATEMENTS) in info.value.msg and "262656" in info.value.msg
    assert info.value.lineno == _line_of("# E:mixed")


def test_an_unroll_nest_at_the_cap_compiles(monkeypatch):
    """The cap counts the copies of the body: n x m statements here (a small cap keeps
    the test fast; 64 x 1024 at the real cap takes seconds)."""
    monkeypatch.setattr(cubepy.ir.passes.unroll, "MAX_UNROLLED_STATEMENTS", 64)
    assert nested_unroll.ir(n=8, m=8).count("acc") >= 64
    with pytest.raises(CompileError, match="makes 72 statements"):
        nested_unroll.ir(n=8, m=9)


# ----------------------------------------------------------------------------- decorating

class NotAFunction:
    pass


def plain(x):
    return x


@pytest.mark.parametrize("thing, words", [
    (functools.partial(plain, 1), "functools.partial"),
    (NotAFunction, "class NotAFunction"),
    (len, "builtin 'len'"),
    (lambda x: x, "lambda"),
    (print, "builtin 'print'"),
])
def test_decorating_a_non_function_is_a_compile_error_at_the_call(thing, words):
    with pytest.raises(CompileError) as info:
        cube(thing)  # E:decorate
    assert words in info.value.msg
    assert info.value.filename == __file__
    assert info.value.lineno == _line_of("# E:decorate")
    assert "cube(thing)" in str(info.value)


def test_decorating_a_cube_function_again_is_a_compile_error():
    with pytest.raises(CompileError, match="already a @cube function"):
        cube(launch=True)(nested_unroll)


class _Raising:
    @property
    def Elem(self):
        raise RuntimeError("no element type today")


RAISING = _Raising()


def test_an_annotation_that_raises_is_a_compile_error_at_the_annotation():
    with pytest.raises(CompileError) as info:
        @cube(launch=True)
        def kernel(out: Array[RAISING.Elem]):  # E:annotation
            out[0] = 1.0
    err = info.value
    assert "RuntimeError: no element type today" in err.msg
    assert err.lineno == _line_of("# E:annotation")
    assert "RAISING.Elem" in str(err)


def test_a_global_attribute_that_raises_is_a_compile_error_at_its_use():
    @cube(launch=True)
    def kernel(out: Array[f32]):
        out[0] = RAISING.Elem  # E:global
    with pytest.raises(CompileError) as info:
        kernel.source("cuda")
    assert "RuntimeError: no element type today" in info.value.msg
    assert info.value.lineno == _line_of("# E:global")


# ----------------------------------------------------------------------------- literals

@pytest.mark.parametrize("decl, fits", [
    ("j: i32 = 2147483648", False), ("j: i32 = 2147483647", True),
    ("j: i32 = -2147483649", False), ("j: i32 = -2147483648", True),
    ("j: u32 = -1", False), ("j: u32 = 4294967296", False), ("j: u32 = 4294967295", True),
    ("j: i64 = 9223372036854775808", False), ("j: i64 = -9223372036854775808", True),
    ("j: u64 = 18446744073709551616", False), ("j: u64 = -1", False),
    ("j: f32 = 1e39", False), ("j: f32 = 3.4e38", True), ("j: f32 = -1e39", False),
    ("j: f16 = 70000.0", False), ("j: f16 = 70000", False), ("j: f16 = 65504.0", True),
    ("j: f64 = 1e308", True), ("j: i32 = 1.5", False),
])
def test_a_literal_out_of_range_of_its_annotation_is_a_compile_error(tmp_path, decl, fits):
    source = ("from cubepy import i64, u64, f16, f64\n"
              "@cube(launch=True)\ndef kernel(out: Array[f32]):\n"
              f"    {decl}\n    out[0] = f32(j)\n")
    kernel, path = load(tmp_path, source)
    if fits:
        assert kernel.source("cuda")
        return
    with pytest.raises(CompileError) as info:
        kernel.source("cuda")
    err = info.value
    assert "does not fit" in err.msg or "cannot be" in err.msg
    assert err.filename == path and err.lineno == 7
    value_text = decl.split("= ", 1)[1]
    assert err.source_line.strip() == decl and err.col_offset == 4 + decl.index(value_text)


def _endless(depth: int = 0) -> int:
    return _endless(depth + 1)


def test_a_nested_deep_compile_that_overflows_is_an_error_not_a_hang(monkeypatch):
    """A device function parsed on the deep thread that overflows there too must not
    wait for the deep thread's lock (held by the outer compile)."""
    from cubepy.deep import call_deep
    monkeypatch.setattr(cubepy.deep, "RECURSION_LIMIT", 5000)
    where = lambda why: CompileError(why, "inner.py", 3)  # noqa: E731
    outcome: list = []

    def outer():
        try:
            call_deep(lambda: call_deep(_endless, where), lambda why: CompileError(why))
        except CompileError as exc:
            outcome.append(exc)

    import threading
    thread = threading.Thread(target=outer, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "nested deep compile hung"
    assert outcome and outcome[0].filename == "inner.py"
    assert "too deeply nested" in outcome[0].msg


def test_deep_compile_hands_back_results_and_errors():
    from cubepy.deep import call_deep
    calls = []

    def deep_once() -> str:
        calls.append(sys.getrecursionlimit())
        if len(calls) == 1:
            raise RecursionError
        return "done"

    assert call_deep(deep_once, CompileError) == "done"
    assert calls[1] > calls[0]  # the retry ran with the raised limit
    with pytest.raises(KeyError):
        call_deep(lambda: {}["x"], CompileError)


@pytest.mark.nvcc
def test_the_400_term_sum_compiles_with_nvcc(tmp_path):
    import clike_kernels as ck
    from test_codegen_cuda import NVCC, _rename
    if NVCC is None:
        pytest.skip("nvcc not installed")
    kernel, _ = load(tmp_path, sum_kernel(400))
    sources = {"deep": kernel.source("cuda", cube_dim=(64, 1, 1))}
    results = ck.compile_all(sources, ".cu",
                             lambda p: [NVCC, "-arch=sm_90", "-cubin", "-o", "/dev/null", p],
                             str(tmp_path), header_lines=("#include",), rename=_rename)
    assert results["deep"][0] == 0, results["deep"][1]


@pytest.mark.clang
def test_the_400_term_sum_compiles_with_clang_as_metal(tmp_path):
    import clike_kernels as ck
    from test_codegen_metal import CLANG, SHIM
    if CLANG is None:
        pytest.skip("clang++ not installed")
    kernel, _ = load(tmp_path, sum_kernel(400))
    sources = {"deep": kernel.source("metal", cube_dim=(64, 1, 1))}
    results = ck.compile_all(
        sources, ".metal",
        lambda p: [CLANG, "-std=c++17", "-fsyntax-only", "-I", SHIM, "-x", "c++", p],
        str(tmp_path), header_lines=("#include <metal_stdlib>", "using namespace metal;"))
    assert results["deep"][0] == 0, results["deep"][1]


# ----------------------------------------------------------------------------- compile-time values

class _RaisingEq:
    def __eq__(self, other):
        raise RuntimeError("no comparing today")

    __hash__ = object.__hash__


RAISING_EQ = _RaisingEq()


def test_a_huge_compile_time_power_is_a_compile_error_not_a_hang():
    @cube(launch=True)
    def kernel(out: Array[f32]):
        out[0] = f32(10 ** 10 ** 8)  # E:power
    start = time.perf_counter()
    with pytest.raises(CompileError) as info:
        kernel.source("cuda")
    assert time.perf_counter() - start < 5
    assert "1024 bits" in info.value.msg
    assert info.value.lineno == _line_of("# E:power")


def test_compile_time_integers_within_the_bound_still_fold():
    @cube(launch=True)
    def kernel(out: Array[f32]):
        out[0] = f32(2 ** 1000 // 2 ** 990)
    (result,) = run_cpu(kernel, np.zeros(1, np.float32))
    assert result[0] == 1024


def test_a_global_whose_eq_raises_is_a_compile_error_at_the_comparison():
    @cube(launch=True)
    def kernel(out: Array[f32]):
        if RAISING_EQ == 1:  # E:eq
            out[0] = 1.0
    with pytest.raises(CompileError) as info:
        kernel.source("cuda")
    assert "RuntimeError: no comparing today" in info.value.msg
    assert info.value.lineno == _line_of("# E:eq")


# ----------------------------------------------------------------------------- long elif chains

def elif_chain_kernel(branches: int) -> str:
    """Branch k sets r = k + 1 and changes v, so a later condition evaluated after a
    taken branch would be seen (v == k + 1 would match next)."""
    lines = ["@cube(launch=True)", "def kernel(x: Array[i32], out: Array[i32]):",
             "    i = ABSOLUTE_POS", "    v = x[i]", "    r = 0", "    if v == 0:",
             "        r = 1", "        v = v + 1"]
    for k in range(1, branches):
        lines += [f"    elif v == {k}:", f"        r = {k + 1}", "        v = v + 1"]
    lines += ["    else:", "        r = -1", "    out[i] = r * 1000 + v"]
    return "\n".join(lines) + "\n"


def _elif_expected(branches: int, lanes: int) -> np.ndarray:
    v = np.arange(lanes)
    return np.where(v < branches, (v + 1) * 1000 + v + 1, -1000 + v).astype(np.int32)


@pytest.mark.parametrize("runtime", [
    "cpu", pytest.param("wgpu", marks=pytest.mark.wgpu),
    pytest.param("cuda", marks=pytest.mark.cuda)])
def test_a_150_branch_elif_chain_takes_the_right_branch(tmp_path, runtime):
    """A 400-branch chain made the cpu runtime's Python too deeply indented, and
    llvmpipe took branch 78 of a 100-branch chain: chains longer than 64 are flattened."""
    try:
        client = cubepy.client(runtime)
    except cubepy.LaunchError:
        pytest.skip(f"no {runtime} runtime")
    kernel, _ = load(tmp_path, elif_chain_kernel(150))
    x = client.tensor(np.arange(160, dtype=np.int32))
    out = client.zeros(160, i32)
    kernel.launch(client, CubeCount(5), CubeDim(32), x, out)
    assert out.numpy().tolist() == _elif_expected(150, 160).tolist()


def test_a_400_branch_elif_chain_runs_on_cpu(tmp_path):
    kernel, _ = load(tmp_path, elif_chain_kernel(400))
    x = np.arange(416, dtype=np.int32)
    _, out = run_cpu_lanes(kernel, x, np.zeros(416, np.int32))
    assert out.tolist() == _elif_expected(400, 416).tolist()


def run_cpu_lanes(kernel, x, out):
    cpu = cubepy.client("cpu")
    tx, tout = cpu.tensor(x), cpu.tensor(out)
    kernel.launch(cpu, CubeCount(len(x) // 32), CubeDim(32), tx, tout)
    return tx.numpy(), tout.numpy()


def test_short_elif_chains_keep_their_shape(tmp_path):
    kernel, _ = load(tmp_path, elif_chain_kernel(64))
    assert "elif_done" not in kernel.ir()
    kernel, _ = load(tmp_path, elif_chain_kernel(65))
    assert "elif_done" in kernel.ir()
