"""Kernels of tests/test_lang_math.py (cubepy reads a kernel's source from its file)."""
import math

import cubepy
from cubepy import ABSOLUTE_POS, Float, Tensor, cube, i32


@cube(launch=True)
def every_math_function(x: Tensor[Float], y: Tensor[Float], e: Tensor[i32],
                        out: Tensor[Float], ie: Tensor[i32]):
    i = ABSOLUTE_POS
    a = x[i]
    b = y[i]
    s = math.asinh(a) + math.acosh(a) + math.atanh(a) + math.expm1(a) + math.log1p(a)
    s += math.log10(a) + math.log2(a) + math.exp2(a) + math.cbrt(a) + math.hypot(a, b)
    s += math.copysign(a, b) + math.fmod(a, b) + math.remainder(a, b) + math.fabs(a)
    s += math.erf(a) + math.erfc(a) + math.lgamma(a) + math.gamma(a)
    s += cubepy.math.tgamma(a) + math.degrees(a) + math.radians(a)
    s += math.nextafter(a, b) + math.ldexp(a, e[i])
    m, k = math.frexp(a)
    f, w = math.modf(a)
    s += m + f + w + round(a, 2) + round(a, -1) + round(a) + cubepy.clamp(a, 0.0, 1.0)
    s += float("inf") + float("-inf") + float("nan")
    if math.isfinite(a):
        s += Float(1.0)
    out[i] = s
    ie[i] = k + cubepy.clamp(e[i], -3, 3)
