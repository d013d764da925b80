"""Reference points, Python's math as the reference, and ulp errors for
tests/test_lang_math.py. ULP holds the bounds docs/LANGUAGE.md's Math table states
(f32, in ulp of the exact result)."""
from __future__ import annotations

import math

import numpy as np

# function -> runtime -> ulp bound (f32). cuda: the CUDA Programming Guide's bound plus
# 0.5 (the guide counts from the correctly rounded result, these from the exact one).
# wgpu: what the helpers keep on any WGSL driver (WGSL's division and sqrt may be off
# by 2.5 ulp, which llvmpipe's are not: its largest errors are in LLVMPIPE_MEASURED).
ULP = {
    "asinh": {"cpu": 1, "wgpu": 3, "cuda": 3.5},
    "acosh": {"cpu": 2, "wgpu": 3, "cuda": 4.5},  # cpu: numpy's f32 arccosh(1.11525) 1.03
    "atanh": {"cpu": 2, "wgpu": 4, "cuda": 3.5},
    "expm1": {"cpu": 2, "wgpu": 3, "cuda": 1.5},
    "log1p": {"cpu": 2, "wgpu": 3, "cuda": 1.5},
    "log10": {"cpu": 2, "wgpu": 3, "cuda": 2.5},
    "log2": {"cpu": 2, "wgpu": 3, "cuda": 1.5},
    "exp2": {"cpu": 1, "wgpu": 3, "cuda": 2.5},  # wgpu: 3 + 2 |x| (WGSL's table)
    "cbrt": {"cpu": 2, "wgpu": 2, "cuda": 1.5},
    "fabs": {"cpu": 0, "wgpu": 0, "cuda": 0},
    "erf": {"cpu": 1, "wgpu": 3, "cuda": 2.5},
    "erfc": {"cpu": 1, "wgpu": 5, "cuda": 4.5},
    "lgamma": {"cpu": 1, "wgpu": 6, "cuda": 6.5},
    "gamma": {"cpu": 1, "wgpu": 10, "cuda": 5.5},
    "degrees": {"cpu": 1, "wgpu": 1, "cuda": 1},
    "radians": {"cpu": 1, "wgpu": 1, "cuda": 1},
    "hypot": {"cpu": 1, "wgpu": 4, "cuda": 3.5},
}
# the largest errors tests/test_lang_math.py saw on llvmpipe (docs/LANGUAGE.md's table)
LLVMPIPE_MEASURED = {"asinh": 1.2, "acosh": 1.7, "atanh": 2.2, "expm1": 1.8, "log1p": 1.9,
                     "log10": 1.6, "exp2": 2.6, "cbrt": 0.7, "erf": 2.2, "erfc": 3.4,
                     "lgamma": 4.6, "gamma": 6.1, "hypot": 1.6}
# exact on every runtime
EXACT_BINARY = ("copysign", "fmod", "remainder", "nextafter")
# where a bound in ulp means nothing (lgamma crosses zero twice in it): absolute error
LGAMMA_ABS_INTERVAL = (-10.001, -2.264)
LGAMMA_ABS_ERROR = 2e-5

_RNG = np.random.default_rng(20261201)
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 1e-45, -1e-45, 1e-40, 1.2e-38, 3e38, -3e38,
           math.inf, -math.inf, math.nan]


def _lin(lo: float, hi: float, n: int = 60) -> np.ndarray:
    return _RNG.uniform(lo, hi, n)


def _log(lo: float, hi: float, n: int = 60) -> np.ndarray:
    return np.exp(_RNG.uniform(math.log(lo), math.log(hi), n))


DOMAINS = {
    "asinh": [_lin(-10, 10), _log(1e-8, 1e30), -_log(1e-8, 1e30)],
    "acosh": [_lin(1, 3), _log(1, 1e30)],
    "atanh": [_lin(-1, 1), _log(1e-8, 1)],
    "expm1": [_lin(-2, 2), _log(1e-8, 88), -_log(1e-8, 100)],
    "log1p": [_lin(-1, 2), _log(1e-8, 1e30), -_log(1e-8, 0.999)],
    "log10": [_lin(0.5, 2), _log(1e-30, 1e30)],
    "log2": [_lin(0.5, 2), _log(1e-30, 1e30)],
    "exp2": [_lin(-10, 10), _lin(-120, 120)],
    "cbrt": [_lin(-10, 10), _log(1e-38, 1e38), -_log(1e-45, 1e-38, 20)],
    "fabs": [_lin(-10, 10)],
    "erf": [_lin(-5, 5, 120), _log(1e-8, 4)],
    "erfc": [_lin(-5, 10.1, 120), _log(0.5, 10)],
    "lgamma": [_lin(0, 10, 120), _log(1e-6, 1e30), _lin(-30, 0, 120), _lin(1.3, 1.6)],
    "gamma": [_lin(0, 35, 120), _log(1e-6, 35), _lin(-30, 0, 120), _lin(0.9, 2.1)],
    "degrees": [_lin(-10, 10)],
    "radians": [_lin(-1000, 1000)],
}


def points(name: str) -> np.ndarray:
    """A few hundred f32 inputs of `name`: its domain, wide ranges and the edge values."""
    return np.concatenate(DOMAINS[name] + [np.array(SPECIAL)]).astype(np.float32)


def reference(name: str, *args: float) -> float:
    """Python's math in double precision; where Python raises, C's special value."""
    fn = getattr(math, name)
    try:
        return fn(*args)
    except OverflowError:
        return math.inf
    except ValueError:  # a pole gives C's infinity, the rest of the domain errors NaN
        x = args[0]
        if name == "lgamma":
            return math.inf
        if name == "atanh" and abs(x) == 1:
            return math.copysign(math.inf, x)
        if (name == "log1p" and x == -1) or (name in ("log2", "log10") and x == 0):
            return -math.inf
        if name == "gamma" and args[0] == 0:
            return math.copysign(math.inf, args[0])
        return math.nan


def ulp_error(got: float, want: float, flush_subnormals: bool = False) -> float:
    """|got - want| in units of the f32 spacing at `want` (0 or inf for special values)."""
    got = float(got)
    if math.isnan(want):
        return 0.0 if math.isnan(got) else math.inf
    if abs(want) >= 2.0 ** 128 * (1 - 2.0 ** -25):  # rounds to an infinity in f32
        return 0.0 if got == math.copysign(math.inf, want) else math.inf
    if math.isinf(got) or math.isnan(got):
        return math.inf
    if flush_subnormals and abs(want) < 2.0 ** -126 and got == 0.0:
        return 0.0
    spacing = 2.0 ** (max(math.frexp(want)[1], -125) - 24) if want else 2.0 ** -149
    return abs(got - want) / spacing
