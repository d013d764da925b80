"""Kernels of tests/test_lang_math.py (cubepy reads a kernel's source from its file)."""
import math

import cubepy
from cubepy import ABSOLUTE_POS, Float, Tensor, cube, f32, i32, u32


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


@cube(launch=True)
def unary(x: Tensor[Float], out: Tensor[Float], fn: cubepy.Comptime[str]):
    i = ABSOLUTE_POS
    a = x[i]
    if fn == "asinh":
        out[i] = math.asinh(a)
    elif fn == "acosh":
        out[i] = math.acosh(a)
    elif fn == "atanh":
        out[i] = math.atanh(a)
    elif fn == "expm1":
        out[i] = math.expm1(a)
    elif fn == "log1p":
        out[i] = math.log1p(a)
    elif fn == "log10":
        out[i] = math.log10(a)
    elif fn == "log2":
        out[i] = math.log2(a)
    elif fn == "exp2":
        out[i] = math.exp2(a)
    elif fn == "cbrt":
        out[i] = math.cbrt(a)
    elif fn == "fabs":
        out[i] = math.fabs(a)
    elif fn == "erf":
        out[i] = math.erf(a)
    elif fn == "erfc":
        out[i] = math.erfc(a)
    elif fn == "lgamma":
        out[i] = math.lgamma(a)
    elif fn == "gamma":
        out[i] = math.gamma(a)
    elif fn == "degrees":
        out[i] = math.degrees(a)
    elif fn == "radians":
        out[i] = math.radians(a)


@cube(launch=True)
def binary(x: Tensor[Float], y: Tensor[Float], out: Tensor[Float],
           fn: cubepy.Comptime[str]):
    i = ABSOLUTE_POS
    a = x[i]
    b = y[i]
    if fn == "hypot":
        out[i] = math.hypot(a, b)
    elif fn == "copysign":
        out[i] = math.copysign(a, b)
    elif fn == "fmod":
        out[i] = math.fmod(a, b)
    elif fn == "remainder":
        out[i] = math.remainder(a, b)
    elif fn == "nextafter":
        out[i] = math.nextafter(a, b)
    elif fn == "atan2":
        out[i] = math.atan2(a, b)


@cube(launch=True)
def frexp_modf(x: Tensor[f32], m: Tensor[f32], e: Tensor[i32], f: Tensor[f32],
               w: Tensor[f32]):
    i = ABSOLUTE_POS
    mant, ex = math.frexp(x[i])
    frac, whole = cubepy.math.modf(x[i])
    m[i] = mant
    e[i] = ex
    f[i] = frac
    w[i] = whole


@cube(launch=True)
def ldexp_kernel(x: Tensor[f32], e: Tensor[i32], out: Tensor[f32]):
    i = ABSOLUTE_POS
    out[i] = math.ldexp(x[i], e[i])


@cube(launch=True)
def round_digits(x: Tensor[f32], r2: Tensor[f32], r0: Tensor[f32], rm1: Tensor[f32]):
    i = ABSOLUTE_POS
    r2[i] = round(x[i], 2)
    r0[i] = round(x[i], 0)
    rm1[i] = round(x[i], -1)


@cube(launch=True)
def clamp_kernel(xi: Tensor[i32], xu: Tensor[u32], xf: Tensor[f32], oi: Tensor[i32],
                 ou: Tensor[u32], of: Tensor[f32]):
    i = ABSOLUTE_POS
    oi[i] = cubepy.clamp(xi[i], -2, 4)
    ou[i] = cubepy.math.clamp(xu[i], 3, 6)
    if i < len(xf):
        of[i] = cubepy.clamp(xf[i], 0.0, 1.0)


@cube(launch=True)
def float_literals(out: Tensor[f32]):
    i = ABSOLUTE_POS
    if i == 0:
        out[i] = float("inf")
    elif i == 1:
        out[i] = float("-inf")
    elif i == 2:
        out[i] = float("nan")
    elif i == 3:
        out[i] = float("1.5")
    elif i == 4:
        out[i] = -math.inf
    else:
        out[i] = math.pi


@cube(launch=True)
def isfinite_kernel(x: Tensor[f32], out: Tensor[i32]):
    i = ABSOLUTE_POS
    out[i] = i32(math.isfinite(x[i]))


# misuse: each a CompileError (tests/test_lang_math.py)
@cube(launch=True)
def round_runtime_digits(x: Tensor[f32], n: i32):
    x[0] = round(x[0], n)


@cube(launch=True)
def ldexp_float_exponent(x: Tensor[f32]):
    x[0] = math.ldexp(x[0], x[1])


@cube(launch=True)
def frexp_three_names(x: Tensor[f32]):
    a, b, c = math.frexp(x[0])
    x[0] = a


@cube(launch=True)
def float_bad_text(x: Tensor[f32]):
    x[0] = float("one")


@cube(launch=True)
def lgamma_of_int(x: Tensor[i32]):
    x[0] = math.lgamma(x[1])


@cube(launch=True)
def clamp_of_bool(x: Tensor[i32]):
    x[0] = i32(cubepy.clamp(x[1] > 0, x[2] > 0, x[3] > 0))


@cube(launch=True)
def line_math(x: Tensor[cubepy.Line[f32]], out: Tensor[cubepy.Line[f32]]):
    i = ABSOLUTE_POS
    v = x[i]
    out[i] = cubepy.select(math.isfinite(v), math.erfc(v) + math.lgamma(v), v)


@cube(launch=True)
def round_far_digits(x: Tensor[f32], up: Tensor[f32], down: Tensor[f32]):
    i = ABSOLUTE_POS
    up[i] = round(x[i], 38)
    down[i] = round(x[i], -38)
