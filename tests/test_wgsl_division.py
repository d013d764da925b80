"""WGSL's `/` is accurate only for divisors of magnitude in [2^-126, 2^126], and NVIDIA's
Vulkan driver computes it as x * (1/y) with a subnormal 1/y flushed to zero (hypot(3e38,
1e38) came out as 3e38 there). The float helpers (codegen/float_helpers.py) must keep
every divisor inside that range for every input:

- every division in a helper body is listed here with the reason its divisor stays in
  range, so a new one cannot slip in unreviewed;
- on wgpu (llvmpipe divides correctly everywhere, so it cannot show the fault itself)
  the helpers run with each division replaced by that flushing model of NVIDIA's, and
  WGSL's built-in atan2 by a version that rejects a divisor out of range, and must stay
  within their documented ulp bounds at inputs that reach the edges;
- on every runtime, those inputs against Python's math.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import cubepy
from cubepy import CubeCount, CubeDim, f32
from cubepy.codegen import float_helpers, wgsl_prelude
import math_kernels as mk
from math_accuracy import ULP, points, reference, ulp_error

# helper -> the divisors of its divisions, as written, and why each is in range
DIVISORS = {
    "hypot": ["m"],  # the larger operand, scaled by 2^-+64 from beyond [1e-30, 1e37]: [2^-85, 1e37]
    "log1p_kernel": ["(2.0f + f)"],  # f in [sqrt(1/2) - 1, sqrt(2) - 1]
    "log1p": ["u"],  # 1 + x with x in (-1, 2^25): [2^-24, 2^25]
    "asinh": ["(1.0f + sqrt(1.0f + a * a))"],  # a <= 4096: [2, 4098]
    "atanh": ["(1.0f - a)"],  # a < 1: [2^-24, 1]
    "cbrt": ["(r * r)", "(r * r)"],  # r ~ a^(1/3), a in [2^-125, 2^128]: [2^-84, 2^86]
    "erfc_tail": ["a"],  # a in [2, 10.1]
    "lgamma_pos": ["select(x, 1.0e30f, x > 1.0e30f)"],  # [8, 1e30]
    # x * 2^24 for subnormal x: [2^-125, 2^-102]; q = x (x + 1) ... with x in (-20, 1),
    # |x| >= 2^-126 (subnormal x took the branch before): [2^-126, 20!]; sinpi(x) g with
    # |sinpi(x)| >= pi 2^-19 and g = gamma(1 - x) 2^-64, x in [-40, -20]: [2^-22, 2^96]
    "tgamma": ["cube_ldexp_f32(x, 24)", "q", "(cube_sinpi_f32(x) * g)"],
}

_COMMENT = re.compile(r"//[^\n]*")


def _operand_end(text: str, start: int) -> int:
    """The end of the operand at `start`: a parenthesised group, or a name or number
    with the call that may follow it."""
    i = start
    if text[i] != "(":
        while i < len(text) and (text[i].isalnum() or text[i] in "_."):
            i += 1
        if i == len(text) or text[i] != "(":
            return i
    depth = 0
    while True:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i


def _divisions(body: str) -> list[tuple[int, int, int]]:
    """(position of '/', start, end of the divisor) of each division in a body."""
    found = []
    for m in re.finditer(r"(?<![/*])/(?![/*])\s*", body):
        found.append((m.start(), m.end(), _operand_end(body, m.end())))
    return found


def _bodies() -> dict[str, str]:
    return {name: _COMMENT.sub("", h.body) for name, h in float_helpers.HELPERS.items()}


def test_every_helper_division_has_a_divisor_in_range():
    found = {name: [body[s:e] for _, s, e in _divisions(body)]
             for name, body in _bodies().items()}
    found = {name: divisors for name, divisors in found.items() if divisors}
    assert found == DIVISORS


def test_the_division_finder_reads_operands_whole():
    body = "let a = b / (c + d(e)) + f / g(h, i) * j / k;"
    got = [body[s:e] for _, s, e in _divisions(body)]
    assert got == ["(c + d(e))", "g(h, i)", "k"]


# -- the helpers under NVIDIA's division, on wgpu ----------------------------------------
_RCP_MODEL = """fn cube_rcp_model_f32(y: f32) -> f32 {
    let a = abs(y);
    if (a < 1.1754944e-38f) { return bitcast<f32>((bitcast<u32>(y) & 0x80000000u) | 0x7f800000u); }
    if (a > 8.507059e37f) { return bitcast<f32>(bitcast<u32>(y) & 0x80000000u); }
    return 1.0f / y;
}"""
# the built-in atan2 divides one operand by the other: NaN where the larger is out of range
_ATAN2_MODEL = """fn cube_atan2_model_f32(y: f32, x: f32) -> f32 {
    let m = max(abs(y), abs(x));
    if ((m > 8.507059e37f || m < 1.1754944e-38f) && m != 0.0f) { return bitcast<f32>(0x7fc00000u); }
    return atan2(y, x);
}"""


def _modelled(body: str) -> str:
    """`body` with each `x / y` as `x * cube_rcp_model_f32(y)` (same precedence: `*` and
    `/` bind alike, left to right) and the built-in atan2 as its model."""
    body = _COMMENT.sub("", body)
    for slash, start, end in reversed(_divisions(body)):
        body = f"{body[:slash]}* cube_rcp_model_f32({body[start:end]}){body[end:]}"
    return re.sub(r"(?<![\w.])atan2\(", "cube_atan2_model_f32(", body)


@pytest.fixture
def modelled_division(monkeypatch):
    """The WGSL prelude's float helpers with the flushing division model (the disk
    caches off: a kernel compiled earlier with the real helpers must not be read back)."""
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")
    for name, h in float_helpers.HELPERS.items():
        body = _modelled(h.body)
        monkeypatch.setitem(float_helpers.HELPERS, name, float_helpers.FloatHelper(
            h.params, h.result, body, h.deps + ("rcp_model", "atan2_model")))
    monkeypatch.setitem(wgsl_prelude._HELPERS, "rcp_model",
                        (lambda t: _RCP_MODEL, lambda t: []))
    monkeypatch.setitem(wgsl_prelude._HELPERS, "atan2_model",
                        (lambda t: _ATAN2_MODEL, lambda t: []))


def _wgpu():
    """The wgpu client when its adapter keeps subnormals (llvmpipe), else None: the
    division model replaces WGSL's `/` on an adapter that divides exactly, and a
    flushing GPU (NVIDIA's) flushes the subnormal inputs themselves, which the model
    does not describe."""
    try:
        client = cubepy.client("wgpu")
    except cubepy.LaunchError:
        return None
    return client if "llvmpipe" in str(client.device).lower() else None


# inputs whose divisors reach WGSL's limits (before the helpers scaled them)
GAMMA_EDGES = np.concatenate([np.linspace(-33.806, -33.728, 9), [-34.0001, -33.99, -34.04],
                              [-35.00001, -35.99999, -36.00002, -37.00004, -35.5, -39.5,
                               -39.99999, -40.5, -41.0001],
                              [5e-39, -5e-39, 3e-39, 1.1e-38, -1.1e-38, 2.9e-39]])
LGAMMA_EDGES = np.array([8.6e37, 1e38, 3e38, 3.4028235e38, 4.08e36, 4.09e36, 1e31])
BINARY_EDGES = ([1e38, 3e38, -3e38, 3e38, 1e-30, 3.4e38, math.inf, 3e38, 1e-39, 3e-39, -5e-40,
                 1e-45, 2e-38, 8.6e37, 1e30, 0.0],
                [3e38, 1e38, 1e38, -3e38, 3e38, 1.0, 3e38, math.inf, 3e-39, 1e-39, 7e-40,
                 1e-45, 3e-38, 1.0, 1e30, -0.0])
_SPECIAL = [0.0, -0.0, 1.0, -2.0, 1e-45, 3e38, -3e38, math.inf, -math.inf, math.nan]
# zeros, infinities and NaN against each other (WGSL leaves them to the driver)
SPECIAL_PAIRS = ([a for a in _SPECIAL for _ in _SPECIAL], [b for _ in _SPECIAL for b in _SPECIAL])


def _unary(client, kernel, fn: str, x: np.ndarray) -> np.ndarray:
    out = client.empty((len(x),), f32)
    kernel.launch(client, CubeCount((len(x) + 63) // 64), CubeDim(64), client.tensor(x),
                  out, fn=fn)
    return out.numpy()


def _binary(client, kernel, fn: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = client.empty((len(x),), f32)
    kernel.launch(client, CubeCount((len(x) + 63) // 64), CubeDim(64), client.tensor(x),
                  client.tensor(y), out, fn=fn)
    return out.numpy()


def _unary_points(fn: str) -> np.ndarray:
    extra = {"gamma": GAMMA_EDGES, "lgamma": LGAMMA_EDGES}.get(fn, np.array([]))
    return np.concatenate([points(fn), extra]).astype(np.float32)


# atan2 has no entry of its own in the Math table: WGSL's allows 4096 ulp
ATAN2_ULP = {"cpu": 1, "wgpu": 4096, "cuda": 2.5}


def _bad_unary(fn: str, runtime: str, x: np.ndarray, got: np.ndarray) -> list:
    bad = []
    for g, v in zip(got, x):
        want = reference(fn, float(v))
        if fn == "lgamma" and -10.001 < v < -2.264:
            if math.isfinite(want) and abs(float(g) - want) > 2e-5:
                bad.append((float(v), float(g), want))
            continue
        if ulp_error(g, want, flush_subnormals=runtime == "wgpu") > ULP[fn][runtime]:
            bad.append((float(v), float(g), want))
    return bad


def _bad_binary(fn: str, runtime: str, x, y, got) -> list:
    bound = ATAN2_ULP[runtime] if fn == "atan2" else ULP[fn][runtime]
    bad = []
    for g, a, b in zip(got, x, y):
        want = reference(fn, float(a), float(b))
        err = ulp_error(g, want, flush_subnormals=runtime == "wgpu")
        if err > bound or (want == 0 and math.copysign(1, want) != math.copysign(1, g)):
            bad.append((float(a), float(b), float(g), want))
    return bad


_DIVIDING = ("gamma", "lgamma", "cbrt", "erf", "erfc", "atanh", "asinh", "acosh", "log1p",
             "log10")


@pytest.mark.wgpu
@pytest.mark.skipif(_wgpu() is None, reason="no wgpu adapter keeping subnormals (llvmpipe)")
@pytest.mark.parametrize("fn", _DIVIDING)
def test_unary_helpers_hold_their_bounds_under_a_flushing_division(modelled_division, fn):
    client = _wgpu()
    kernel = cubepy.cube(launch=True)(mk.unary.fn)  # its own cache: the modelled prelude
    x = _unary_points(fn)
    x = x[~((np.abs(x.astype(np.float64)) < 2.0 ** -126) & (x != 0))] \
        if fn != "gamma" else x  # tgamma alone divides by a subnormal argument's scale
    bad = _bad_unary(fn, "wgpu", x, _unary(client, kernel, fn, x))
    assert not bad, f"{fn} under the flushing division: {bad[:5]}"


@pytest.mark.wgpu
@pytest.mark.skipif(_wgpu() is None, reason="no wgpu adapter keeping subnormals (llvmpipe)")
@pytest.mark.parametrize("fn", ["hypot", "atan2"])
def test_binary_helpers_hold_their_bounds_under_a_flushing_division(modelled_division, fn):
    client = _wgpu()
    kernel = cubepy.cube(launch=True)(mk.binary.fn)
    x, y = (np.array(a + b, np.float32) for a, b in zip(BINARY_EDGES, SPECIAL_PAIRS))
    bad = _bad_binary(fn, "wgpu", x, y, _binary(client, kernel, fn, x, y))
    assert not bad, f"{fn} under the flushing division: {bad[:5]}"


@pytest.mark.wgpu
@pytest.mark.skipif(_wgpu() is None, reason="no wgpu adapter keeping subnormals (llvmpipe)")
def test_the_model_catches_an_unscaled_division(modelled_division, monkeypatch):
    """hypot as it was before its scaling gives NVIDIA's wrong hypot(3e38, 1e38) = 3e38
    under the model, on llvmpipe: the tests above would see an unscaled division."""
    assert _modelled("let r = x / y;") == "let r = x * cube_rcp_model_f32(y);"
    h = float_helpers.HELPERS["hypot"]
    naive = """let a = abs(x);
    let b = abs(y);
    let m = select(b, a, a > b);
    let n = select(a, b, a > b);
    let r = n / m;
    return m * sqrt(1.0f + r * r);"""
    monkeypatch.setitem(float_helpers.HELPERS, "hypot", float_helpers.FloatHelper(
        h.params, h.result, _modelled(naive), h.deps))
    kernel = cubepy.cube(launch=True)(mk.binary.fn)
    x = np.array([3e38, 3.0], np.float32)
    y = np.array([1e38, 4.0], np.float32)
    got = _binary(_wgpu(), kernel, "hypot", x, y)
    assert got[0] == np.float32(3e38) and got[1] == 5.0


# -- the edge inputs against Python's math, on every runtime -----------------------------
@pytest.mark.parametrize("fn", ["gamma", "lgamma"])
def test_gamma_functions_at_their_divisor_edges(runtime_client, fn):
    runtime = runtime_client.runtime
    x = (GAMMA_EDGES if fn == "gamma" else LGAMMA_EDGES).astype(np.float32)
    if runtime == "wgpu" and "llvmpipe" not in str(runtime_client.device).lower():
        x = x[~((np.abs(x.astype(np.float64)) < 2.0 ** -126) & (x != 0))]
    bad = _bad_unary(fn, runtime, x, _unary(runtime_client, mk.unary, fn, x))
    assert not bad, f"{fn} on {runtime}: {bad[:5]}"


@pytest.mark.parametrize("fn", ["hypot", "atan2"])
def test_two_argument_functions_at_their_divisor_edges(runtime_client, fn):
    runtime = runtime_client.runtime
    x, y = (np.array(a + b, np.float32) for a, b in zip(BINARY_EDGES, SPECIAL_PAIRS))
    if runtime == "wgpu" and "llvmpipe" not in str(runtime_client.device).lower():
        keep = ~(((np.abs(x) < 2.0 ** -126) & (x != 0)) | ((np.abs(y) < 2.0 ** -126) & (y != 0)))
        x, y = x[keep], y[keep]
    got = _binary(runtime_client, mk.binary, fn, x, y)
    assert got[0] == pytest.approx(math.atan2(1e38, 3e38) if fn == "atan2"
                                   else math.hypot(1e38, 3e38), rel=1e-5)
    bad = _bad_binary(fn, runtime, x, y, got)
    assert not bad, f"{fn} on {runtime}: {bad[:5]}"


def test_round_to_38_digits_divides_within_range(runtime_client):
    """round(x, 38) and round(x, -38) divide by f32's 1e38, beyond 2^126: the WGSL
    source divides by 1e38 * 2^-64 instead, with the same results."""
    source = mk.round_far_digits.source("wgsl")
    divisors = [float(d) for d in re.findall(r"/ ([0-9.e+-]+)f", source)]
    assert divisors and all(d <= 2.0 ** 126 for d in divisors), divisors
    c = runtime_client
    x = np.array([1.5, -2.25, 3e38, -1.2e38, 0.0, 1e-30, 3.4e38, math.inf], np.float32)
    up, down = c.empty((len(x),), f32), c.empty((len(x),), f32)
    mk.round_far_digits.launch(c, CubeCount(1), CubeDim(64), c.tensor(x), up, down)
    scale = np.float32(1e38)
    with np.errstate(over="ignore", invalid="ignore"):
        s_up = x * scale
        want_up = np.where(np.isfinite(s_up), np.rint(s_up) / scale, x)
        s_down = x / scale
        want_down = np.where(np.isfinite(s_down), np.rint(s_down) * scale, x)
    np.testing.assert_array_equal(up.numpy(), want_up)
    assert up.numpy()[0] == 1.5
    if c.runtime == "wgpu" and "llvmpipe" not in str(c.device).lower():
        return  # NVIDIA folds the scaled division into x * flushed 1e-38 (LANGUAGE.md)
    np.testing.assert_array_equal(down.numpy(), want_down)
    assert down.numpy()[2] == np.float32(3e38)
