"""Property-based differential tests of docs/LANGUAGE.md (hypothesis, derandomized).

Random typed expression kernels and random control-flow kernels (tests/fuzz_kernels.py)
run on every runtime present (cpu, wgpu, cuda), and as all-literal kernels that the
constant folder evaluates; every result must match a pure-Python reference of the
language semantics.
A fixed sample of the generated kernels is also compiled by nvcc (CUDA) and clang++
(Metal, against tests/shim/metal_stdlib).
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import cubepy
from cubepy import CubeCount, CubeDim

import fuzz_kernels as fk
import fuzz_programs as fp
from conftest import RUNTIME_PARAMS

LANES = 256
FOLD_LANES = 6  # literal kernels per expression (each is compiled on its own)
# Deterministic by default; CUBEPY_FUZZ_EXAMPLES=N explores N fresh random examples.
_EXPLORE = int(os.environ.get("CUBEPY_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=_EXPLORE or 150, deadline=None, derandomize=not _EXPLORE,
                database=None, suppress_health_check=list(HealthCheck))
# GPU compilers may fuse or reassociate chains of float operations (nvcc contracts
# a * b + c into an fma; WGSL allows reassociation): those kernels run on cpu only.
FLOAT_CHAINS_EXACT = ("cpu",)
NP = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}
CTX = fk.Ctx({"i32": ["a0", "a1"], "u32": ["b0", "b1"], "f32": ["c0", "c1"]})


@pytest.fixture(params=RUNTIME_PARAMS)
def client(request):
    return cubepy.client(request.param)


@st.composite
def expr_cases(draw):
    """(root expression, seed of its inputs)."""
    ty = draw(st.sampled_from(fk.NUM_TYPES))
    root = draw(fk.root_exprs(ty, CTX, draw(st.integers(2, 5))))
    return root, draw(st.integers(0, 2**32 - 1))


def lane_inputs(root: fk.Node, seed: int, lanes: int = LANES) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    return {n: fk.random_inputs(rng, t, lanes) for n, t in fk.input_names(root)}


def lane_env(inputs: dict[str, list], lane: int) -> dict:
    return {n: v[lane] for n, v in inputs.items()}


def check_lane(root: fk.Node, env: dict, got, where: str, finite_math: bool = False) -> None:
    """Asserts that `got` is the reference value of `root` for the inputs `env`
    (`finite_math`: a target that may assume no arithmetic meets an inf or NaN)."""
    if finite_math and not fk.finite_math_safe(root, env):
        return
    want = root.ev(env)
    if root.ty != "f32":
        assert int(got) == want, f"{where}: got {int(got)}, want {want} for {env}"
        return
    if fk.has_signed_zero_choice(root, env):
        return  # min/max(+0.0, -0.0) may give either zero on a target
    ulps, atol = 0, 0.0
    if not root.exact:  # Vulkan's precision: exp 3 + 2|x| ulp; 4 ulp, 2**-22 the others
        ulps, atol = 4, 2.0**-22
        if isinstance(root, fk.Un) and root.op == "exp":
            ulps = 3 + 2 * 30
    got = float(got)
    assert fk.float_matches(want, got, ulps, atol=atol), \
        f"{where}: got {got!r}, want {want!r} for {env}"


def run_expr_kernel(client, root: fk.Node, inputs: dict[str, list]) -> np.ndarray:
    kernel = fk.load_kernel(fk.expr_kernel_source(root))
    args = [client.tensor(np.array(inputs[n], dtype=NP[t]) if t != "f32"
                          else np.array(inputs[n], dtype=np.float32))
            for n, t in fk.input_names(root)]
    out = client.zeros(LANES, getattr(cubepy, root.ty))
    kernel.launch(client, CubeCount(LANES // 64), CubeDim(64), *args, out)
    return out.numpy()


def describe(root: fk.Node) -> str:
    return fk.expr_kernel_source(root).split("\n\n\n", 1)[1]


@FUZZ
@given(case=expr_cases())
def _expr_property(client, case):
    root, seed = case
    if client.runtime not in FLOAT_CHAINS_EXACT:
        assume(not fk.float_chain(root))  # see float_chain
    inputs = lane_inputs(root, seed)
    got = run_expr_kernel(client, root, inputs)
    for lane in range(LANES):
        check_lane(root, lane_env(inputs, lane), got[lane],
                   f"{client.runtime} lane {lane} of\n{describe(root)}",
                   finite_math=client.runtime == "wgpu")


def test_random_expressions_match_reference(client):
    """Each random expression kernel, on 256 lanes of random and edge inputs, gives the
    reference value on every lane (floats bit for bit where the operations are exact)."""
    _expr_property(client)


@FUZZ
@given(case=expr_cases())
def _folded_property(case):
    root, seed = case
    cpu = cubepy.client("cpu")
    inputs = lane_inputs(root, seed, lanes=FOLD_LANES)
    for lane in range(FOLD_LANES):
        env = lane_env(inputs, lane)
        kernel = fk.load_kernel(fk.literal_kernel_source(root, env))
        ir_text = kernel.ir(cube_dim=(1, 1, 1))
        out = cpu.zeros(1, getattr(cubepy, root.ty))
        kernel.launch(cpu, CubeCount(1), CubeDim(1), out)
        where = f"folded kernel\n{fk.literal_kernel_source(root, env)}\nIR:\n{ir_text}"
        check_lane(root, env, out.numpy()[0], where)
        if root.folds and not fk.has_signed_zero_choice(root, env):
            assert re.search(r"@out\[[^\]]*\] = [^(\s]+:(i32|u32|f32)  #", ir_text), where


def test_constant_folding_matches_reference():
    """The same expressions with every input a literal: the frontend and the constant
    folder evaluate them (completely, when no operation is left to the target), and the
    result is the reference value."""
    _folded_property()


# ----------------------------------------------------------------------------- control flow

FLOW_LANES = 64
SENTINEL = 0x5EED


@FUZZ
@given(program=fp.programs(), seed=st.integers(0, 2**32 - 1))
def _flow_property(client, program, seed):
    rng = np.random.default_rng(seed)
    inputs = {x: fk.random_inputs(rng, "i32", FLOW_LANES) for x in program.inputs}
    source = program.source()
    kernel = fk.load_kernel(source)
    out = client.tensor(np.full(FLOW_LANES * fp.SLOTS, SENTINEL, np.int32))
    args = [client.tensor(np.array(inputs[x], np.int32)) for x in program.inputs]
    kernel.launch(client, CubeCount(1), CubeDim(FLOW_LANES), *args, out)
    got = out.numpy().reshape(FLOW_LANES, fp.SLOTS).tolist()
    for lane in range(FLOW_LANES):
        env = {x: inputs[x][lane] for x in program.inputs}
        want = program.run(env, SENTINEL)
        assert got[lane] == want, \
            f"{client.runtime} lane {lane} inputs {env}\n{source.split(chr(10) * 3, 1)[1]}"


def test_random_control_flow_matches_reference(client):
    """Random kernels with nested if/elif/else, for-range loops with constant or runtime
    (possibly negative or zero) steps, while loops with break/continue and early
    terminate(): every unit's stores match a Python run of the same program."""
    _flow_property(client)


# ----------------------------------------------------------------------------- nvcc, clang++

NATIVE_SAMPLE = 40  # generated kernels per compiler run (one bundled compile)


def _sample_sources(target: str) -> dict[str, str]:
    """Sources for `target` of a fixed sample of generated kernels (expressions and
    programs), from the same deterministic hypothesis settings."""
    found: dict[str, str] = {}
    sample = settings(FUZZ, max_examples=NATIVE_SAMPLE // 2, derandomize=True)

    @sample
    @given(case=expr_cases())
    def exprs(case):
        kernel = fk.load_kernel(fk.expr_kernel_source(case[0]))
        found[f"expr{len(found)}"] = kernel.source(target, cube_dim=(64, 1, 1))

    @sample
    @given(program=fp.programs())
    def flows(program):
        kernel = fk.load_kernel(program.source())
        found[f"flow{len(found)}"] = kernel.source(target, cube_dim=(64, 1, 1))

    exprs()
    flows()
    return found


# warnings about what the random program itself says (`x >= 0u` on an unsigned x)
_USER_WARNINGS = re.compile(r"pointless comparison|self-comparison|tautological|always "
                            r"(evaluates to )?(true|false)|warnings? generated"
                            r"|Remark: The warnings can be suppressed")


def _unexpected_warning(output: str) -> bool:
    lines = [x for x in output.splitlines() if "warning" in x.lower()]
    return any(not _USER_WARNINGS.search(x) for x in lines)


def _assert_all_compiled(results, compiler: str, sources) -> None:
    assert len(results) == len(sources) >= NATIVE_SAMPLE // 2
    bad = {k: out for k, (rc, out) in results.items() if rc != 0 or _unexpected_warning(out)}
    assert not bad, "\n".join(f"{compiler} on {k}:\n{sources[k]}\n{out}"
                              for k, out in list(bad.items())[:2])


@pytest.mark.nvcc
def test_generated_cuda_compiles_with_nvcc(tmp_path):
    """A fixed sample of the random kernels: the CUDA source compiles (sm_90 cubin)."""
    import clike_kernels as ck
    from test_codegen_cuda import NVCC, _rename
    if NVCC is None:
        pytest.skip("nvcc not installed")
    sources = _sample_sources("cuda")
    results = ck.compile_all(sources, ".cu",
                             lambda p: [NVCC, "-arch=sm_90", "-cubin", "-o", "/dev/null", p],
                             str(tmp_path), header_lines=("#include",), rename=_rename)
    _assert_all_compiled(results, "nvcc", sources)


@pytest.mark.clang
def test_generated_metal_compiles_with_clang(tmp_path):
    """The same sample as MSL type-checks with clang++ against tests/shim/metal_stdlib."""
    import clike_kernels as ck
    from test_codegen_metal import CLANG, SHIM
    if CLANG is None:
        pytest.skip("clang++ not installed")
    sources = _sample_sources("metal")
    results = ck.compile_all(
        sources, ".metal",
        lambda p: [CLANG, "-std=c++17", "-fsyntax-only", "-Wall", "-I", SHIM, "-x", "c++", p],
        str(tmp_path), header_lines=("#include <metal_stdlib>", "using namespace metal;"))
    _assert_all_compiled(results, "clang++", sources)
