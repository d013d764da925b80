"""User text cannot change generated source (cubepy/codegen/names.py).

1. Comments: a Python line copied into `// N:` comments carries characters that end a
   line in some target (U+2028, U+2029, U+0085, VT, FF, CR), or ends in a backslash that
   would splice the next generated line into the comment. The comment must stay a
   comment: checked on the text, by nvcc / clang++ (tests/shim) / naga, and by running.
2. Names: every reserved or generated name of any target in every position (kernel name,
   parameter, buffer, local, device function and its parameter) must give source that
   nvcc, clang++ and naga accept, and a representative subset must compute the same
   values on every runtime.

Kernels are written as Python text into a temporary module and loaded, so they go
through the frontend as user code does. Compilers run once per target on a bundle.
"""
from __future__ import annotations

import builtins
import dataclasses
import importlib.util
import keyword
import os
import re
import shutil
import subprocess
import sys
import unicodedata

import numpy as np
import pytest

import clike_kernels as ck
import cubepy
import wgsl_harness
from cubepy import CubeCount, CubeDim
from cubepy.abi import compute_abi
from cubepy.codegen import emit
from cubepy.codegen.names import comment_text, entry_name, mangle
from cubepy.codegen.reserved import WGSL_HELPER_LOCALS, reserved

NVCC = shutil.which("nvcc")
CLANG = shutil.which("clang++")
SHIM = os.path.join(os.path.dirname(__file__), "shim")
_DEVICE = wgsl_harness.wgpu_device()
TARGETS = ("cuda", "wgsl", "metal")

# ----------------------------------------------------------------------------- modules

_COUNTER = [0]


def load_module(text: str, tmp_dir) -> object:
    """Writes `text` as a module file and imports it (a fresh name each time)."""
    _COUNTER[0] += 1
    name = f"cube_injection_case_{_COUNTER[0]}"
    path = os.path.join(str(tmp_dir), name + ".py")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


HEADER = "import cubepy as cubepy_\n"
F32 = "cubepy_.f32"
ARRAY = "cubepy_.Array[cubepy_.f32]"

# ----------------------------------------------------------------------------- comments

# Characters some target ends a line at, other control and format characters.
LINE_BREAKERS = {"LS": "\u2028", "PS": "\u2029", "NEL": "\x85", "VT": "\v", "FF": "\f",
                 "CR": "\r", "LF": "\n", "NUL": "\0", "RLO": "\u202e", "BOM": "\ufeff"}
PAYLOAD = "out[0] = 99.0f;"  # valid CUDA, MSL and WGSL: visible if it became code


@pytest.mark.parametrize("key", sorted(LINE_BREAKERS))
def test_comment_text_escapes_every_line_breaking_character(key):
    ch = LINE_BREAKERS[key]
    out = comment_text(f"y = x  # a{ch}{PAYLOAD}")
    assert ch not in out and f"<U+{ord(ch):04X}>" in out
    assert len(out.splitlines()) == 1  # str.splitlines knows every Unicode line end
    assert out.isprintable()


@pytest.mark.parametrize("tail", ["\\", "\\   ", "\\\t", "\\\\", "\\ \\ ", "??/", "??/ \\"])
def test_comment_text_never_ends_in_a_line_splice(tail):
    out = comment_text("y = a + b  # continued " + tail)
    assert out.startswith("y = a + b  # continued")
    assert not out.endswith(("\\", "??/")) and out == out.rstrip()


def test_comment_text_breaks_block_comment_closers_and_keeps_readable_text():
    assert "*/" not in comment_text("a = b */ c /* d")
    assert comment_text("  y = π * r  # naïve\t ok  ") == "y = π * r  # naïve  ok"


COMMENT_KERNEL = '''
@cubepy_.cube(launch=True)
def {name}(x: {ARRAY}, out: {ARRAY}):
    i = cubepy_.ABSOLUTE_POS
    if i < len(out):
        out[i] = x[i] * {F32}(2.0)
        y = x[i] + {F32}(1.0)  # {comment}
        out[i] = out[i] + y
'''
# (id, comment text): a payload after a line breaker, and trailing line splices.
COMMENT_CASES = [(f"brk_{k.lower()}", f"note{ch}{PAYLOAD}")
                 for k, ch in LINE_BREAKERS.items() if k not in ("LF", "CR", "NUL")]
# (LF, CR and NUL cannot stand in a Python comment; the IR test below covers them.)
COMMENT_CASES += [("splice_backslash", "continued \\"), ("splice_spaces", "continued \\   "),
                  ("splice_trigraph", "continued ??/"), ("splice_two", "a \\ \\")]


def comment_module(tmp_dir):
    text = HEADER + "".join(COMMENT_KERNEL.format(name=f"comment_{cid}", comment=c,
                                                  ARRAY=ARRAY, F32=F32)
                            for cid, c in COMMENT_CASES)
    return load_module(text, tmp_dir)


def _code_lines(src: str) -> list[str]:
    return [line for line in src.splitlines() if not line.strip().startswith("//")]


@pytest.fixture(scope="module")
def comment_sources(tmp_path_factory):
    module = comment_module(tmp_path_factory.mktemp("comments"))
    out = {}
    for cid, _ in COMMENT_CASES:
        k = getattr(module, f"comment_{cid}")
        for target in TARGETS:
            out[(cid, target)] = k.source(target, cube_dim=(4, 1, 1))
    return module, out


@pytest.mark.parametrize("cid", [c[0] for c in COMMENT_CASES])
def test_comment_cannot_reach_code_in_the_text(comment_sources, cid):
    _, sources = comment_sources
    for target in TARGETS:
        src = sources[(cid, target)]
        assert not any(ch in src for ch in LINE_BREAKERS.values() if ch != "\n"), target
        assert all(PAYLOAD not in line for line in _code_lines(src)), target
        comment = next(line for line in src.splitlines() if "y = x[i]" in line)
        assert re.match(r"\s*// \d+: y = x", comment) and not comment.endswith(("\\", "?/"))
        # the statement after the comment is still code
        assert any(re.search(r"\by\w* ?(: f32)? ?= ", line) for line in _code_lines(src))


@pytest.mark.parametrize("cid", [c[0] for c in COMMENT_CASES])
def test_comment_kernels_run_unchanged(comment_sources, runtime_client, cid):
    module, _ = comment_sources
    x = np.arange(4, dtype=np.float32)
    xs, out = runtime_client.tensor(x), runtime_client.empty((4,), cubepy.f32)
    getattr(module, f"comment_{cid}").launch(runtime_client, CubeCount(1, 1, 1),
                                             CubeDim(4, 1, 1), xs, out)
    np.testing.assert_array_equal(out.numpy(), x * 2 + x + 1)


def test_ir_comment_and_kernel_name_with_line_breaks_stay_comments():
    """Comment statements (IR text, inlining notes) and kernel names reach the source
    too: a carriage return or U+2028 in them must not start a line of code."""
    k = ck.user_names()
    evil = "evil\r" + PAYLOAD + "\u2028" + PAYLOAD + "\0\\"
    body = k.body.stmts
    from cubepy.ir import nodes as n
    k = dataclasses.replace(k, name=evil, body=n.Block((n.Comment(text=evil),) + body))
    for target in TARGETS:
        abi = compute_abi(k, True, needs_cube_count=target == "wgsl")
        src = emit(k, target, abi, True)
        assert "\r" not in src and "\u2028" not in src, target
        assert all(PAYLOAD not in line for line in _code_lines(src)), target
        assert all(not line.endswith("\\") for line in src.splitlines()), target
    name = entry_name(evil, "cuda")
    assert re.fullmatch(r"evil_u000d_out_u005b_0_u005d_\w+_u0000_u005c_", name), name


# ----------------------------------------------------------------------------- names

# Names the generator introduces (besides every reserved word of every target).
GENERATED = """
info main cube_info_t cube_count cube_local cube_unit cube_group cube_groups cube_linear
cube_pos_x cube_pos_y cube_pos_z cube_count_total cube_plane_dim cube_plane_lane
cube_absolute_pos cube_unit_pos cube_cube_pos cube_stop1 cube_step1 cube_end1 cube_step2
cube_load_x cube_store_out cube_load_out cube_atomic_add_out cube_mod_f32 cube_mod_i32
cube_floordiv_i32 cube_pow_i32 cube_isnan_f32 cube_max_f32 cube_f32_to_i32
cube_runtime_f32 cube_thread_pos cube_group_pos cube_group_count cube_group_size
cube_simd_lane cube_simd_size cube_plane_inclusive_sum cube_atomic_max_f32
absolute_pos absolute_pos_x absolute_pos_y absolute_pos_z x_len x_buffer_len x_shape
x_stride x_rank out_len out_buffer_len a b p e q r v i x T Op g base result expected old
want current wanted seen bits before kernel_fn
""".split()
NON_ASCII = ["π", "café", "naïve", "Δx", "变量", "ｆｕｌｌ", "x_ß", "ǅ", "µs", "Ωmega"]
TEMPLATE_NAMES = {"cubepy_", "x_in_", "out_", "self"}


def _python_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not \
        keyword.issoftkeyword(name) and name not in TEMPLATE_NAMES


ALL_NAMES = sorted(n for n in set(reserved(None, True)) | set(GENERATED) | set(NON_ASCII)
                   | set(WGSL_HELPER_LOCALS) if _python_name(n))
# Python normalises identifiers (NFKC): keep one spelling per normalised name.
_SEEN: set[str] = set()
NAMES = []
for _n in ALL_NAMES:
    norm = unicodedata.normalize("NFKC", _n)
    if norm not in _SEEN:
        _SEEN.add(norm)
        NAMES.append(_n)


def chunked(names: list[str], size: int) -> list[list[str]]:
    return [names[i:i + size] for i in range(0, len(names), size)]


# Device functions named like Python built-ins would be called through the frontend's
# built-in handling; those names still take every other position.
DEVICE_NAMES = [n for n in NAMES if not hasattr(builtins, n)]
# Many names per kernel keep the compilers' start-up cost low; buffers stay within
# Metal's 31 buffer slots.
MATRIX_CHUNKS = {"local": chunked(NAMES, 150), "param": chunked(NAMES, 150),
                 "buffer": chunked(NAMES, 30), "device": chunked(DEVICE_NAMES, 150)}


def _sums(terms: list[str], width: int = 25) -> list[str]:
    """`terms` added in groups of `width` (keeps expressions shallow)."""
    return [" + ".join(terms[i:i + width]) for i in range(0, len(terms), width)]


def local_kernel(name: str, names: list[str], compact: bool) -> str:
    """Locals: n_j = x[j] * 2 + n_(j-1); out[j] = n_j (compact: only the last)."""
    lines = ["@cubepy_.cube(launch=True)",
             f"def {name}(x_in_: {ARRAY}, out_: {ARRAY}):"]
    prev = None
    for j, nm in enumerate(names):
        tail = f" + {prev}" if prev else ""
        lines.append(f"    {nm} = x_in_[{j}] * {F32}(2.0){tail}")
        if not compact:
            lines.append(f"    out_[{j}] = {nm}")
        prev = nm
    lines.append(f"    out_[{len(names)}] = {prev}")
    return "\n".join(lines) + "\n"


def param_kernel(name: str, names: list[str], compact: bool) -> str:
    """Scalar parameters: out[j] = p_j + x[j] (compact: sums of them); the first is
    reassigned and stored last."""
    params = ", ".join(f"{nm}: {F32}" for nm in names)
    lines = ["@cubepy_.cube(launch=True)",
             f"def {name}(x_in_: {ARRAY}, out_: {ARRAY}, {params}):"]
    if compact:
        lines += [f"    out_[{j}] = {s}" for j, s in enumerate(_sums(names))]
    else:
        lines += [f"    out_[{j}] = {nm} + x_in_[{j}]" for j, nm in enumerate(names)]
    lines.append(f"    {names[0]} = {names[0]} * {F32}(3.0)")
    lines.append(f"    out_[{len(names)}] = {names[0]}")
    return "\n".join(lines) + "\n"


def buffer_kernel(name: str, names: list[str], compact: bool) -> str:
    """Tensor parameters: out[j] = b_j[0] * 2 + len(b_j); b_j[1] = out[j] (compact:
    out[k] = sums of b_j[0], and only the first is written)."""
    params = ", ".join(f"{nm}: {ARRAY}" for nm in names)
    lines = ["@cubepy_.cube(launch=True)", f"def {name}(out_: {ARRAY}, {params}):"]
    if compact:
        lines += [f"    out_[{j}] = {s}" for j, s in
                  enumerate(_sums([f"{nm}[0]" for nm in names]))]
        lines.append(f"    {names[0]}[1] = out_[0]")
    else:
        for j, nm in enumerate(names):
            lines.append(f"    out_[{j}] = {nm}[0] * {F32}(2.0) + {F32}(len({nm}))")
            lines.append(f"    {nm}[1] = out_[{j}]")
    return "\n".join(lines) + "\n"


def device_kernel(name: str, names: list[str], compact: bool) -> str:
    """Device functions named n_j with a parameter n_j: out[j] = 2 * x[j] + 1
    (compact: sums of n_j(x[0]))."""
    lines = []
    for nm in names:
        lines += ["@cubepy_.cube", f"def {nm}({nm}: {F32}) -> {F32}:",
                  f"    return {nm} * {F32}(2.0) + {F32}(1.0)", ""]
    lines += ["@cubepy_.cube(launch=True)", f"def {name}(x_in_: {ARRAY}, out_: {ARRAY}):"]
    if compact:
        lines += [f"    out_[{j}] = {s}" for j, s in
                  enumerate(_sums([f"{nm}(x_in_[0])" for nm in names]))]
    else:
        lines += [f"    out_[{j}] = {nm}(x_in_[{j}])" for j, nm in enumerate(names)]
    return "\n".join(lines) + "\n"


POSITIONS = {"local": local_kernel, "param": param_kernel, "buffer": buffer_kernel,
             "device": device_kernel}




def kernel_name_sources(target: str) -> dict[str, str]:
    """A tiny unchecked kernel per name, named by it (the entry point of CUDA and MSL)."""
    from cubepy.ir import nodes as n
    from cubepy.ir.types import f32
    out_ = n.BufferRef("out_", f32, "global")
    body = [n.Store(buffer=out_, index=ck.C(0, n.U32), value=ck.C(1.0, f32))]
    params = [n.Param("out_", "array", f32)]
    sources = {}
    for nm in NAMES + ["evil\nname", "a b", "x\u2028y", "9lives", "_"]:
        k = ck.kernel(nm, params, body, cube_dim=(1, 1, 1))
        sources[nm] = emit(k, target, compute_abi(k, False, target == "wgsl"), False)
    return sources


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """(kernels by position, generated source by (kernel name, target))."""
    tmp = tmp_path_factory.mktemp("matrix")
    kernels = {pos: [build(pos, c, names, tmp, compact=True)
                     for c, names in enumerate(chunks)]
               for pos, chunks in MATRIX_CHUNKS.items()}
    sources = {(k.__name__, t): k.source(t, cube_dim=(1, 1, 1))
               for ks in kernels.values() for k in ks for t in TARGETS}
    return kernels, sources


def build(position: str, c: int, names: list[str], tmp_dir, compact: bool = False):
    """Kernel `c` for `position` over `names`, in its own module (device functions are
    module globals)."""
    kname = f"matrix_{position}_{c}"
    module = load_module(HEADER + "\n" + POSITIONS[position](kname, names, compact), tmp_dir)
    return getattr(module, kname)


def test_matrix_covers_every_reserved_and_generated_name():
    covered = {unicodedata.normalize("NFKC", n) for n in NAMES}
    for name in reserved(None, True) | set(GENERATED) | WGSL_HELPER_LOCALS:
        if _python_name(name):
            assert unicodedata.normalize("NFKC", name) in covered
    assert len(NAMES) > 1500 and set(NON_ASCII) <= set(NAMES) | {"ｆｕｌｌ"}


def test_mangled_names_are_ascii_legal_and_unreserved_everywhere():
    for name in NAMES + ["evil\nname", "a b", "9lives", "_", "__", "x__y", "cube_"]:
        for target in (None, *TARGETS):
            for global_scope in (False, True):
                m = mangle(name, target, global_scope)
                assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", m), (name, m)
                assert "__" not in m and not m.startswith("cube_") or m.endswith("_")
                assert m == name or m.endswith("_")
                assert m not in reserved(target, global_scope)


def test_matrix_sources_keep_names_unique_and_readable(matrix):
    kernels, sources = matrix
    src = sources[("matrix_local_0", "cuda")]
    decls = re.findall(r"^    float (\w+) = ", src, re.M)
    assert len(decls) == len(set(decls)) == len(MATRIX_CHUNKS["local"][0])
    for nm in MATRIX_CHUNKS["local"][0]:
        assert mangle(nm, "cuda") in decls  # the mangled name itself, unless numbered
    for (kname, target), text in sources.items():
        assert "__" not in re.sub(r"__(restrict__|launch_bounds__|global__|shared__|"
                                  r"syncthreads|int_as_float|float2\w+|half\w*|"
                                  r"[a-z]+_sync|activemask)\b", "", text) or \
            target != "wgsl", kname


def _nvcc(path: str) -> list[str]:
    return [NVCC, "-arch=sm_90", "-cubin", "-o", "/dev/null", path]


def _clang(path: str) -> list[str]:
    return [CLANG, "-std=c++17", "-fsyntax-only", "-Wall", "-I", SHIM, "-x", "c++", path]


def _cuda_rename(text: str, i: int) -> str:
    return re.sub(r"(__launch_bounds__\(\d+\) )(\w+)\(", rf"\g<1>\g<2>_{i}(", text)


def _compile(sources: dict, target: str, tmp_dir) -> dict:
    if target == "cuda":
        return ck.compile_all(sources, ".cu", _nvcc, str(tmp_dir),
                              header_lines=("#include",), rename=_cuda_rename)
    return ck.compile_all(sources, ".metal", _clang, str(tmp_dir),
                          header_lines=("#include <metal_stdlib>", "using namespace metal;"))


def _assert_clean(results: dict, tool: str) -> None:
    bad = {k: out[-2000:] for k, (rc, out) in results.items()
           if rc != 0 or "warning" in out.lower()}
    assert not bad, f"{tool} rejected {sorted(bad)}:\n" + "\n".join(bad.values())


def _global_bundle(sources: dict[str, str], header: tuple[str, ...]) -> str:
    """Every kernel at global scope in one translation unit: entry names must be
    distinct from each other and from every global the headers declare."""
    head, body = [], []
    for text in sources.values():
        for line in text.splitlines():
            if line.startswith(header):
                if line not in head:
                    head.append(line)
            else:
                body.append(line)
    return "\n".join(head + body) + "\n"


def _run_tool(command, text: str, path) -> tuple[int, str]:
    path.write_text(text, encoding="utf-8")
    r = subprocess.run(command(str(path)), capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.nvcc
def test_name_matrix_and_comments_compile_with_nvcc(matrix, comment_sources, tmp_path):
    if NVCC is None:
        pytest.skip("nvcc not installed")
    _, sources = matrix
    chosen = {k: v for (k, t), v in sources.items() if t == "cuda"}
    chosen.update({f"comment_{c}": v for (c, t), v in comment_sources[1].items()
                   if t == "cuda"})
    _assert_clean(_compile(chosen, "cuda", tmp_path), "nvcc")


@pytest.mark.nvcc
def test_kernel_names_compile_with_nvcc_at_global_scope(tmp_path):
    if NVCC is None:
        pytest.skip("nvcc not installed")
    text = _global_bundle(kernel_name_sources("cuda"), ("#include",))
    rc, out = _run_tool(_nvcc, text, tmp_path / "names.cu")
    assert rc == 0 and "warning" not in out.lower(), out[-4000:]


@pytest.mark.clang
def test_name_matrix_and_comments_compile_with_clang(matrix, comment_sources, tmp_path):
    if CLANG is None:
        pytest.skip("clang++ not installed")
    _, sources = matrix
    chosen = {k: v for (k, t), v in sources.items() if t == "metal"}
    chosen.update({f"comment_{c}": v for (c, t), v in comment_sources[1].items()
                   if t == "metal"})
    _assert_clean(_compile(chosen, "metal", tmp_path), "clang++")


@pytest.mark.clang
def test_kernel_names_compile_with_clang_at_global_scope(tmp_path):
    if CLANG is None:
        pytest.skip("clang++ not installed")
    text = _global_bundle(kernel_name_sources("metal"),
                          ("#include <metal_stdlib>", "using namespace metal;"))
    rc, out = _run_tool(_clang, text, tmp_path / "names.metal")
    assert rc == 0 and "warning" not in out.lower(), out[-4000:]


def _naga_errors(sources: dict) -> dict:
    errors = {}
    for key, text in sources.items():
        try:
            _DEVICE.create_shader_module(code=text)
        except Exception as exc:  # wgpu-py raises on a shader naga rejects
            errors[key] = str(exc)[-1500:]
    return errors


@pytest.mark.wgpu
@pytest.mark.skipif(_DEVICE is None, reason="no WebGPU adapter")
def test_naga_rejects_what_it_should():
    """The compile check below is only meaningful if naga reports bad shaders."""
    assert _naga_errors({"bad": "fn main() { let let = 1; }"})


@pytest.mark.wgpu
@pytest.mark.skipif(_DEVICE is None, reason="no WebGPU adapter")
def test_name_matrix_and_comments_compile_with_naga(matrix, comment_sources):
    _, sources = matrix
    chosen = {k: v for (k, t), v in sources.items() if t == "wgsl"}
    chosen.update({c: v for (c, t), v in comment_sources[1].items() if t == "wgsl"})
    chosen.update({f"kernel:{k}": v for k, v in kernel_name_sources("wgsl").items()
                   if k in ("main", "info", "evil\nname", "x\u2028y", "fn")})
    errors = _naga_errors(chosen)
    assert not errors, "\n".join(f"{k}: {v}" for k, v in errors.items())


# ----------------------------------------------------------------------------- running

# A representative subset that every runtime runs: keywords, library names, macros and
# built-ins of each target, generated names, helper locals and non-ASCII names.
SAMPLE = ["float", "int", "auto", "register", "printf", "sqrt", "sqrtf", "std", "M_PI",
          "INFINITY", "NAN", "INT_MAX", "EOF", "linux", "errno", "offsetof", "threadIdx",
          "atomicAdd", "warpSize", "metal", "kernel", "device", "simd_sum", "buffer",
          "select", "loop", "fn", "let", "var", "bitcast", "read", "workgroup", "vec4f",
          "info", "main", "cube_info_t", "cube_count", "cube_local", "cube_stop1",
          "absolute_pos", "x_len", "i", "v", "r", "old", "π", "café"]
DEVICE_SAMPLE = [n for n in SAMPLE if not hasattr(builtins, n)]


@pytest.fixture(scope="module")
def sample_kernels(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sample")
    out = {pos: build(pos, 0, DEVICE_SAMPLE if pos == "device" else SAMPLE, tmp)
           for pos in ("local", "param", "device")}
    # WebGPU allows 8 storage buffers per shader: 6 named ones, out_ and the info struct
    out["buffer"] = [build("buffer", c, names, tmp) for c, names in
                     enumerate(chunked(SAMPLE, 6))]
    return out


def _launch(kernel, client, *args) -> None:
    kernel.launch(client, CubeCount(1, 1, 1), CubeDim(1, 1, 1), *args)


def test_sample_locals_compute_the_same_everywhere(sample_kernels, runtime_client):
    x = np.arange(len(SAMPLE), dtype=np.float32) + 0.5
    out = runtime_client.empty((len(SAMPLE) + 1,), cubepy.f32)
    _launch(sample_kernels["local"], runtime_client, runtime_client.tensor(x), out)
    sums = np.cumsum(x * 2)
    np.testing.assert_array_equal(out.numpy(), np.append(sums, sums[-1]))


def test_sample_parameters_compute_the_same_everywhere(sample_kernels, runtime_client):
    x = np.arange(len(SAMPLE), dtype=np.float32)
    scalars = [0.25 * (j + 1) for j in range(len(SAMPLE))]
    out = runtime_client.empty((len(SAMPLE) + 1,), cubepy.f32)
    _launch(sample_kernels["param"], runtime_client, runtime_client.tensor(x), out, *scalars)
    expected = np.append(x + np.float32(scalars), np.float32(scalars[0] * 3))
    np.testing.assert_array_equal(out.numpy(), expected)


def test_sample_buffers_compute_the_same_everywhere(sample_kernels, runtime_client):
    for kernel, names in zip(sample_kernels["buffer"], chunked(SAMPLE, 6)):
        arrays = [np.array([j + 1.0, 0.0, 7.0], np.float32) for j in range(len(names))]
        tensors = [runtime_client.tensor(a) for a in arrays]
        out = runtime_client.empty((len(names),), cubepy.f32)
        _launch(kernel, runtime_client, out, *tensors)
        expected = np.array([a[0] * 2 + 3 for a in arrays], np.float32)
        np.testing.assert_array_equal(out.numpy(), expected)
        for t, e in zip(tensors, expected):
            assert t.numpy()[1] == e


def test_sample_device_functions_compute_the_same_everywhere(sample_kernels,
                                                             runtime_client):
    x = np.arange(len(DEVICE_SAMPLE), dtype=np.float32)
    out = runtime_client.empty((len(DEVICE_SAMPLE),), cubepy.f32)
    _launch(sample_kernels["device"], runtime_client, runtime_client.tensor(x), out)
    np.testing.assert_array_equal(out.numpy(), x * 2 + 1)


GENERATED_FIELDS_KERNEL = f'''
@cubepy_.cube(launch=True)
def fields_collide(x: cubepy_.Tensor[cubepy_.f32], x_len: cubepy_.u32,
                   x_buffer_len: cubepy_.u32, x_shape: cubepy_.u32, x_stride: cubepy_.u32,
                   x_rank: cubepy_.u32, cube_count: cubepy_.u32, out: {ARRAY},
                   x_buffer: {ARRAY}):
    out[0] = x[1] + {F32}(len(x) * 1000 + x_len)
    out[1] = {F32}(x.buffer_len() * 1000 + x_buffer_len)
    out[2] = {F32}(x.shape(0) * 1000 + x_shape)
    out[3] = {F32}(x.stride(1) * 1000 + x_stride)
    out[4] = {F32}(x.rank() * 1000 + x_rank)
    out[5] = {F32}(cubepy_.CUBE_COUNT * 1000 + cube_count)
    out[6] = {F32}(len(x_buffer) * 1000 + x.buffer_len()) + x_buffer[0]
'''


@pytest.fixture(scope="module")
def fields_kernel(tmp_path_factory):
    module = load_module(HEADER + GENERATED_FIELDS_KERNEL, tmp_path_factory.mktemp("f"))
    return module.fields_collide


def test_scalars_named_like_info_fields_get_distinct_fields(fields_kernel):
    for target in TARGETS:
        src = fields_kernel.source(target, cube_dim=(1, 1, 1))
        struct = src[src.index("struct cube_info_t {"):]
        struct = struct[:struct.index("}")]
        pattern = r"^\s+(\w+):" if target == "wgsl" else r"\s(\w+)(?:\[\d+\])?;"
        fields = re.findall(pattern, struct, re.M)
        assert len(fields) == len(set(fields)) >= 12, (target, fields)
        assert "x_len" in fields and "x_len_1" in fields, (target, fields)
        assert "x_buffer_len_1" in fields, (target, fields)  # tensor x_buffer's len


@pytest.mark.nvcc
@pytest.mark.clang
def test_scalars_named_like_info_fields_compile(fields_kernel, tmp_path):
    sources = {t: fields_kernel.source(t, cube_dim=(1, 1, 1)) for t in TARGETS}
    if NVCC is not None:
        _assert_clean(_compile({"f": sources["cuda"]}, "cuda", tmp_path), "nvcc")
    if CLANG is not None:
        _assert_clean(_compile({"f": sources["metal"]}, "metal", tmp_path), "clang++")
    if _DEVICE is not None:
        assert not _naga_errors({"f": sources["wgsl"]})


def test_scalars_named_like_info_fields_compute_the_same_everywhere(fields_kernel,
                                                                    runtime_client):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = runtime_client.empty((7,), cubepy.f32)
    fields_kernel.launch(runtime_client, CubeCount(2, 1, 1), CubeDim(1, 1, 1),
                         runtime_client.tensor(x), 1, 2, 3, 4, 5, 6, out,
                         runtime_client.tensor(np.array([0.5, 1, 2], np.float32)))
    np.testing.assert_array_equal(out.numpy(), [1 + 12001, 12002, 3003, 1004, 2005, 2006,
                                                 3012.5])


ATOMIC_HELPER_NAMES_KERNEL = f'''
@cubepy_.cube(launch=True)
def helper_locals(r: cubepy_.Array[cubepy_.u32], old: cubepy_.Array[cubepy_.u32],
                  want: cubepy_.Array[cubepy_.u32], expected: cubepy_.Array[cubepy_.u32],
                  i: cubepy_.Array[cubepy_.f32], v: cubepy_.Array[cubepy_.f32]):
    a = cubepy_.atomic_add(r, 0, cubepy_.u32(1))
    b = cubepy_.atomic_compare_exchange(old, 0, cubepy_.u32(0), cubepy_.u32(5))
    cubepy_.atomic_max(want, 0, cubepy_.u32(cubepy_.UNIT_POS))
    expected[1] = expected[0] + a * 0 + b * 0
    cubepy_.atomic_add(i, 0, {F32}(0.5))
    v[1] = v[0] * {F32}(2.0)
'''


def test_buffers_named_like_wgsl_helper_locals_compute_the_same_everywhere(
        tmp_path, runtime_client):
    """WGSL's accessor helpers have locals i, v, old, r, want, expected: buffers so
    named live at module scope and must not be hidden inside those helpers."""
    module = load_module(HEADER + ATOMIC_HELPER_NAMES_KERNEL, tmp_path)
    k = module.helper_locals
    src = k.source("wgsl", cube_dim=(4, 1, 1))
    for name in ("r", "old", "want", "expected", "i", "v"):
        assert not re.search(rf"var<storage, \w+> {name}:", src)
    arrays = [np.zeros(2, np.uint32)] * 4 + [np.zeros(2, np.float32),
                                             np.array([3.0, 0.0], np.float32)]
    tensors = [runtime_client.tensor(a) for a in arrays]
    k.launch(runtime_client, CubeCount(1, 1, 1), CubeDim(4, 1, 1), *tensors)
    got = [t.numpy() for t in tensors]
    assert got[0][0] == 4 and got[1][0] == 5 and got[2][0] == 3 and got[3][1] == 0
    assert got[4][0] == 2.0 and got[5][1] == 6.0


@pytest.mark.cuda
def test_kernel_named_like_a_c_library_function_launches_on_cuda(tmp_path):
    """The CUDA runtime finds the entry by its mangled name (extern "C")."""
    try:
        client = cubepy.client("cuda")
    except cubepy.LaunchError:
        pytest.skip("no CUDA device")
    text = HEADER + f'''
@cubepy_.cube(launch=True)
def printf(out: {ARRAY}):
    out[cubepy_.UNIT_POS] = {F32}(7.0)
'''
    k = load_module(text, tmp_path).printf
    assert "void __launch_bounds__(4) printf_(" in k.source("cuda", cube_dim=(4, 1, 1))
    out = client.empty((4,), cubepy.f32)
    k.launch(client, CubeCount(1, 1, 1), CubeDim(4, 1, 1), out)
    np.testing.assert_array_equal(out.numpy(), [7.0] * 4)


# ----------------------------------------------------------------------------- macros

_CUDA_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cooperative_groups.h",
                 "cooperative_groups/reduce.h", "cooperative_groups/scan.h")


def _defined_macros(command: list[str]) -> set[str]:
    r = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    names = set()
    for line in r.stdout.splitlines():
        m = re.match(r"#define ([A-Za-z]\w*)", line)
        if m and "__" not in m.group(1):
            names.add(m.group(1))
    return names


def _unreserved(macros: set[str], target: str) -> list[str]:
    return sorted(m for m in macros if mangle(m, target) == m)


@pytest.mark.nvcc
def test_every_macro_of_a_cuda_translation_unit_is_reserved(tmp_path):
    """A user name equal to a macro would be rewritten by the preprocessor: every macro
    the headers of generated CUDA define must be mangled."""
    if NVCC is None:
        pytest.skip("nvcc not installed")
    path = tmp_path / "headers.cu"
    path.write_text("".join(f"#include <{h}>\n" for h in _CUDA_HEADERS))
    macros = _defined_macros([NVCC, "-arch=sm_90", "-E", "-Xcompiler", "-dM", str(path)])
    assert "INT_MAX" in macros and "M_PI" in macros  # the dump works
    assert _unreserved(macros, "cuda") == []


@pytest.mark.clang
def test_every_macro_of_the_metal_shim_is_reserved(tmp_path):
    if CLANG is None:
        pytest.skip("clang++ not installed")
    path = tmp_path / "headers.metal"
    path.write_text("#include <metal_stdlib>\n")
    macros = _defined_macros([CLANG, "-std=c++17", "-dM", "-E", "-I", SHIM, "-x", "c++",
                              str(path)])
    assert "INFINITY" in macros
    assert _unreserved(macros, "metal") == []


def test_ir_text_round_trips_non_ascii_names_and_any_kernel_name():
    """Non-ASCII identifiers (Python allows them) and kernel names that are not
    identifiers survive print -> parse, so the IR text form carries them to codegen."""
    from cubepy.ir import nodes as n
    from cubepy.ir.parser import parse_kernel
    from cubepy.ir.printer import print_kernel
    from cubepy.ir.types import f32
    v = n.Var("café_π", f32)
    out_ = n.BufferRef("résultat", f32, "global")
    body = [n.Assign(var=v, value=ck.C(2.0, f32), declare=True),
            n.Store(buffer=out_, index=ck.C(0, n.U32), value=ck.ld(v))]
    for name in ("naïve", "evil\nname", "kernel", "a b"):
        k = ck.kernel(name, [n.Param("résultat", "array", f32)], body)
        assert parse_kernel(print_kernel(k)) == k
