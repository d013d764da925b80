"""Launch options and records: generic line code at line size 1, a zero cube count as a
no-op, strict floats (`fast_math=False`) and `@cubepy.struct` arguments, on every runtime
present (cpu and wgpu here, cuda on a GPU machine) and through every target's compiler
(tests/source_check.py)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CompileError, CubeCount, CubeDim, Float,
                    LaunchError, Line, OptionError, Tensor, cube, f32, f64, u32, unroll)
from cubepy.codegen import float_mode
from cubepy.runtime import cuda_compile
from cubepy.spec import Specialization

from source_check import validate_sources

N = 64


# ----------------------------------------------------------------------------- lines at size 1

@cube(launch=True)
def generic_lines(x: Array[Line[f32]], out: Array[Line[f32]], sums: Array[f32],
                  sizes: Array[u32], k: u32):
    i = ABSOLUTE_POS
    if i < len(x):
        v = x[i]
        v[0] = v[0] * 2.0          # element 0 of a line; of a scalar at line size 1
        v[0] += 1.0
        s = f32(0.0)
        for j in unroll(range(x.line_size())):
            s += v[j]
            v[j] = v[j] + f32(j)
        v[k] = -1.0                # a runtime element index
        out[i] = v
        sums[i] = s
        sizes[i] = u32(len(v)) * 10 + u32(v.size())


def _generic_lines_reference(x: np.ndarray, n: int, k: int):
    lines = x.reshape(-1, n).copy()
    lines[:, 0] = lines[:, 0] * np.float32(2.0) + np.float32(1.0)
    sums = np.zeros(len(lines), np.float32)
    for j in range(n):
        sums += lines[:, j]
    lines += np.arange(n, dtype=np.float32)
    if k < n:
        lines[:, k] = -1.0
    return lines.ravel(), sums, np.full(len(lines), 11 * n, np.uint32)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("k", [0, 1, 7])
def test_generic_line_code_runs_at_every_line_size(runtime_client, n, k):
    c = runtime_client
    x = np.random.default_rng(n).standard_normal(N).astype(np.float32)
    out = c.zeros(N, np.float32).with_line_size(n)
    sums, sizes = c.zeros(N // n, np.float32), c.zeros(N // n, np.uint32)
    generic_lines.launch(c, CubeCount.cover(N // n, 16), CubeDim(16),
                         c.tensor(x).with_line_size(n), out, sums, sizes, k)
    want_out, want_sums, want_sizes = _generic_lines_reference(x, n, k)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-6)  # f32 sums: 1e-6
    np.testing.assert_allclose(sums.numpy(), want_sums, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sizes.numpy(), want_sizes)


@cube(launch=True)
def window_sums(x: Array[Line[f32]], out: Array[Line[f32]], width: u32):
    i = ABSOLUTE_POS
    if i < len(out):
        acc = Line.fill(f32(0.5), x.line_size())  # a line of the buffer's size
        for j in range(width):
            acc += x[i + j]
        out[i] = acc


@pytest.mark.parametrize("n", [1, 2, 4])
def test_line_fill_accumulates_at_every_line_size(runtime_client, n):
    c = runtime_client
    x = np.arange(N, dtype=np.float32)
    lines, width = N // n, 3
    out = c.zeros(N, np.float32).with_line_size(n)
    window_sums.launch(c, CubeCount.cover(lines, 16), CubeDim(16),
                       c.tensor(x).with_line_size(n), out, width)
    padded = np.concatenate([x.reshape(lines, n), np.zeros((width, n), np.float32)])
    want = 0.5 + sum(padded[j:j + lines] for j in range(width))  # reads past the end: 0
    np.testing.assert_array_equal(out.numpy(), want.ravel())


@cube(launch=True)
def fill_of_a_line(x: Array[Line[f32]], out: Array[Line[f32]]):
    out[0] = Line.fill(x[0], 2)


@cube(launch=True)
def fill_of_runtime_size(out: Array[Line[f32]], k: u32):
    out[0] = Line.fill(1.0, k)


def test_line_fill_errors():
    with pytest.raises(CompileError, match="takes a scalar value, not a line"):
        fill_of_a_line.source("cuda", line_sizes={"x": 2, "out": 2})
    with pytest.raises(CompileError, match="known at compile time"):
        fill_of_runtime_size.source("cuda", line_sizes={"out": 2})


@pytest.mark.nvcc
@pytest.mark.parametrize("n", [1, 4])
def test_generic_line_code_sources_compile_at_line_size_1_and_4(tmp_path, n):
    sources = validate_sources(generic_lines, tmp_path, line_sizes={"x": n, "out": n})
    assert "out[" in sources["cuda"]
    validate_sources(window_sums, tmp_path, line_sizes={"x": n, "out": n})


@cube(launch=True)
def scalar_element_out_of_range(x: Array[Line[f32]], out: Array[Line[f32]]):
    v = x[0]
    v[1] = 0.0
    out[0] = v


@cube(launch=True)
def len_of_a_number(out: Array[u32]):
    out[0] = u32(len(3))


@cube(launch=True)
def size_without_call(x: Array[Line[f32]], out: Array[u32]):
    v = x[0]
    out[0] = u32(v.size)


def test_element_errors_at_line_size_1():
    with pytest.raises(CompileError, match="only element is 0") as e:
        scalar_element_out_of_range.source("cuda", line_sizes={"x": 1, "out": 1})
    assert e.value.lineno == scalar_element_out_of_range.fn.__code__.co_firstlineno + 3
    scalar_element_out_of_range.source("cuda", line_sizes={"x": 2, "out": 2})  # in range
    with pytest.raises(CompileError, match="len\\(\\) takes"):
        len_of_a_number.source("cuda")
    with pytest.raises(CompileError, match=r"v.size is a method: v.size\(\) is the line's"):
        size_without_call.source("cuda", line_sizes={"x": 1})


# ----------------------------------------------------------------------------- zero cube count

@cube(launch=True)
def fill_ones(out: Array[f32]):
    if ABSOLUTE_POS < len(out):
        out[ABSOLUTE_POS] = 1.0


@pytest.mark.parametrize("count", [CubeCount(0), (0, 4), (4, 0, 1), (1, 1, 0), 0])
def test_zero_cube_count_launches_nothing(runtime_client, count):
    c = runtime_client
    out = c.zeros(N, np.float32)
    fill_ones.launch(c, count, CubeDim(16), out)
    fill_ones.launch_unchecked(c, count, CubeDim(16), out)
    c.sync()
    assert not out.numpy().any()
    with pytest.raises(LaunchError, match="pass a device tensor") as e:  # still checked
        fill_ones.launch(c, count, CubeDim(16), 3.0)
    assert e.value.param == "out"
    fill_ones.launch(c, CubeCount(4), CubeDim(16), out)  # the same kernel then runs
    assert (out.numpy() == 1.0).all()


def test_negative_cube_count_and_empty_cube_dim_stay_errors():
    c = cubepy.client("cpu")
    out = c.zeros(N, np.float32)
    with pytest.raises(LaunchError, match="sizes >= 0") as e:
        fill_ones.launch(c, (-1, 1), CubeDim(16), out)
    assert e.value.param == "cube_count"
    fill_ones.launch(c, (0, 1, 1), CubeDim(16), out)  # remembered as a count, not a dim
    for dim in [(0, 1, 1), 0]:
        with pytest.raises(LaunchError, match="positive sizes") as e:
            fill_ones.launch(c, CubeCount(1), dim, out)
        assert e.value.param == "cube_dim"


# ----------------------------------------------------------------------------- strict floats

@cube(launch=True, fast_math=False)
def mandelbrot_strict(cx: Array[f32], cy: Array[f32], out: Array[u32], max_iter: u32):
    i = ABSOLUTE_POS
    if i < len(out):
        x = f32(0.0)
        y = f32(0.0)
        n = u32(0)
        while n < max_iter and x * x + y * y <= 4.0:
            t = x * x - y * y + cx[i]
            y = 2.0 * x * y + cy[i]
            x = t
            n += 1
        out[i] = n


@cube(launch=True)
def mandelbrot(cx: Array[f32], cy: Array[f32], out: Array[u32], max_iter: u32):
    i = ABSOLUTE_POS
    if i < len(out):
        x = f32(0.0)
        y = f32(0.0)
        n = u32(0)
        while n < max_iter and x * x + y * y <= 4.0:
            t = x * x - y * y + cx[i]
            y = 2.0 * x * y + cy[i]
            x = t
            n += 1
        out[i] = n


def _mandelbrot_grid(w: int = 96, h: int = 64):
    xs = np.linspace(-2.2, 1.0, w, dtype=np.float32)
    ys = np.linspace(-1.2, 1.2, h, dtype=np.float32)
    cx, cy = np.meshgrid(xs, ys)
    return cx.ravel().astype(np.float32), cy.ravel().astype(np.float32)


def _mandelbrot_reference(cx: np.ndarray, cy: np.ndarray, max_iter: int) -> np.ndarray:
    """The kernel's float chain in f32, one rounding per operation, in its order."""
    x, y = np.zeros_like(cx), np.zeros_like(cy)
    n = np.zeros(cx.shape, np.uint32)
    active = np.ones(cx.shape, bool)
    for _ in range(max_iter):
        active &= (x * x + y * y) <= np.float32(4.0)
        t = (x * x - y * y) + cx
        y = np.where(active, (np.float32(2.0) * x) * y + cy, y)
        x = np.where(active, t, x)
        n += active
    return n


def test_mandelbrot_escape_counts_follow_fast_math(runtime_client):
    c = runtime_client
    cx, cy = _mandelbrot_grid()
    want = _mandelbrot_reference(cx, cy, 200)
    got = {}
    for kernel in (mandelbrot_strict, mandelbrot):
        out = c.zeros(len(cx), np.uint32)
        kernel.launch(c, CubeCount.cover(len(cx), 64), CubeDim(64), c.tensor(cx),
                      c.tensor(cy), out, 200)
        got[kernel.__name__] = out.numpy()
    if c.runtime in ("cpu", "cuda"):  # both promise a chain as written with fast_math=False
        np.testing.assert_array_equal(got["mandelbrot_strict"], want)
    if c.runtime == "cuda":  # the executable was built with --fmad=false, the other not
        spec = mandelbrot_strict._specialization(CubeDim(64), {})
        assert mandelbrot_strict._compile(spec, "cuda", True).executables[c].fast_math is False
        spec = mandelbrot._specialization(CubeDim(64), {})
        assert mandelbrot._compile(spec, "cuda", True).executables[c].fast_math is True
    if c.runtime == "cpu":
        np.testing.assert_array_equal(got["mandelbrot"], want)
    for counts in got.values():  # contraction moves only points near the boundary
        assert (counts == want).mean() > 0.95


def test_fast_math_is_in_the_specialisation_and_the_record():
    strict = mandelbrot_strict._specialization(CubeDim(64), {})
    default = mandelbrot._specialization(CubeDim(64), {})
    assert not strict.fast_math and default.fast_math
    assert Specialization.make(fast_math=False) != Specialization.make()
    for target in ("cuda", "wgsl", "metal", "cpu"):
        assert mandelbrot_strict._compile(strict, target, True).artefact.fast_math is False
        assert mandelbrot._compile(default, target, True).artefact.fast_math is True


def _no_line_numbers(source: str) -> str:
    """`source` without the Python line numbers its comments quote (`// 12: ...`)."""
    return re.sub(r"// \d+: ", "// ", source)


def test_fast_math_false_heads_each_source_and_keeps_the_body():
    heads = {"cuda": "--fmad=false", "metal": "#pragma METAL fp math_mode(safe)",
             "wgsl": "cannot forbid multiply-add contraction"}
    for target, marker in heads.items():
        strict = mandelbrot_strict.source(target, cube_dim=CubeDim(64))
        default = mandelbrot.source(target, cube_dim=CubeDim(64))
        assert marker in strict and marker not in default
        assert strict.splitlines()[0].startswith("// mandelbrot_strict: generated by cubepy")
        header = float_mode._HEADERS[target]
        lines = strict.splitlines()
        assert tuple(lines[1:1 + len(header)]) == header  # right after the first line
        without = "\n".join(lines[:1] + lines[1 + len(header):])
        same = default.replace("mandelbrot", "mandelbrot_strict").rstrip("\n")
        assert _no_line_numbers(without) == _no_line_numbers(same)  # the same body
    assert "fmaf" not in mandelbrot_strict.source("cuda") and "__expf" not in \
        mandelbrot_strict.source("cuda")


@pytest.mark.nvcc
def test_strict_mandelbrot_sources_compile(tmp_path):
    validate_sources(mandelbrot_strict, tmp_path)


def test_fast_math_false_reaches_the_nvrtc_and_nvcc_options():
    assert "--fmad=false" in cuda_compile.nvrtc_options("sm_90", fast_math=False)
    assert "--fmad=false" in cuda_compile.nvcc_options("sm_90", fast_math=False)
    assert not any("fmad" in o for o in cuda_compile.nvrtc_options("sm_90")
                   + cuda_compile.nvcc_options("sm_90"))
    assert "--gpu-architecture=sm_90" in cuda_compile.nvrtc_options("sm_90", False)


class _FakeNvrtc:
    """A loaded libnvrtc (nvrtc_lib.Nvrtc) that records the options it is called with
    and compiles nothing."""

    def __init__(self):
        self.options: list[list[str]] = []

    def version(self):
        return 13, 0

    def compile(self, source, name, options):
        self.options.append(list(options))
        return b"\x7fELF"


def test_fast_math_false_reaches_the_nvrtc_call(monkeypatch):
    from cubepy.runtime import nvrtc_lib
    fake = _FakeNvrtc()
    monkeypatch.setattr(nvrtc_lib, "load", lambda: fake)
    cuda_compile.compile_nvrtc("src", "sm_90", fast_math=False)
    cuda_compile.compile_nvrtc("src", "sm_90")
    assert "--fmad=false" in fake.options[0] and "--fmad=false" not in fake.options[1]
    assert "--gpu-architecture=sm_90" in fake.options[0]


def test_fast_math_false_has_its_own_cubin_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    monkeypatch.delenv("CUBEPY_CUDA_COMPILER", raising=False)
    calls = []

    def fake_nvcc(source: str, arch: str, fast_math: bool = True) -> bytes:
        calls.append(fast_math)
        return b"\x7fELF-" + (b"fmad" if fast_math else b"strict") + source.encode()
    monkeypatch.setattr(cuda_compile, "nvrtc_identity", lambda: None)
    monkeypatch.setattr(cuda_compile, "nvcc_identity", lambda: "nvcc|fake")
    monkeypatch.setattr(cuda_compile, "nvcc_version", lambda: "nvcc-fake")
    monkeypatch.setattr(cuda_compile, "compile_nvcc", fake_nvcc)
    comp = cuda_compile.CudaCompiler("sm_90")
    strict = comp.compile("src", fast_math=False)
    fused = comp.compile("src")
    assert strict != fused and calls == [False, True]
    again = cuda_compile.CudaCompiler("sm_90")
    assert again.compile("src", fast_math=False) == strict and again.last_compiler == "disk"
    assert again.compile("src") == fused and calls == [False, True]
    key = comp.key("src", "nvcc|fake", cuda_compile.nvcc_options("sm_90", False))
    assert key != comp.key("src", "nvcc|fake", cuda_compile.nvcc_options("sm_90"))


def test_fast_math_option_errors():
    with pytest.raises(OptionError, match="True or False"):
        cube(launch=True, fast_math=1)
    with pytest.raises(OptionError, match="option of kernels"):
        cube(fast_math=False)


# ----------------------------------------------------------------------------- structs

@cubepy.struct
class Window:
    offset: Float
    bias: Array[Float]


@cubepy.struct
class Config:
    scale: Float
    n: u32
    x: Tensor[Float]
    window: Window


@cube
def scaled(cfg: Config, v: Float) -> Float:
    return v * cfg.scale + cfg.window.offset


@cube
def bias_at(w, i: u32):
    return w.bias[i]


@cube(launch=True)
def apply_config(cfg: Config, out: Array[Float]):
    i = ABSOLUTE_POS
    if i < cfg.n:
        w = cfg.window
        out[i] = scaled(cfg, cfg.x[i]) + bias_at(w, i) + Float(cfg.x.len())


def _config_reference(x, bias, scale, offset, n):
    want = np.zeros_like(x)
    want[:n] = x[:n] * scale + offset + bias[:n] + len(x)
    return want


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_struct_argument_runs(runtime_client, dtype):
    c = runtime_client
    if dtype is np.float64 and f64 not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks f64")
    rng = np.random.default_rng(3)
    x, bias = rng.standard_normal(N).astype(dtype), rng.standard_normal(N).astype(dtype)
    out = c.zeros(N, dtype)
    cfg = Config(scale=2.5, n=40, x=c.tensor(x),
                 window=Window(0.25, c.tensor(bias)))  # keywords or field order
    apply_config.launch(c, CubeCount(4), CubeDim(16), cfg, out)
    want = _config_reference(x, bias, dtype(2.5), dtype(0.25), 40)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6 if dtype is np.float32 else 0)
    out2 = c.zeros(N, dtype)
    apply_config.launch(c, CubeCount(4), CubeDim(16), out=out2, cfg=cfg)  # by keyword
    np.testing.assert_array_equal(out2.numpy(), out.numpy())


def test_struct_launch_errors_name_the_field():
    c = cubepy.client("cpu")
    x, b, out = c.zeros(N, np.float32), c.zeros(N, np.float32), c.zeros(N, np.float32)
    cases = [
        (Config(scale=1.0, x=x, window=Window(0.0, b)), "cfg.n", "missing"),
        (Config("two", 1, x, Window(0.0, b)), "cfg.scale", "pass a Python number"),
        (Config(1.0, 1, x, Window(0.0, 3)), "cfg.window.bias", "pass a device tensor"),
        (Config(1.0, -1, x, Window(0.0, b)), "cfg.n", "does not fit in u32"),
        (Config(1.0, 1, c.zeros(N, np.float64), Window(0.0, b)), "cfg.window.bias",
         "already bound it to f64"),
        (Window(0.0, b), "cfg", "pass Config"),
        (Config(1.0, 1, x, "w"), "cfg.window", "pass Window"),
    ]
    for cfg, param, message in cases:
        with pytest.raises(LaunchError, match=message) as e:
            apply_config.launch(c, CubeCount(1), CubeDim(16), cfg, out)
        assert e.value.param == param, (param, str(e.value))
    with pytest.raises(LaunchError, match="missing 'out'"):
        apply_config.launch(c, CubeCount(1), CubeDim(16), Config(1.0, 1, x, Window(0.0, b)))


def test_struct_constructor_and_declaration_errors():
    with pytest.raises(TypeError, match="no field 'scal'"):
        Config(scal=1.0)
    with pytest.raises(TypeError, match="two values"):
        Window(0.0, offset=1.0)
    assert Window(0.5, None) == Window(offset=0.5, bias=None) != Window(0.25, None)

    @cubepy.struct
    class Wider(Window):  # a struct extends another's fields
        scale: f32
    assert [name for name, _ in cubepy.records.struct_fields(Wider)] == \
        ["offset", "bias", "scale"]
    assert "offset=0.5" in repr(Window(0.5))
    with pytest.raises(CompileError, match="cannot be a Line"):
        @cubepy.struct
        class WithLine:
            v: Line[f32]
    with pytest.raises(CompileError, match="not <class 'int'>"):
        @cubepy.struct
        class WithInt:
            v: int
    with pytest.raises(CompileError, match="declares no fields"):
        @cubepy.struct
        class Empty:
            pass


@cube(launch=True)
def unknown_field(cfg: Config, out: Array[Float]):
    out[0] = cfg.sclae


@cube(launch=True)
def struct_as_value(cfg: Config, out: Array[Float]):
    out[0] = cfg


@cube
def takes_window(w: Window) -> Float:
    return w.offset


@cube(launch=True)
def wrong_struct_to_device_function(cfg: Config, out: Array[Float]):
    out[0] = takes_window(cfg)


@cube(launch=True)
def rebinds_struct(cfg: Config, out: Array[Float]):
    cfg = 1.0
    out[0] = cfg


def test_struct_compile_errors_point_at_the_line():
    first = unknown_field.fn.__code__.co_firstlineno
    with pytest.raises(CompileError, match=r"cfg \(a Config\) has no field 'sclae' "
                                           r"\(fields: scale, n, x, window\)") as e:
        unknown_field.source("cuda", Float=f32)
    assert e.value.lineno == first + 2  # (the first line is @cube)
    with pytest.raises(CompileError, match="cannot be used as a value: read a field"):
        struct_as_value.source("cuda", Float=f32)
    with pytest.raises(CompileError, match="is Window, got the struct Config"):
        wrong_struct_to_device_function.source("cuda", Float=f32)
    with pytest.raises(CompileError, match="cannot rebind the struct 'cfg'"):
        rebinds_struct.source("cuda", Float=f32)


def test_struct_fields_are_parameters_of_their_own():
    names = [(p.name, p.ir_name, p.kind) for p in apply_config.params]
    assert names == [("cfg.scale", "cfg_scale", "scalar"), ("cfg.n", "cfg_n", "scalar"),
                     ("cfg.x", "cfg_x", "tensor"),
                     ("cfg.window.offset", "cfg_window_offset", "scalar"),
                     ("cfg.window.bias", "cfg_window_bias", "array"),
                     ("out", "out", "array")]
    assert apply_config.arg_names == ("cfg", "out")


@cubepy.struct
class Lines:
    src: Array[Line[f32]]
    dst: Array[Line[f32]]


@cube(launch=True)
def copy_lines(io: Lines):
    i = ABSOLUTE_POS
    if i < len(io.src):
        v = io.src[i]
        v[0] = v[0] + 1.0
        io.dst[i] = v


@pytest.mark.parametrize("n", [1, 4])
def test_struct_with_line_fields(runtime_client, n):
    c = runtime_client
    x = np.arange(N, dtype=np.float32)
    dst = c.zeros(N, np.float32).with_line_size(n)
    copy_lines.launch(c, CubeCount.cover(N // n, 16), CubeDim(16),
                      Lines(c.tensor(x).with_line_size(n), dst))
    want = x.copy()
    want[::n] += 1.0
    np.testing.assert_array_equal(dst.numpy(), want)


@pytest.mark.nvcc
def test_struct_kernel_sources_compile(tmp_path):
    sources = validate_sources(apply_config, tmp_path, Float=f32)
    assert "cfg_scale" in sources["cuda"] and "cfg_window_bias" in sources["wgsl"]
    validate_sources(copy_lines, tmp_path, line_sizes={"io.src": 4, "io.dst": 4})


def _ptx(source: str, fast_math: bool, tmp_path) -> str:
    """PTX from nvcc with the cuda runtime's options (`-ptx` instead of `-cubin`)."""
    src, out = tmp_path / f"k{fast_math}.cu", tmp_path / f"k{fast_math}.ptx"
    src.write_text(source)
    opts = [o for o in cuda_compile.nvcc_options("sm_90", fast_math) if o != "-cubin"]
    subprocess.run([cuda_compile.shutil.which("nvcc"), *opts, "-ptx", "-o", str(out),
                    str(src)], check=True, capture_output=True, timeout=300)
    return out.read_text()


@pytest.mark.nvcc
def test_nvcc_with_the_strict_options_emits_no_fused_multiply_add(tmp_path):
    if cuda_compile.shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    fused = _ptx(mandelbrot.source("cuda", cube_dim=CubeDim(64)), True, tmp_path)
    strict = _ptx(mandelbrot_strict.source("cuda", cube_dim=CubeDim(64)), False, tmp_path)
    # PTX's plain mul.f32/add.f32 may be fused by ptxas; the .rn forms never are.
    assert "mul.f32" in fused and "add.f32" in fused and "mul.rn.f32" not in fused
    assert "mul.rn.f32" in strict and "add.rn.f32" in strict
    assert "mul.f32" not in strict and "add.f32" not in strict and "fma" not in strict


@cubepy.struct
class Tile:
    width: cubepy.Comptime[int]
    data: Array[f32]


@cube(launch=True)
def row_sums(tile: Tile, out: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(out):
        s = f32(0.0)
        for j in unroll(range(tile.width)):  # a compile-time field
            s += tile.data[i * tile.width + j]
        out[i] = s


@pytest.mark.parametrize("width", [2, 3])
def test_struct_comptime_field_specialises_the_kernel(runtime_client, width):
    c = runtime_client
    data = np.arange(16 * width, dtype=np.float32)
    out = c.zeros(16, np.float32)
    row_sums.launch(c, CubeCount(1), CubeDim(16), Tile(width, c.tensor(data)), out)
    np.testing.assert_array_equal(out.numpy(), data.reshape(16, width).sum(axis=1))
    with pytest.raises(CompileError, match=r"Comptime field 'tile.width' is not bound: "
                                           r"launch with the struct, or pass \*\*\{"):
        row_sums.source("cuda")
    src = row_sums.source("cuda", **{"tile.width": width})
    assert src.count("tile_data[") == width  # unrolled: one read per element
    with pytest.raises(LaunchError, match="expects int") as e:
        row_sums.launch(c, CubeCount(1), CubeDim(16), Tile(2.5, c.tensor(data)), out)
    assert e.value.param == "tile.width"


def test_every_lazily_registered_handler_is_found_by_its_key():
    """handler_for imports the modules of seldom-used features at their first call: each
    key those modules register must lead handler_for to them, in a fresh process."""
    script = textwrap.dedent("""
        import importlib
        from cubepy.frontend import intrinsics
        lazy = ("bits", "matrices", "warpgroup", "pipeline_calls")
        before = set(intrinsics._HANDLERS)
        assert not any(f"cubepy.frontend.{m}" in __import__("sys").modules for m in lazy)
        for m in lazy:
            importlib.import_module(f"cubepy.frontend.{m}")
        keys = set(intrinsics._HANDLERS) - before
        assert keys, "the lazy modules registered nothing"
        missing = sorted(k for k in keys if not intrinsics._lazy_modules(k))
        assert not missing, missing
        print(len(keys))
    """)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(cubepy.__file__))}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 20  # cmma, warpgroup, pipeline and bit functions


def test_a_bit_function_compiles_first_in_a_fresh_process(tmp_path):
    script = tmp_path / "ones.py"
    script.write_text(textwrap.dedent("""
        import sys
        from cubepy import ABSOLUTE_POS, Array, cube, u32
        from cubepy.lang import popcount

        @cube(launch=True)
        def ones(x: Array[u32], y: Array[u32]):
            i = ABSOLUTE_POS
            if i < len(y):
                y[i] = popcount(x[i])

        assert "cubepy.frontend.bits" not in sys.modules
        print("__popc" in ones.source("cuda", cube_dim=(32, 1, 1)))
    """))
    env = {**os.environ, "CUBEPY_NO_CACHE": "1",
           "PYTHONPATH": os.path.dirname(os.path.dirname(cubepy.__file__))}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
