"""Metal code generator: every corpus and hand-built kernel type-checks as C++ against the
test shim (tests/shim/metal_stdlib) with clang++, plus short golden checks."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import clike_kernels as ck
import corpus
from cubepy import CompileError
from cubepy.abi import compute_abi
from cubepy.codegen.metal import emit_metal
from cubepy.ir import nodes as n
from cubepy.ir.types import f16, f32, f64, u32

CLANG = shutil.which("clang++")
SHIM = os.path.join(os.path.dirname(__file__), "shim")
METAL_IDS = [c[0] for c in corpus.SOURCE_CASES if "metal" in c[4]]
HAND = ck.metal_cases()
UNCHECKED = ("seed_f16", "atomics_f32", "int_i32", "flow")


def emit(kernel: n.Kernel, checked: bool = True) -> str:
    return emit_metal(kernel, compute_abi(kernel, checked), checked)


def seed_source(**spec) -> str:
    spec = spec or {"Float": f32}
    return corpus.fused_matmul_add_relu_kernel.source("metal", cube_dim=(16, 16, 1), **spec)


@pytest.fixture(scope="module")
def clang_results(tmp_path_factory):
    """Type-checks every source once: id -> (return code, output)."""
    if CLANG is None:
        pytest.skip("clang++ not installed")
    sources = {f"corpus:{k}": v for k, v in ck.corpus_sources("metal").items()}
    sources.update({f"hand:{k}": emit(v) for k, v in HAND.items()})
    sources.update({f"unchecked:{k}": emit(HAND[k], checked=False) for k in UNCHECKED})
    for key, text in sources.items():  # the skeleton the shim expects
        assert text.split("\n")[1:3] == ["#include <metal_stdlib>", "using namespace metal;"]
    workdir = str(tmp_path_factory.mktemp("msl"))
    return ck.compile_all(
        sources, ".metal",
        lambda p: [CLANG, "-std=c++17", "-fsyntax-only", "-Wall", "-I", SHIM, "-x", "c++", p],
        workdir, header_lines=("#include <metal_stdlib>", "using namespace metal;"))


def _check(results, key):
    rc, output = results[key]
    assert rc == 0, f"clang++ rejected {key}:\n{output}"
    assert "warning" not in output.lower(), f"clang++ warned on {key}:\n{output}"


@pytest.mark.clang
@pytest.mark.parametrize("case_id", METAL_IDS)
def test_corpus_kernel_compiles_against_the_shim(clang_results, case_id):
    _check(clang_results, f"corpus:{case_id}")


@pytest.mark.clang
@pytest.mark.parametrize("case_id", sorted(HAND))
def test_hand_built_kernel_compiles_against_the_shim(clang_results, case_id):
    _check(clang_results, f"hand:{case_id}")


@pytest.mark.clang
@pytest.mark.parametrize("case_id", UNCHECKED)
def test_unchecked_variant_compiles_against_the_shim(clang_results, case_id):
    _check(clang_results, f"unchecked:{case_id}")


@pytest.mark.clang
def test_the_shim_catches_type_errors(tmp_path):
    """The shim is only useful if it rejects wrong MSL: mixing half and float, or an
    undeclared name."""
    if CLANG is None:
        pytest.skip("clang++ not installed")
    import subprocess
    bad = tmp_path / "bad.metal"
    bad.write_text("#include <metal_stdlib>\nusing namespace metal;\n"
                   "kernel void k(device half* x [[buffer(0)]]) {\n"
                   "    x[0] = metal::fmax(x[0] + x[1], 1.0f) + undeclared;\n}\n")
    r = subprocess.run([CLANG, "-std=c++17", "-fsyntax-only", "-I", SHIM, "-x", "c++",
                        str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "undeclared" in r.stderr


# ----------------------------------------------------------------------------- golden

def test_seed_signature_buffers_info_and_positions():
    src = seed_source()
    assert "kernel void fused_matmul_add_relu_kernel(" in src
    for line in ("const device float* lhs [[buffer(0)]]",
                 "const device float* bias [[buffer(2)]]",
                 "device float* output [[buffer(3)]]",
                 "constant cube_info_t& info [[buffer(4)]]",
                 "uint3 cube_thread_pos [[thread_position_in_threadgroup]]",
                 "uint3 cube_group_pos [[threadgroup_position_in_grid]]",
                 "uint3 cube_group_count [[threadgroups_per_grid]]"):
        assert line in src
    assert "uint row = cube_group_pos.x * 16u + cube_thread_pos.x;" in src
    assert "    uint output_shape[8];" in src


def test_seed_half_checked_read_and_line_comment():
    src = seed_source(Float=f16)
    line = next(i for i, text in enumerate(open(corpus.__file__), 1)
                if "sum += lhs[" in text)
    assert f"// {line}: sum += lhs[" in src
    assert "half sum = half(0.0);" in src
    assert ("(offset_lhs + row * dim_k + k < info.lhs_buffer_len ? "
            "lhs[offset_lhs + row * dim_k + k] : half(0.0))") in src
    assert "metal::fmax(sum + (index < info.bias_buffer_len ? bias[index] : half(0.0)), " \
           "half(0.0))" in src


def test_shared_memory_barrier_and_atomics():
    src = corpus.shared_reduce.source("metal", cube_dim=(64, 1, 1))
    assert "threadgroup float buf[64];" in src
    assert src.count("threadgroup_barrier(mem_flags::mem_threadgroup);") == 2
    src = corpus.histogram16.source("metal", cube_dim=(64, 1, 1))
    assert "device atomic_uint* bins [[buffer(1)]]" in src
    assert re.search(r"atomic_fetch_add_explicit\(&bins\[.*\], 1u, memory_order_relaxed\)",
                     src)


def test_atomic_buffers_use_atomic_loads_and_stores():
    src = emit(HAND["atomics_u32"])
    assert "threadgroup atomic_uint local_counts[64];" in src
    assert "atomic_store_explicit(&counts[1u], " in src
    assert "atomic_load_explicit(&counts[2u], memory_order_relaxed)" in src
    assert "cube_atomic_cas_u32(&counts[" in src
    src = emit(HAND["atomics_f32"])
    assert "device atomic_float* counts" in src and "as_type<uint>(" in src


def test_float_semantics_helpers():
    src = emit(HAND["math_f32"])
    assert "metal::rint(v)" in src  # round half to even
    assert "cube_erf_f32(v)" in src and "cube_hypot_f32(v, v)" in src
    assert "cube_mod_f32(acc, v)" in src
    assert "INFINITY" in src and "NAN" in src
    src = emit(HAND["casts_f32"])
    assert "if (metal::isnan(x)) return 0;" in src and "cube_cast_i32(v)" in src
    half = emit(HAND["math_f16"])
    assert "metal::exp(v)" in half and "half(cube_erf_f32(float(v)))" in half


def test_signed_division_helpers_and_unchecked_variant():
    src = corpus.int_semantics.source("metal", cube_dim=(64, 1, 1))
    assert "inline int cube_floordiv_i32(int a, int b) {" in src
    src = corpus.int_semantics.source("metal", cube_dim=(64, 1, 1), checked=False)
    assert "buffer_len" not in src


def test_plane_builtins_become_simd_attributes():
    src = emit(HAND["flow"])
    assert "uint cube_simd_lane [[thread_index_in_simdgroup]]" in src
    assert "uint cube_simd_size [[threads_per_simdgroup]]" in src
    seed = seed_source()
    assert "simd" not in seed  # only when used


def test_f64_is_a_compile_error_not_an_internal_one():
    x = n.BufferRef("x", f64, "global")
    k = ck.kernel("k", [n.Param("x", "array", f64)],
                  [n.Store(buffer=x, index=ck.C(0, u32), value=ck.C(1.0, f64))])
    with pytest.raises(CompileError, match="f64"):
        emit(k)


def test_user_names_are_mangled_and_distinct():
    src = emit(HAND["names"])
    for decl in ("float float_ = 0.0f;", "float device_ = ", "float half_ = ",
                 "float ulong_ = ", "float info_ = ", "float x_ = "):
        assert decl in src
    decls = re.findall(r"^\s+float (\w+) = ", src, re.M)
    assert len(decls) == len(set(decls)) == 12
    assert "device float* kernel_ [[buffer(0)]]" in src


@pytest.mark.clang
def test_semantics_helpers_match_python(tmp_path):
    """Runs the generated prelude helpers natively (they are plain C++ against the shim)
    on edge cases and compares with Python's // and %, and saturating casts."""
    if CLANG is None:
        pytest.skip("clang++ not installed")
    import subprocess
    from cubepy.codegen.clike import CEmitter
    from cubepy.codegen.metal import MetalDialect, _f2i_helper
    from cubepy.ir.types import i32 as I32, i64 as I64
    k = ck.kernel("k", [], [])
    em = CEmitter(k, compute_abi(k, False), False, MetalDialect())
    calls = []
    ints = [0, 1, -1, 2, -2, 7, -7, 13, -13, 2**31 - 1, -2**31]
    for kind in ("floordiv", "mod"):
        general = em.helper_divmod(kind, I32, nonzero=False)
        nz = em.helper_divmod(kind, I32, nonzero=True)
        unsigned = em.helper_divmod(kind, u32, nonzero=False)
        for a in ints:
            for b in ints:
                calls.append((f"(long long){general}({a if a != -2**31 else '(-2147483647 - 1)'}, "
                              f"{b if b != -2**31 else '(-2147483647 - 1)'})",
                              _py_divmod(kind, a, b, 32)))
                if b not in (0, -1):
                    calls.append((calls[-1][0].replace(general, nz), calls[-1][1]))
                ua, ub = a % 2**32, b % 2**32
                want = (ua // ub if kind == "floordiv" else ua % ub) if ub else \
                    (0 if kind == "floordiv" else ua)
                calls.append((f"(long long){unsigned}({ua}u, {ub}u)", want))
    floats = [0.0, 1.5, -1.5, 2.9, -2.9, 3e9, -3e9, 5e9, -5e9, 1e19, -1e19]
    for ty, lo, hi in ((I32, -2**31, 2**31 - 1), (u32, 0, 2**32 - 1), (I64, -2**63, 2**63 - 1)):
        h = _f2i_helper(em, ty)
        for x in floats + ["NAN", "INFINITY", "-INFINITY"]:
            want = 0 if x == "NAN" else hi if x == "INFINITY" else lo if x == "-INFINITY" \
                else min(max(int(x), lo), hi)
            arg = x if isinstance(x, str) else f"{x!r}f"
            calls.append((f"(long long){h}({arg})", want))
    body = "\n".join(f'    std::printf("%lld\\n", {c});' for c, _ in calls)
    src = ("#include <metal_stdlib>\nusing namespace metal;\n#include <cstdio>\n"
           + "\n\n".join(em.prelude.helpers) + f"\nint main() {{\n{body}\n}}\n")
    path = tmp_path / "helpers.cpp"
    path.write_text(src)
    exe = tmp_path / "helpers"
    r = subprocess.run([CLANG, "-std=c++17", "-O1", "-I", SHIM, "-x", "c++", str(path), "-o",
                        str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    got = [int(v) for v in out.split()]
    wrong = [(c, w, g) for (c, w), g in zip(calls, got) if w != g]
    assert len(got) == len(calls) and not wrong, wrong[:5]


def _py_divmod(kind: str, a: int, b: int, bits: int) -> int:
    """docs/LANGUAGE.md: Python floor semantics, x // 0 == 0, x % 0 == x, wrapping."""
    if b == 0:
        return 0 if kind == "floordiv" else a
    v = a // b if kind == "floordiv" else a % b
    v %= 2 ** bits
    return v - 2 ** bits if v >= 2 ** (bits - 1) else v
