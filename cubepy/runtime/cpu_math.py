"""The cpu runtime's math functions numpy lacks (erfc, lgamma, tgamma, remainder) or
spells differently (ldexp, frexp's exponent, degrees, radians): each takes numpy arrays
or scalars and keeps the float type of its first argument. The special values are C's
(and the other targets'), where Python's math raises: lgamma at a pole is inf, tgamma(±0)
is ±inf, tgamma of a negative integer or -inf is NaN, remainder(inf, y) and
remainder(x, 0) are NaN."""
from __future__ import annotations

import math

import numpy as np


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def _tgamma(x: float) -> float:
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf
    except ValueError:  # a pole: 0 (signed infinity) or a negative integer (NaN)
        return math.copysign(math.inf, x) if x == 0 else math.nan


def _remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:
        return math.nan


def _elementwise(fn, nargs: int):
    """fn applied in float64 to each element, the result in the first argument's type."""
    ufunc = np.frompyfunc(fn, nargs, 1)

    def apply(x, *rest):
        dtype = np.asarray(x).dtype
        args = [np.asarray(a, np.float64) for a in (x, *rest)]
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            r = np.asarray(ufunc(*args), np.float64).astype(dtype)
        return r if r.ndim else r[()]
    return apply


erfc = _elementwise(math.erfc, 1)
lgamma = _elementwise(_lgamma, 1)
tgamma = _elementwise(_tgamma, 1)
remainder = _elementwise(_remainder, 2)


def degrees(x):
    """x * (180 / pi) with the factor rounded to x's type, as the GPU targets compute it."""
    return x * np.asarray(x).dtype.type(180.0 / math.pi)


def radians(x):
    return x * np.asarray(x).dtype.type(math.pi / 180.0)


def ldexp(x, e):
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(x, np.asarray(e, np.int32))


def frexp_exp(x):
    """frexp's exponent as i32 (0 for 0, inf and NaN)."""
    e = np.frexp(x)[1].astype(np.int32)
    return e if np.ndim(e) else e[()]
