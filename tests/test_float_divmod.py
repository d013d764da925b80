"""Float `//` and `%`: exact, with Python's (numpy's) semantics, on every target.

docs/LANGUAGE.md: `a % b` is fmod(a, b) moved to the sign of b, `a // b` CPython's
float_divmod quotient; the special values are numpy's. Each runtime is compared bit for
bit (NaN matching NaN) with np.remainder / np.floor_divide on a table of hard cases (huge
quotients, tiny and subnormal divisors, signed zeros, inf, nan), the constant folder with
the same, the CUDA helpers run on the host, and the generated helpers are checked for
steps a compiler could contract or approximate. The cuda-marked tests replay what the
differential fuzz found on an H200.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, Float, cube, f16, f32, f64, i32
from cubepy.ir.passes import consteval
from conftest import RUNTIME_PARAMS

import fuzz_kernels as fk

HERE = Path(__file__).parent
HARD = [1294452849.0, 5.0, -5.0, 0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45,
        3e38, -3e38, 1e-38, -1.17549435e-38, 0.5, 1.0, -1.0, 2.0**30, 3.0, 7.1, -0.1,
        399970272.0, 16777217.0, 0.3, 2.5, -2.5, 6e-39]
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
UINT = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}


def hard_pairs(name: str, random: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of HARD values, then random ones over the type's exponent range."""
    t = NP[name]
    a = [x for x in HARD for _ in HARD]
    b = [y for _ in HARD for y in HARD]
    rng = np.random.default_rng(7)
    top = {"f16": 5, "f32": 38, "f64": 300}[name]
    with np.errstate(over="ignore"):
        ra = rng.standard_normal(random) * 10.0 ** rng.integers(-top - 7, top, random)
        rb = rng.standard_normal(random) * 10.0 ** rng.integers(-top - 7, top, random)
        return (np.concatenate([np.array(a), ra]).astype(t),
                np.concatenate([np.array(b), rb]).astype(t))


def expected(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b), np.remainder(a, b)


def assert_same_bits(got: np.ndarray, want: np.ndarray, a, b, what: str) -> None:
    u = UINT[want.dtype.name.replace("float", "f")]
    same = (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))
    bad = np.nonzero(~same)[0]
    assert not bad.size, f"{what}: {bad.size} differ, e.g. " + "; ".join(
        f"{a[i]!r} op {b[i]!r} = {got[i]!r}, numpy {want[i]!r}" for i in bad[:5])


@cube(launch=True)
def divmod_kernel(a: Array[Float], b: Array[Float], q: Array[Float], r: Array[Float]):
    i = ABSOLUTE_POS
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


def _supports(client, name: str) -> bool:
    if name == "f64":
        return client.runtime != "wgpu"
    if name == "f16" and client.runtime == "wgpu":
        return "shader-f16" in getattr(client, "features", ())
    return True


@pytest.mark.parametrize("name", ["f32", "f64", "f16"])
def test_runtime_matches_numpy_on_hard_cases(runtime_client, name):
    if not _supports(runtime_client, name):
        pytest.skip(f"{runtime_client.runtime} has no {name}")
    a, b = hard_pairs(name)
    c = runtime_client
    q, r = c.zeros(a.shape, getattr(cubepy, name)), c.zeros(a.shape, getattr(cubepy, name))
    divmod_kernel.launch(c, CubeCount(a.size // 64 + 1), CubeDim(64), c.tensor(a),
                         c.tensor(b), q, r)
    want_q, want_r = expected(a, b)
    got_q, got_r = q.numpy(), r.numpy()
    if c.runtime == "wgpu":
        # WGSL lets a device flush subnormal operands, intermediates and results to zero
        # in any operation (NVIDIA's Vulkan driver does; docs/LANGUAGE.md): pairs that
        # meet a subnormal are not compared there; every other pair matches bit for bit.
        with np.errstate(all="ignore"):
            meets = (_subnormal(a) | _subnormal(b) | _subnormal(np.fmod(a, b))
                     | _subnormal(want_r) | _subnormal(want_q))
        got_r = np.where(meets, want_r, got_r)
        got_q = np.where(meets, want_q, got_q)
    assert_same_bits(got_r, want_r, a, b, f"{c.runtime} {name} %")
    assert_same_bits(got_q, want_q, a, b, f"{c.runtime} {name} //")


def _subnormal(x: np.ndarray) -> np.ndarray:
    return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)


def test_special_values_follow_numpy_where_python_raises():
    """Python raises ZeroDivisionError; a kernel cannot, so numpy's values hold."""
    a = np.array([5.0, -5.0, 0.0, math.inf, 5.0, -5.0, -5.0, math.nan], np.float32)
    b = np.array([0.0, 0.0, 0.0, 5.0, math.inf, math.inf, -0.1, 1.0], np.float32)
    with pytest.raises(ZeroDivisionError):
        5.0 % 0.0
    c = cubepy.client("cpu")
    q, r = c.zeros(a.shape, f32), c.zeros(a.shape, f32)
    divmod_kernel.launch(c, CubeCount(1), CubeDim(a.size), c.tensor(a), c.tensor(b), q, r)
    q, r = q.numpy(), r.numpy()
    assert list(q[:2]) == [math.inf, -math.inf] and math.isnan(q[2]) and math.isnan(r[0])
    assert math.isnan(q[3]) and math.isnan(r[3])
    assert (q[4], r[4], q[5], r[5]) == (0.0, 5.0, -1.0, math.inf)  # Python's signs
    assert (q[6], r[6]) == (-5.0 // np.float32(-0.1), np.float32(-5.0) % np.float32(-0.1))
    assert q[6] == 49.0  # floor(-5 / -0.1f) would be 50: the f32 value of 0.1 is larger
    assert math.isnan(q[7]) and math.isnan(r[7])


@pytest.mark.parametrize("name", ["f16", "f32", "f64"])
def test_constant_folder_matches_numpy(name):
    ty = getattr(cubepy, name)
    a, b = hard_pairs(name, random=300)
    want_q, want_r = expected(a, b)
    got_q = np.array([consteval.binary("floordiv", ty, x, y) for x, y in zip(a, b)], NP[name])
    got_r = np.array([consteval.binary("mod", ty, x, y) for x, y in zip(a, b)], NP[name])
    assert_same_bits(got_q, want_q, a, b, f"folded {name} //")
    assert_same_bits(got_r, want_r, a, b, f"folded {name} %")


@cube(launch=True)
def folded_kernel(out: Array[f32]):
    out[0] = f32(1294452849.0) % f32(5.0)
    out[1] = f32(-5.0) // f32(-0.1)
    out[2] = f32(1e-45) % f32(-1.0)


@pytest.mark.parametrize("rt", RUNTIME_PARAMS)
def test_folded_constants_match_the_runtime(rt):
    src = folded_kernel.source("wgsl")
    assert "cube_mod" not in src and "cube_floordiv" not in src  # folded at compile time
    c = cubepy.client(rt)
    out = c.zeros(3, f32)
    folded_kernel.launch(c, CubeCount(1), CubeDim(1), out)
    a = np.array([1294452849.0, -5.0, 1e-45], np.float32)
    b = np.array([5.0, -0.1, -1.0], np.float32)
    q, r = expected(a, b)
    assert_same_bits(out.numpy(), np.array([r[0], q[1], r[2]], np.float32), a, b, rt)
    assert list(out.numpy()[:2]) == [4.0, 49.0]


# ----------------------------------------------------------------------------- sources

_HELPER = re.compile(r"\bcube_(?:mod|floordiv|fmod|divq|mant|exp)_f\w*\(")


def _helpers(src: str, prefix: str) -> str:
    """The text of every `cube_mod_*` / `cube_floordiv_*` / `cube_fmod_*` ... helper
    (a definition runs from its header line to the next line that is `}`)."""
    blocks, current = [], None
    for line in src.splitlines():
        if current is None and _HELPER.search(line) and line.rstrip().endswith(("{", "}")) \
                and not line.startswith(" "):
            if line.rstrip().endswith("}"):
                blocks.append(line)
                continue
            current = [line]
        elif current is not None:
            current.append(line)
            if line == "}":
                blocks.append("\n".join(current))
                current = None
    assert blocks, f"no helpers in {prefix} source"
    return "\n".join(blocks)


def test_cuda_helpers_round_every_step_and_never_contract():
    for name in ("f16", "f32", "f64"):
        src = divmod_kernel.source("cuda", Float=name)
        text = _helpers(src, "cuda")
        assert "*" not in text  # no product a multiply-add could absorb
        core = "f32" if name == "f16" else name
        r = "f" if core == "f32" else "d"
        for step in ("sub", "div", "add"):
            assert f"__{r}{step}_rn(" in text
        assert ("fmodf(a, b)" if core == "f32" else "fmod(a, b)") in text
        assert re.search(r"[^_]\b[ab] [-+/] [abm]\b", text) is None  # no bare a - m, a / b


def test_metal_helpers_use_precise_division_and_fmod():
    text = _helpers(divmod_kernel.source("metal", Float="f32"), "metal")
    assert "metal::precise::fmod(a, b)" in text and "metal::precise::divide(" in text
    assert "*" not in text and "metal::floor(a / b)" not in text
    half = _helpers(divmod_kernel.source("metal", Float="f16"), "metal")
    assert "half(cube_mod_f32(float(a), float(b)))" in half  # in float, as numpy's half


def test_wgsl_helpers_divide_exactly_without_float_division():
    text = re.sub(r"//[^\n]*", "", _helpers(divmod_kernel.source("wgsl", Float="f32"), "wgsl"))
    assert not re.search(r"[\w)] / [\w(]", text)  # no float division (2.5 ulp on Vulkan)
    assert not re.search(r"[\w)] \* [\w(]", text)  # nothing a driver could fuse
    assert "trunc(" not in text and " % " not in text  # WGSL's x - y * trunc(x / y)


@pytest.mark.nvcc
@pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")
def test_cuda_helpers_compile_with_nvcc(tmp_path):
    for name in ("f16", "f32", "f64"):
        path = tmp_path / f"divmod_{name}.cu"
        path.write_text(divmod_kernel.source("cuda", Float=name))
        done = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-o", str(path) + ".cubin",
                               str(path)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr


HOST_SHIM = """
#include <math.h>
#include <cstdio>
#include <cstring>
#include <cstdint>
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
"""
HOST_MAIN = """
int main() {
    uint32_t x, y;
    while (scanf("%u %u", &x, &y) == 2) {
        float a, b;
        std::memcpy(&a, &x, 4); std::memcpy(&b, &y, 4);
        float q = cube_floordiv_f32(a, b), r = cube_mod_f32(a, b);
        std::memcpy(&x, &q, 4); std::memcpy(&y, &r, 4);
        printf("%u %u\\n", x, y);
    }
}
"""


@pytest.mark.nvcc
@pytest.mark.skipif(not shutil.which("g++"), reason="g++ not installed")
def test_cuda_helpers_run_on_the_host_like_numpy(tmp_path):
    """The CUDA helper text itself, compiled for the host (IEEE, contraction off) with
    the __f*_rn intrinsics as plain operations: bit for bit numpy's results."""
    text = _helpers(divmod_kernel.source("cuda", Float="f32"), "cuda")
    text = text.replace("__device__ __forceinline__", "static inline")
    (tmp_path / "h.cpp").write_text(HOST_SHIM + text + HOST_MAIN)
    done = subprocess.run(["g++", "-O2", "-ffp-contract=off", "-o", str(tmp_path / "h"),
                           str(tmp_path / "h.cpp")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    a, b = hard_pairs("f32")
    lines = "\n".join(f"{x} {y}" for x, y in zip(a.view(np.uint32), b.view(np.uint32)))
    run = subprocess.run([str(tmp_path / "h")], input=lines, capture_output=True, text=True,
                         timeout=60)
    got = np.array([line.split() for line in run.stdout.split("\n") if line], np.uint32)
    want_q, want_r = expected(a, b)
    assert_same_bits(got[:, 1].copy().view(np.float32), want_r, a, b, "host cuda %")
    assert_same_bits(got[:, 0].copy().view(np.float32), want_q, a, b, "host cuda //")


# ----------------------------------------------------------------------------- the H200 fuzz

FUZZ_CASES = json.loads((HERE / "data" / "fuzz_h200_divmod.json").read_text())
_DTYPES = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}


def _run_case(client, case: dict):
    kernel = fk.load_kernel(case["source"])
    params = re.findall(r"(\w+): Array\[(\w+)\]", case["source"].split("def kernel", 1)[1])
    args = []
    for pname, ty in params:
        if pname == "out":
            out = client.zeros(1, getattr(cubepy, ty))
            args.append(out)
        else:
            value = case["inputs"][pname[2:]]
            args.append(client.tensor(np.array([float(value) if ty == "f32" else int(value)],
                                               _DTYPES[ty])))
    kernel.launch(client, CubeCount(1), CubeDim(1), *args)
    return out.numpy()[0]


@pytest.mark.parametrize("rt", [p for p in RUNTIME_PARAMS if p.values[0] != "cpu"])
def test_fuzz_divmod_cases_from_the_h200(rt):
    """The H200 run's `//` / `%` mismatches whose expressions are otherwise exact (no
    true division, no sqrt/exp/log/sin/cos/tanh), among them `ceil(c0 // ceil(c0))`
    (0.0 on wgpu, want 1.0): the target now matches the cpu runtime, which matches the
    reference (tests/fuzz_kernels.py)."""
    client, cpu = cubepy.client(rt), cubepy.client("cpu")
    cases = FUZZ_CASES  # every case on every target (each was found on cuda or wgpu)
    bad = []
    for case in cases:
        got, want = _run_case(client, case), _run_case(cpu, case)
        if not fk.float_matches(float(want), float(got)):
            bad.append((case["inputs"], got, want, case["source"].splitlines()[-1]))
    assert not bad, f"{len(bad)} of {len(cases)} differ: {bad[:3]}"


# ----------------------------------------------------------------------------- ptxas

@cube(launch=True)
def negated_min_kernel(p_a0: Array[i32], p_a1: Array[i32], p_b0: Array[cubepy.u32],
                       p_c0: Array[f32], out: Array[i32]):
    i = ABSOLUTE_POS
    a0 = p_a0[i]
    a1 = p_a1[i]
    b0 = p_b0[i]
    c0 = p_c0[i]
    out[i * 5 + 0] = min((i32(b0) * (abs(a0) - (a1 & a0))), min((-max(a1, i32(-9))), cubepy.select((f32(10.0) >= c0), abs(a1), i32((c0 < f32(-3.0))))))  # noqa: E501
    out[i * 5 + 1] = min((i32(b0) * (abs(a0) - (a1 & a0))), min((-max(a1, i32(-9))), cubepy.select((f32(4294967040.0) >= c0), abs(a1), i32((c0 < f32(-3.0))))))  # noqa: E501
    out[i * 5 + 2] = min((i32(b0) * (abs(a0) - (a1 & a0))), min((-max(a1, i32(-9))), cubepy.select((f32(-3.0) >= c0), abs(a1), i32((c0 < f32(-3.0))))))  # noqa: E501
    out[i * 5 + 3] = min((i32(b0) * (abs(a0) - (a1 & a0))), min((-cubepy.select((a0 < a0), i32(3), a0)), max((a1 & a1), i32((c0 < f32(-3.0))))))  # noqa: E501
    out[i * 5 + 4] = min((i32(b0) * (abs(a0) - (a1 & a0))), min((-cubepy.select((c0 < c0), i32(3), a0)), max((a1 & a1), i32((c0 < f32(-3.0))))))  # noqa: E501


def _negated_min_inputs():
    rng = np.random.default_rng(3)
    a0 = rng.integers(-20, 20, 64).astype(np.int32)
    a1 = rng.integers(-20, 20, 64).astype(np.int32)
    b0 = rng.integers(0, 20, 64).astype(np.uint32)
    c0 = rng.choice(np.array([399970272.0, -5.0, 1.0, 20.0], np.float32), 64)
    a0[1], a1[1], b0[1], c0[1] = -3, 3, 7, 399970272.0  # the H200's failing lane
    return a0, a1, b0, c0


def _negated_min_reference(a0, a1, b0, c0) -> np.ndarray:
    out = []
    for x0, x1, y0, z0 in zip(a0.tolist(), a1.tolist(), b0.tolist(), c0.tolist()):
        p = fk.wrap(y0 * (abs(x0) - (x1 & x0)), "i32")
        lt = int(z0 < -3.0)
        out += [min(p, min(-max(x1, -9), abs(x1) if 10.0 >= z0 else lt)),
                min(p, min(-max(x1, -9), abs(x1) if 4294967040.0 >= z0 else lt)),
                min(p, min(-max(x1, -9), abs(x1) if -3.0 >= z0 else lt)),
                min(p, min(-x0, max(x1, lt))), min(p, min(-x0, max(x1, lt)))]
    return np.array(out, np.int32)


@pytest.mark.parametrize("rt", RUNTIME_PARAMS)
def test_cuda_negated_min_operand(rt):
    """ptxas (CUDA 13.0, sm_90) fused min(a, min(-b, c)) into one VIMNMX3 without the
    negation: these five expressions gave 0, 3, 0, -3, -3 instead of -3, -3, -3, 3, 3 on
    an H200 (lane 1). The CUDA target emits i32 min/max as inline PTX, which keeps it."""
    c = cubepy.client(rt)
    a0, a1, b0, c0 = _negated_min_inputs()
    out = c.zeros(64 * 5, i32)
    negated_min_kernel.launch(c, CubeCount(1), CubeDim(64), c.tensor(a0), c.tensor(a1),
                              c.tensor(b0), c.tensor(c0), out)
    got = out.numpy()
    assert list(got[5:10]) == [-3, -3, -3, 3, 3]
    np.testing.assert_array_equal(got, _negated_min_reference(a0, a1, b0, c0))


def test_cuda_int_min_max_are_inline_ptx():
    src = negated_min_kernel.source("cuda", cube_dim=CubeDim(64))
    assert 'asm("min.s32 %0, %1, %2;"' in src and 'asm("max.s32 %0, %1, %2;"' in src
    assert re.search(r"[^_]\bmin\(\(int\)", src) is None  # no NVVM min.s32 on i32 left
