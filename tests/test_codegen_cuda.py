"""CUDA code generator: every corpus and hand-built kernel compiles with nvcc, plus short
golden checks of the generated source (key lines, not whole files)."""
from __future__ import annotations

import re
import shutil

import pytest

import clike_kernels as ck
import corpus
import cubepy
from cubepy import CompileError
from cubepy.abi import compute_abi
from cubepy.codegen.clike import CEmitter
from cubepy.codegen.cuda import CudaDialect, emit_cuda
from cubepy.ir import nodes as n
from cubepy.ir.types import f16, f32, i32, u32

NVCC = shutil.which("nvcc") or (shutil.which("/usr/local/bin/nvcc"))
CUDA_IDS = [c[0] for c in corpus.SOURCE_CASES if "cuda" in c[4]]
HAND = ck.cuda_cases()
UNCHECKED = ("seed_f32", "atomics_f32", "int_i32", "flow")


def emit(kernel: n.Kernel, checked: bool = True) -> str:
    return emit_cuda(kernel, compute_abi(kernel, checked), checked)


def seed_source(**spec) -> str:
    spec = spec or {"Float": f32}
    return corpus.fused_matmul_add_relu_kernel.source("cuda", cube_dim=(16, 16, 1), **spec)


# ----------------------------------------------------------------------------- nvcc

@pytest.fixture(scope="module")
def nvcc_results(tmp_path_factory):
    """Compiles every source once, in parallel: id -> (return code, output)."""
    if NVCC is None:
        pytest.skip("nvcc not installed")
    sources = {f"corpus:{k}": v for k, v in ck.corpus_sources("cuda").items()}
    sources.update({f"hand:{k}": emit(v) for k, v in HAND.items()})
    sources.update({f"unchecked:{k}": emit(HAND[k], checked=False) for k in UNCHECKED})
    workdir = str(tmp_path_factory.mktemp("nvcc"))
    return ck.compile_all(sources, ".cu",
                          lambda p: [NVCC, "-arch=sm_90", "-cubin", "-o", "/dev/null", p],
                          workdir, header_lines=("#include",), rename=_rename)


def _rename(text: str, i: int) -> str:
    """extern "C" names are global: make each bundled kernel's name unique."""
    return re.sub(r"(__launch_bounds__\(\d+\) )(\w+)\(", rf"\g<1>\g<2>_{i}(", text)


def _check(results, key):
    rc, output = results[key]
    assert rc == 0, f"nvcc failed on {key}:\n{output}"
    assert "warning" not in output.lower(), f"nvcc warned on {key}:\n{output}"


@pytest.mark.nvcc
@pytest.mark.parametrize("case_id", CUDA_IDS)
def test_corpus_kernel_compiles_with_nvcc(nvcc_results, case_id):
    _check(nvcc_results, f"corpus:{case_id}")


@pytest.mark.nvcc
@pytest.mark.parametrize("case_id", sorted(HAND))
def test_hand_built_kernel_compiles_with_nvcc(nvcc_results, case_id):
    _check(nvcc_results, f"hand:{case_id}")


@pytest.mark.nvcc
@pytest.mark.parametrize("case_id", UNCHECKED)
def test_unchecked_variant_compiles_with_nvcc(nvcc_results, case_id):
    _check(nvcc_results, f"unchecked:{case_id}")


# ----------------------------------------------------------------------------- golden

def test_seed_signature_has_restrict_launch_bounds_and_info_by_value():
    src = seed_source()
    assert 'extern "C" __global__ void __launch_bounds__(256) fused_matmul_add_relu_kernel(' \
        in src
    params = re.search(r"fused_matmul_add_relu_kernel\((.*?)\) \{", src, re.S).group(1)
    params = [p.strip() for p in params.split(",")]
    assert params == ["const float* __restrict__ lhs", "const float* __restrict__ rhs",
                      "const float* __restrict__ bias", "float* __restrict__ output",
                      "const cube_info_t info"]


def test_seed_info_struct_matches_the_abi_order():
    src = seed_source()
    struct = re.search(r"struct cube_info_t \{(.*?)\};", src, re.S).group(1)
    fields = re.findall(r"(\w[\w ]*?) (\w+)(\[\d+\])?;", struct)
    k = corpus.fused_matmul_add_relu_kernel
    compiled = k._compile(k._specialization((16, 16, 1), {"Float": f32}), "cuda", True)
    assert [f[1] for f in fields] == [f.name for f in compiled.abi.fields]
    assert ("unsigned int", "output_shape", "[8]") in fields


def test_seed_checked_read_line_comment_and_relu():
    src = seed_source()
    line = next(i for i, text in enumerate(open(corpus.__file__), 1)
                if "sum += lhs[" in text)
    assert f"// {line}: sum += lhs[offset_lhs + row * dim_k + k] * rhs[" in src
    assert ("(offset_lhs + row * dim_k + k < info.lhs_buffer_len ? "
            "lhs[offset_lhs + row * dim_k + k] : 0.0f)") in src
    assert "fmaxf(sum + (index < info.bias_buffer_len ? bias[index] : 0.0f), 0.0f)" in src
    assert "for (unsigned int k = 0u; k < dim_k; ++k) {" in src
    assert "unsigned int row = blockIdx.x * 16u + threadIdx.x;" in src


def test_seed_helpers_only_those_used():
    src = seed_source()
    # checked: a runtime dimension past MAX_RANK reads 0 instead of past the info struct
    assert ("cube_floordiv_u32(offset_output, (dim < 8u ? info.output_stride[dim] : 0u))"
            in src)
    assert "__device__ __forceinline__ unsigned int cube_mod_u32(" in src
    assert "cube_floordiv_i32" not in src and "cube_mod_f32" not in src
    assert "#include" not in src  # no f16 headers for f32


def test_unchecked_shape_reads_are_plain():
    from corpus import fused_matmul_add_relu_kernel
    src = fused_matmul_add_relu_kernel.source("cuda", cube_dim=(16, 16, 1), checked=False,
                                              Float=cubepy.f32)
    assert "cube_floordiv_u32(offset_output, info.output_stride[dim])" in src
    assert "info.lhs_buffer_len" not in src and "lhs[offset_lhs + row * dim_k + k]" in src


def test_seed_f16_uses_half_header_and_hmax():
    src = seed_source(Float=f16)
    assert "#include <cuda_fp16.h>" in src
    assert "const __half* __restrict__ lhs" in src
    assert "__hmax(" in src and "__half(0.0f)" in src


def test_unchecked_launch_has_no_bounds_checks():
    k = corpus.fused_matmul_add_relu_kernel
    src = k.source("cuda", cube_dim=(16, 16, 1), checked=False, Float=f32)
    assert "buffer_len" not in src
    assert "lhs[offset_lhs + row * dim_k + k] * rhs[offset_rhs + k * n_cols + col]" in src


def test_shared_memory_and_barrier():
    src = corpus.shared_reduce.source("cuda", cube_dim=(64, 1, 1))
    assert "__shared__ float buf[64];" in src
    assert src.count("__syncthreads();") == 2
    assert "(u + s < 64u ? buf[u + s] : 0.0f)" in src  # shared reads checked by size


def test_atomics_and_constant_divisor_without_zero_check():
    src = corpus.histogram16.source("cuda", cube_dim=(64, 1, 1))
    assert re.search(r"atomicAdd\(&bins\[.*% 16u\], 1u\);", src)
    assert "cube_mod_u32" not in src  # % by a nonzero constant needs no helper
    src = corpus.atomic_max_units.source("cuda", cube_dim=(128, 1, 1))
    assert "atomicMax(&out[0u], (int)cube_unit_pos)" in src or "atomicMax(&out[0" in src


def test_signed_division_uses_python_floor_helpers():
    src = corpus.int_semantics.source("cuda", cube_dim=(64, 1, 1))
    assert "cube_floordiv_i32(" in src and "cube_mod_i32(" in src
    assert "if (b == 0) return 0;" in src and "if (b == 0) return a;" in src
    # signed indices are checked with one unsigned compare (negative -> huge)
    src = emit(HAND["int_i32"])
    assert "if ((unsigned int)x < info.out_buffer_len) {" in src


def test_float_semantics_names():
    src = emit(HAND["math_f32"])
    assert "rintf(v)" in src and "roundf" not in src  # round half to even
    assert "cube_mod_f32(acc, v)" in src and "cube_floordiv_f32(acc, v)" in src
    assert "__float2int_rz" in emit(HAND["casts_f32"])  # saturating, NaN -> 0
    assert "__int_as_float(0x7f800000)" in src  # inf literal


def test_atomic_result_is_zero_when_out_of_range():
    src = emit(HAND["atomics_f32"])
    assert ("old_add = cube_absolute_pos % 16u < info.counts_buffer_len ? "
            "atomicAdd(&counts[cube_absolute_pos % 16u], 1.0f) : 0.0f;") in src
    assert "cube_atomic_max_f32(&counts[" in src and "atomicCAS((int*)p" in src


def test_user_names_are_mangled_and_distinct():
    src = emit(HAND["names"])
    assert "float float_ = 0.0f;" in src
    assert "float expf_ = " in src and "float threadIdx_ = " in src
    assert "float x_ = " in src and "float info_ = " in src
    assert "void __launch_bounds__(64) kernel(" in src or "kernel_(" in src
    decls = re.findall(r"^\s+float (\w+) = ", src, re.M)
    assert len(decls) == len(set(decls)) == 12


def test_loops_hoist_changing_bounds_and_step_direction():
    src = emit(HAND["flow"])
    assert "for (int k = 10; k > 0; k -= 3) {" in src
    assert "const int cube_stop1 = total;" in src
    assert "(step > 0 ? m < cube_stop1 : step < 0 && m > cube_stop1); m += step)" in src
    assert "} else if (scale < 0.0f) {" in src
    assert "(total > 0 || (flag && !flag)) ? acc : (unsigned int)total" in src
    assert "bool flag = info.flag != 0u;" in src


# ----------------------------------------------------------------------------- expressions

def _expr_text(expr: n.Expr) -> str:
    k = ck.kernel("k", [], [])
    em = CEmitter(k, compute_abi(k, False), False, CudaDialect())
    return em.expr(expr)


A, B_, C_ = (n.Load(ty=u32, var=n.Var(v, u32)) for v in "abc")
X, Y, Z = (n.Load(ty=f32, var=n.Var(v, f32)) for v in "xyz")
I, J, K = (n.Load(ty=i32, var=n.Var(v, i32)) for v in "ijk")


@pytest.mark.parametrize("tree, text", [
    (ck.B("mul", ck.B("add", A, B_), C_), "(a + b) * c"),
    (ck.B("add", A, ck.B("mul", B_, C_)), "a + b * c"),
    (ck.B("sub", ck.B("sub", A, B_), C_), "a - b - c"),
    (ck.B("sub", A, ck.B("sub", B_, C_)), "a - (b - c)"),
    (n.Unary(ty=f32, op="neg", operand=n.Unary(ty=f32, op="neg", operand=X)), "-(-x)"),
    (ck.B("sub", X, ck.C(-5.0, f32)), "x - -5.0f"),
    (ck.B("bitand", ck.B("add", A, B_), C_), "(a + b) & c"),
    (ck.B("shl", A, B_), "a << (b & 31u)"),
    (ck.B("shr", I, ck.C(40, i32)), "i >> 8"),
    (ck.C(-2 ** 31, i32), "(-2147483647 - 1)"),
    (ck.C(7, u32), "7u"),
    (n.Cast(ty=i32, operand=ck.B("add", A, B_)), "(int)(a + b)"),
    (n.Cast(ty=i32, operand=ck.C(1.5, f32)), "__float2int_rz(1.5f)"),
    (ck.B("floordiv", n.Load(ty=u32, var=n.Var("u", u32)), ck.C(4, u32)), "u / 4u"),
])
def test_expression_parentheses(tree, text):
    assert _expr_text(tree) == text


@pytest.mark.parametrize("tree, text", [
    (ck.B("add", I, J), "(int)((unsigned int)i + (unsigned int)j)"),
    (ck.B("add", I, ck.B("mul", J, K)),
     "(int)((unsigned int)i + (unsigned int)j * (unsigned int)k)"),
    (ck.B("sub", I, ck.B("sub", J, K)),
     "(int)((unsigned int)i - ((unsigned int)j - (unsigned int)k))"),
    (ck.B("mul", ck.B("add", I, ck.C(1, i32)), K),
     "(int)(((unsigned int)i + 1u) * (unsigned int)k)"),
    (ck.B("add", I, ck.C(-1, i32)), "(int)((unsigned int)i - 1u)"),
    (ck.B("sub", I, ck.C(-2 ** 31, i32)), "(int)((unsigned int)i + 2147483648u)"),
    (n.Unary(ty=i32, op="neg", operand=I), "(int)(0u - (unsigned int)i)"),
    (ck.B("shl", I, J), "(int)((unsigned int)i << (j & 31))"),
])
def test_signed_arithmetic_wraps_through_unsigned(tree, text):
    """C leaves signed overflow undefined; the language wraps, so signed +, -, *, unary -
    and << are computed in the unsigned type of the same width."""
    assert _expr_text(tree) == text


def test_unsupported_atomic_is_a_compile_error():
    buf = n.BufferRef("h", f16, "global")
    k = ck.kernel("bad", [n.Param("h", "array", f16)],
                  [n.AtomicOp(op="min", buffer=buf, index=ck.C(0, u32),
                              value=ck.C(1.0, f16), loc=ck.L(3))])
    with pytest.raises(CompileError, match="atomic_min on f16"):
        emit(k)
