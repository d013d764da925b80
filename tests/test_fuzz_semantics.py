"""Property-based differential tests of docs/LANGUAGE.md (hypothesis, derandomized).

Random typed expression kernels and random control-flow kernels (tests/fuzz_kernels.py)
run on the cpu and wgpu runtimes, and as all-literal kernels that the constant folder
evaluates; every result must match a pure-Python reference of the language semantics.
A fixed sample of the generated kernels is also compiled by nvcc (CUDA) and clang++
(Metal, against tests/shim/metal_stdlib).
"""
from __future__ import annotations

import math
import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import cubepy
from cubepy import CubeCount, CubeDim

import fuzz_kernels as fk
from conftest import RUNTIME_PARAMS

LANES = 256
FOLD_LANES = 6  # literal kernels per expression (each is compiled on its own)
FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
CPU_WGPU = [p for p in RUNTIME_PARAMS if p.values[0] in ("cpu", "wgpu")]
NP = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}
CTX = fk.Ctx({"i32": ["a0", "a1"], "u32": ["b0", "b1"], "f32": ["c0", "c1"]})


@pytest.fixture(params=CPU_WGPU)
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
    if client.runtime == "wgpu":
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
