"""f32 bodies of the math functions WGSL (and Metal) lack or compute imprecisely: erf,
erfc, lgamma, tgamma, cbrt, expm1, log1p, log10, asinh/acosh/atanh, remainder,
nextafter, copysign, ldexp, frexp's exponent, isfinite, hypot, and atan2 (WGSL only).

Each body is written once, in WGSL; `msl_text` rewrites it into MSL (the two languages
differ here only in declarations, casts, bit casts and the `metal::` prefix), so the WGSL
prelude and the Metal generator run the same algorithm. Every helper is named
`cube_<name>_f32`; half types call it through f32.

Accuracy (docs/LANGUAGE.md, Math) rests on exact steps, not on the driver's `log`:
the logarithms reduce x to m * 2^k with m in [sqrt(1/2), sqrt(2)) from the bits and
evaluate log(1 + f) = f - (f²/2 - s (f²/2 + R(s²))), s = f / (2 + f), with R the atanh
series; erfc is exp(-x²) times a polynomial fitted to erfc(x) exp(x²) (least squares on
Chebyshev nodes, in x on [0.5, 2] and in 1/x on [2, 10.1]), where exp(-x²) is split as
exp(-h²) exp(-(x - h)(x + h)) with h = x less its low 12 bits (h² is exact), and exp
itself is Cody-Waite reduction, a Taylor polynomial and ldexp (WGSL's exp drifted by 28
ulp at x = 70 on llvmpipe); lgamma is a fitted polynomial of lgamma(1 + u) / u or
lgamma(2 + u) / u near 1 and 2, moved there by the recurrence, with Stirling's series
from 8 on and reflection below 0; tgamma a fitted polynomial of gamma on [1, 2] and the
recurrence (reflection below -20). The coefficients were fitted in double precision
against mpmath and rounded to f32; their text here is the shortest that round-trips.

WGSL's `/` is accurate (2.5 ulp) only for a divisor of magnitude in [2^-126, 2^126], and
NVIDIA's Vulkan driver computes it as x * (1/y) with a subnormal 1/y flushed to 0: every
division here has a divisor proven inside that range for all inputs, or scales its
operands by a power of two first (hypot, atan2, tgamma); tests/test_wgsl_division.py
checks each one against that model of the division.
"""
from __future__ import annotations

import re

from ..ir.batched_dataclass import dataclass  # (cheap to create)

# float constants written as f32 literals (shortest round-trip text)
_NAN = "bitcast<f32>(0x7fc00000u)"
_INF = "bitcast<f32>(0x7f800000u)"
_LN2_HI = "0.69314575f"  # 15 significant bits: k * LN2_HI is exact for |k| < 512
_LN2_LO = "1.4286068e-06f"

_ERF_P = ("1.1283791f", "-0.37612626f", "0.11283582f", "-0.026853692f", "0.005188099f",
          "-0.00080081896f", "7.847259e-05f")
_ERFC_NEAR = ("0.36782292f", "-0.20882188f", "0.1067956f", "-0.05021826f", "0.022011122f",
              "-0.009081708f", "0.0035549703f", "-0.0013257122f", "0.00046758438f",
              "-0.000162168f", "6.396802e-05f", "-1.9594008e-05f")
_ERFC_FAR = ("0.5417005f", "-0.13446535f", "-0.1358959f", "0.20826201f", "-0.08119066f",
             "-0.16188362f", "0.34558266f", "-0.18573233f", "-0.29018226f")
_LGAMMA1 = ("-0.5772157f", "0.822467f", "-0.4006856f", "0.27058077f", "-0.20738782f",
            "0.16955791f", "-0.14392383f", "0.12561974f", "-0.11453438f", "0.09388084f",
            "-0.055331696f", "0.19511625f", "-0.1663341f", "-0.59325653f", "-0.7832667f")
_LGAMMA2 = ("0.42278433f", "0.32246703f", "-0.0673523f", "0.02058081f", "-0.007385553f",
            "0.0028904935f", "-0.0011927349f", "0.00050988485f", "-0.00022318913f",
            "9.809724e-05f", "-4.5571916e-05f", "2.4610743e-05f", "-5.555244e-06f",
            "-7.4647545e-08f", "-8.514984e-06f")
_SINPI = ("3.1415927f", "-5.1677127f", "2.5501633f", "-0.59925133f", "0.08204643f",
          "-0.007022081f")
_TGAMMA1 = ("0.88622695f", "0.0323384f", "0.41481343f", "-0.10729523f", "0.144646f",
            "-0.07750957f", "0.05859519f", "-0.038184188f", "0.026006607f", "-0.016044009f",
            "0.010567323f", "-0.011208378f", "0.00770419f")


def _horner(var: str, coefs: tuple[str, ...]) -> str:
    """c0 + var * (c1 + var * (...)) as text."""
    text = coefs[-1]
    for c in reversed(coefs[:-1]):
        text = f"{c} + {var} * ({text})"
    return text


@dataclass(frozen=True)
class FloatHelper:
    params: tuple[tuple[str, str], ...]  # (name, type), "F" for the float type
    result: str  # "F", "i32" or "bool"
    body: str  # WGSL statements of the f32 version
    deps: tuple[str, ...] = ()  # helpers (of this table, or isnan/isinf/fmod) it calls


def _h(params: str, result: str, body: str, *deps: str) -> FloatHelper:
    ps = tuple(tuple(p.split(":")) for p in params.split(",")) if params else ()
    return FloatHelper(tuple((a.strip(), b.strip()) for a, b in ps), result,
                       body.strip("\n"), deps)


HELPERS: dict[str, FloatHelper] = {
    "isfinite": _h("x: F", "bool", """
    return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;"""),
    "copysign": _h("x: F, y: F", "F", """
    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));"""),
    "frexp_exp": _h("x: F", "i32", """
    let b = bitcast<u32>(x) & 0x7fffffffu;
    let e = i32(b >> 23u);
    if (b == 0u || e == 255) { return 0; }
    if (e == 0) { return i32(32u - countLeadingZeros(b)) - 149; }
    return e - 126;"""),
    # on the bits alone (a driver may flush a subnormal operand of a float operation, or
    # fold a chain of constant scalings into one factor that underflows); a subnormal
    # result by one rounding multiplication
    "ldexp": _h("x: F, e: i32", "F", """
    let b = bitcast<u32>(x);
    let sign = b & 0x80000000u;
    let mag = b & 0x7fffffffu;
    if (mag == 0u || mag >= 0x7f800000u) { return x; }
    var field = i32(mag >> 23u);
    var mant = mag & 0x007fffffu;
    if (field == 0) {
        let s = countLeadingZeros(mant) - 8u;
        mant = (mant << s) & 0x007fffffu;
        field = 1 - i32(s);
    }
    let t = field + clamp(e, -300, 300);
    if (t >= 255) { return bitcast<f32>(sign | 0x7f800000u); }
    if (t >= 1) { return bitcast<f32>(sign | (u32(t) << 23u) | mant); }
    if (t < -24) { return bitcast<f32>(sign); }
    return bitcast<f32>(sign | (u32(t + 126) << 23u) | mant) * 1.1754944e-38f;"""),
    "nextafter": _h("x: F, y: F", "F", f"""
    if (cube_isnan_f32(x) || cube_isnan_f32(y)) {{ return {_NAN}; }}
    if (x == y) {{ return y; }}
    if (x == 0.0f) {{ return cube_copysign_f32(bitcast<f32>(1u), y); }}
    let b = bitcast<u32>(x);
    return bitcast<f32>(select(b - 1u, b + 1u, (x < y) == (x > 0.0f)));""",
                    "isnan", "copysign"),
    # the quotient's parity comes from fmod by 2|y| (exact), so halfway cases go to even
    "remainder": _h("x: F, y: F", "F", f"""
    let ax = abs(x);
    let ay = abs(y);
    if (cube_isnan_f32(x) || cube_isnan_f32(y) || cube_isinf_f32(x) || ay == 0.0f) {{
        return {_NAN};
    }}
    if (cube_isinf_f32(y)) {{ return x; }}
    var r = ax;
    var odd = false;
    if (ay < 1.7014118e+38f) {{
        r = cube_fmod_f32(ax, ay + ay);
        if (r >= ay) {{ r = r - ay; odd = true; }}
    }} else if (ax >= ay) {{
        r = ax - ay;
        odd = true;
    }}
    if (r > ay - r || (r == ay - r && odd)) {{ r = r - ay; }}
    return cube_copysign_f32(1.0f, x) * r;""", "isnan", "isinf", "fmod", "copysign"),
    # scaled by the larger operand: no overflow or underflow in the squares
    "hypot": _h("x: F, y: F", "F", f"""
    let a = abs(x);
    let b = abs(y);
    if (cube_isinf_f32(a) || cube_isinf_f32(b)) {{ return {_INF}; }}
    if (cube_isnan_f32(a) || cube_isnan_f32(b)) {{ return {_NAN}; }}
    var m = select(b, a, a > b);
    var n = select(a, b, a > b);
    if (m == 0.0f) {{ return 0.0f; }}
    // WGSL's division is accurate only for divisors in [2^-126, 2^126] (NVIDIA's driver
    // gave hypot(3e38, 1e38) = 3e38): bring m there by a power of two, exact both ways
    var s = 1.0f;
    if (m > 1.0e37f) {{ m = m * 5.421011e-20f; n = n * 5.421011e-20f; s = 1.8446744e19f; }}
    else if (m < 1.0e-30f) {{ m = m * 1.8446744e19f; n = n * 1.8446744e19f; s = 5.421011e-20f; }}
    let r = n / m;
    return (m * sqrt(1.0f + r * r)) * s;""", "isinf", "isnan"),
    # WGSL's atan2 divides one operand by the other (Mesa: min / max), accurately only
    # for a divisor in [2^-126, 2^126], and leaves zeros and infinities to the driver
    # (llvmpipe gives atan2(0, -0) = 3pi/4): those follow C here (an infinity counts as
    # 1, the other operand then as a signed 0), and when the larger magnitude is beyond
    # 2^100 or below 2^-100 both operands are scaled by 2^-64 (2^64, on the bits, so that
    # subnormals count), which leaves the angle as it is
    "atan2": _h("y: F, x: F", "F", f"""
    if (cube_isnan_f32(y) || cube_isnan_f32(x)) {{ return {_NAN}; }}
    var a = y;
    var b = x;
    if (cube_isinf_f32(y) || cube_isinf_f32(x)) {{
        a = cube_copysign_f32(select(0.0f, 1.0f, cube_isinf_f32(y)), y);
        b = cube_copysign_f32(select(0.0f, 1.0f, cube_isinf_f32(x)), x);
    }}
    if ((bitcast<u32>(a) & 0x7fffffffu) == 0u) {{
        return cube_copysign_f32(select(0.0f, 3.1415927f, bitcast<u32>(b) >= 0x80000000u), a);
    }}
    let m = max(abs(a), abs(b));
    if (m > 1.2676506e30f) {{ return atan2(a * 5.421011e-20f, b * 5.421011e-20f); }}
    if (m < 7.888609e-31f) {{ return atan2(cube_ldexp_f32(a, 64), cube_ldexp_f32(b, 64)); }}
    return atan2(a, b);""", "isnan", "isinf", "copysign", "ldexp"),
    "log1p_kernel": _h("f: F", "F", f"""
    let s = f / (2.0f + f);
    let z = s * s;
    let r = z * ({_horner("z", ("0.6666667f", "0.4f", "0.2857143f", "0.22222222f",
                                  "0.18181819f"))});
    let hfsq = 0.5f * f * f;
    return f - (hfsq - s * (hfsq + r));"""),
    "log": _h("x: F", "F", f"""
    if (!(x > 0.0f)) {{ return select({_NAN}, -{_INF}, x == 0.0f); }}
    if (cube_isinf_f32(x)) {{ return x; }}
    var b = bitcast<u32>(x);
    var k = 0;
    if (b < 0x00800000u) {{ b = bitcast<u32>(x * 16777216.0f); k = -24; }}
    b = b + (0x3f800000u - 0x3f3504f3u);
    k = k + i32(b >> 23u) - 127;
    let m = bitcast<f32>((b & 0x007fffffu) + 0x3f3504f3u);
    let dk = f32(k);
    return dk * {_LN2_HI} + (cube_log1p_kernel_f32(m - 1.0f) + dk * {_LN2_LO});""",
               "isinf", "log1p_kernel"),
    "log1p": _h("x: F", "F", f"""
    if (!(x > -1.0f)) {{ return select({_NAN}, -{_INF}, x == -1.0f); }}
    if (cube_isinf_f32(x)) {{ return x; }}
    if (x >= -0.29289323f && x < 0.41421357f) {{ return cube_log1p_kernel_f32(x); }}
    let u = 1.0f + x;
    let b = bitcast<u32>(u) + (0x3f800000u - 0x3f3504f3u);
    let k = i32(b >> 23u) - 127;
    let m = bitcast<f32>((b & 0x007fffffu) + 0x3f3504f3u);
    var c = 0.0f;
    if (k < 25) {{ c = select(x - (u - 1.0f), 1.0f - (u - x), k >= 2) / u; }}
    let dk = f32(k);
    return dk * {_LN2_HI} + (cube_log1p_kernel_f32(m - 1.0f) + (dk * {_LN2_LO} + c));""",
                 "isinf", "log1p_kernel"),
    "log10": _h("x: F", "F", """
    return cube_log_f32(x) * 0.4342945f;""", "log"),
    "asinh": _h("x: F", "F", """
    let a = abs(x);
    var r = 0.0f;
    if (a > 4096.0f) {
        r = cube_log_f32(a) + 0.6931472f;
    } else {
        r = cube_log1p_f32(a + a * a / (1.0f + sqrt(1.0f + a * a)));
    }
    return cube_copysign_f32(r, x);""", "log", "log1p", "copysign"),
    "acosh": _h("x: F", "F", f"""
    if (!(x >= 1.0f)) {{ return {_NAN}; }}
    if (x > 4096.0f) {{ return cube_log_f32(x) + 0.6931472f; }}
    let t = x - 1.0f;
    return cube_log1p_f32(t + sqrt(t * (t + 2.0f)));""", "log", "log1p"),
    "atanh": _h("x: F", "F", f"""
    let a = abs(x);
    if (!(a < 1.0f)) {{ return select({_NAN}, cube_copysign_f32({_INF}, x), a == 1.0f); }}
    return cube_copysign_f32(0.5f * cube_log1p_f32((a + a) / (1.0f - a)), x);""",
                 "log1p", "copysign"),
    # 2^k exp(r), r = x - k ln2 (two-part ln2: k * LN2_HI is exact), exp(r) by Taylor to
    # r^8 (|r| <= 0.35), 2^k by ldexp, which rounds once (also into the subnormals)
    "exp_acc": _h("x: F", "F", f"""
    if (cube_isnan_f32(x)) {{ return x; }}
    if (x > 88.72284f) {{ return {_INF}; }}
    if (x < -104.0f) {{ return 0.0f; }}
    let k = floor(x * 1.442695f + 0.5f);
    let r = (x - k * {_LN2_HI}) - k * {_LN2_LO};
    let p = {_horner("r", ("1.0f", "1.0f", "0.5f", "0.16666667f", "0.041666668f",
                           "0.008333334f", "0.0013888889f", "0.0001984127f",
                           "2.4801588e-05f"))};
    return cube_ldexp_f32(p, i32(k));""", "isnan", "ldexp"),
    "expm1_small": _h("x: F", "F", f"""
    return x * ({_horner("x", ("1.0f", "0.5f", "0.16666667f", "0.041666668f",
                                "0.008333334f", "0.0013888889f", "0.0001984127f",
                                "2.4801588e-05f", "2.7557319e-06f", "2.755732e-07f"))});"""),
    # expm1(x) = e (e + 2) with e = expm1(x / 2) keeps |x| < 1 off exp(x) - 1
    "expm1": _h("x: F", "F", """
    let a = abs(x);
    if (a <= 0.5f) { return cube_expm1_small_f32(x); }
    if (a < 1.0f) {
        let h = cube_expm1_small_f32(0.5f * x);
        return h * (h + 2.0f);
    }
    return cube_exp_acc_f32(x) - 1.0f;""", "expm1_small", "exp_acc"),
    # a first guess from exp2/log2, then two Newton steps (subnormals scaled by 2^24)
    "cbrt": _h("x: F", "F", """
    var a = abs(x);
    if (a == 0.0f || !cube_isfinite_f32(a)) { return x; }
    var scale = 1.0f;
    if (a < 1.1754944e-38f) { a = cube_ldexp_f32(a, 24); scale = 0.00390625f; }
    var r = exp2(log2(a) * 0.33333334f);
    r = r - (r - a / (r * r)) * 0.33333334f;
    r = r - (r - a / (r * r)) * 0.33333334f;
    return cube_copysign_f32(r * scale, x);""", "isfinite", "copysign", "ldexp"),
    # erfc(a) for a in [0.5, 10.1]
    "erfc_tail": _h("a: F", "F", f"""
    let h = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
    let lo = cube_exp_acc_f32(-(a - h) * (a + h));
    if (a < 2.0f) {{
        let u = a - 1.25f;
        return cube_exp_acc_f32(-h * h) * (lo * ({_horner("u", _ERFC_NEAR)}));
    }}
    let t = 1.0f / a;
    let u = t - 0.2995f;
    return cube_exp_acc_f32(-h * h) * (lo * t * ({_horner("u", _ERFC_FAR)}));""", "exp_acc"),
    "erf": _h("x: F", "F", f"""
    let a = abs(x);
    if (a < 1.0f) {{
        let z = x * x;
        return x * ({_horner("z", _ERF_P)});
    }}
    if (a >= 4.0f) {{ return cube_copysign_f32(1.0f, x); }}
    return cube_copysign_f32(1.0f - cube_erfc_tail_f32(a), x);""", "erfc_tail", "copysign"),
    "erfc": _h("x: F", "F", """
    if (cube_isnan_f32(x)) { return x; }
    let a = abs(x);
    if (a < 0.5f) { return 1.0f - cube_erf_f32(x); }
    var r = 0.0f;
    if (a < 10.1f) { r = cube_erfc_tail_f32(a); }
    return select(r, 2.0f - r, x < 0.0f);""", "isnan", "erf", "erfc_tail"),
    # sin(pi x) with the argument reduced exactly (x mod 2 is exact for |x| >= 1) and a
    # fitted polynomial in r² (WGSL's sin may be off by 2^-11 absolutely)
    "sinpi": _h("x: F", "F", f"""
    let a = abs(x);
    var r = a - 2.0f * floor(0.5f * a);
    var s = cube_copysign_f32(1.0f, x);
    if (r >= 1.0f) {{ r = r - 1.0f; s = -s; }}
    if (r > 0.5f) {{ r = 1.0f - r; }}
    let z = r * r;
    return s * (r * ({_horner("z", _SINPI)}));""", "copysign"),
    # lgamma(1 + u) for u in [-0.5, 0.25], lgamma(2 + u) for u in [-0.75, 0.5]
    "lgamma1": _h("u: F", "F", f"""
    return u * ({_horner("u", _LGAMMA1)});"""),
    "lgamma2": _h("u: F", "F", f"""
    return u * ({_horner("u", _LGAMMA2)});"""),
    # x > 0, finite
    "lgamma_pos": _h("x: F", "F", """
    if (x < 0.25f) { return cube_lgamma1_f32(x) - cube_log_f32(x); }
    if (x < 0.5f) { return cube_lgamma2_f32(x) - cube_log1p_f32(x) - cube_log_f32(x); }
    if (x < 1.25f) { return cube_lgamma1_f32(x - 1.0f); }
    if (x < 2.5f) { return cube_lgamma2_f32(x - 2.0f); }
    if (x < 8.0f) {
        var y = x;
        var p = 1.0f;
        while (y >= 2.5f) { y = y - 1.0f; p = p * y; }
        return cube_lgamma2_f32(y - 2.0f) + cube_log_f32(p);
    }
    // 1 / x only below 1e30 (WGSL divides accurately only by [2^-126, 2^126]); above,
    // the series' w is far below an ulp of the result, which overflows from 4.1e36
    let r = 1.0f / select(x, 1.0e30f, x > 1.0e30f);
    let z = r * r;
    let w = r * (0.083333336f - z * (0.0027777778f - z * (0.0007936508f - z * 0.0005952381f)));
    return (x - 0.5f) * (cube_log_f32(x) - 1.0f) + (w + 0.41893853f);""",
                      "lgamma1", "lgamma2", "log1p", "log"),
    "lgamma": _h("x: F", "F", f"""
    if (cube_isnan_f32(x)) {{ return x; }}
    if (cube_isinf_f32(x)) {{ return {_INF}; }}
    if (x > 0.0f) {{ return cube_lgamma_pos_f32(x); }}
    if (x == floor(x)) {{ return {_INF}; }}
    if (x > -1e-20f) {{ return -cube_log_f32(-x); }}
    return 1.1447299f - cube_log_f32(abs(cube_sinpi_f32(x))) - cube_lgamma_pos_f32(1.0f - x);""",
                  "isnan", "isinf", "lgamma_pos", "log", "sinpi"),
    "tgamma1": _h("x: F", "F", f"""
    let u = x - 1.5f;
    return {_horner("u", _TGAMMA1)};"""),
    # x >= 1: the recurrence down to [1, 2]
    "tgamma_ge1": _h("x: F", "F", f"""
    if (x > 35.0401f) {{ return {_INF}; }}
    var y = x;
    var p = 1.0f;
    while (y > 2.0f) {{ y = y - 1.0f; p = p * y; }}
    return p * cube_tgamma1_f32(y);""", "tgamma1"),
    "tgamma": _h("x: F", "F", f"""
    if (cube_isnan_f32(x)) {{ return x; }}
    if (x == 0.0f) {{ return cube_copysign_f32({_INF}, x); }}
    if (x < 0.0f && x == floor(x)) {{ return {_NAN}; }}
    if (x >= 1.0f) {{ return cube_tgamma_ge1_f32(x); }}
    if (abs(x) < 1.1754944e-38f) {{
        // gamma(x) = 1/x - 0.577 + O(x): 1/x to within an ulp; a subnormal divisor is
        // outside WGSL's range, so divide by x * 2^24 (on the bits) and scale back
        return (1.0f / cube_ldexp_f32(x, 24)) * 16777216.0f;
    }}
    if (x > -20.0f) {{
        var y = x;
        var q = 1.0f;
        while (y < 1.0f) {{ q = q * y; y = y + 1.0f; }}
        return cube_tgamma1_f32(y) / q;
    }}
    // reflection: pi / (sin(pi x) gamma(1 - x)) with gamma(1 - x) carried times 2^-64:
    // it overflows f32 from 1 - x = 35.04, while the result stays normal down to -37.9
    // next to the poles, and the divisor, |sin(pi x)| >= 2^-18 times [0.13, 2^96], is
    // then inside WGSL's range; below -40 every result is subnormal
    if (x < -40.0f) {{ return cube_copysign_f32(0.0f, cube_sinpi_f32(x)); }}
    var y = 1.0f - x;
    var g = 5.421011e-20f;
    while (y > 2.0f) {{ y = y - 1.0f; g = g * y; }}
    g = g * cube_tgamma1_f32(y);
    return (3.1415927f / (cube_sinpi_f32(x) * g)) * 5.421011e-20f;""",
                  "isnan", "copysign", "ldexp", "tgamma_ge1", "tgamma1", "sinpi"),
}

_WGSL_TYPES = {"F": "f32", "i32": "i32", "bool": "bool"}


def wgsl_text(name: str, ty: str = "f32") -> str:
    """The WGSL function `cube_<name>_<ty>`: the body for f32, a call through f32 for f16."""
    h = HELPERS[name]
    types = dict(_WGSL_TYPES, F=ty)
    params = ", ".join(f"{p}: {types[t]}" for p, t in h.params)
    head = f"fn cube_{name}_{ty}({params}) -> {types[h.result]} {{\n"
    if ty == "f32":
        return f"{head}{h.body}\n}}"
    args = ", ".join(f"f32({p})" if t == "F" else p for p, t in h.params)
    call = f"cube_{name}_f32({args})"
    return f"{head}    return {ty}({call});\n}}" if h.result == "F" else \
        f"{head}    return {call};\n}}"


def wgsl_deps(name: str, ty: str = "f32") -> list[tuple[str, str]]:
    """The prelude helpers `cube_<name>_<ty>` calls, as (name, type) pairs."""
    if ty != "f32":
        return [(name, "f32")]
    return [(d, "f32") for d in HELPERS[name].deps]


# WGSL -> MSL: the builtins the bodies call, and the spellings that differ
_MSL_CALLS = ("exp2", "log2", "sqrt", "floor", "clamp", "min", "max",
              "select")
_MSL_RENAMES = [
    (re.compile(r"\bbitcast<f32>\("), "as_type<float>("),
    (re.compile(r"\bbitcast<u32>\("), "as_type<uint>("),
    (re.compile(r"\bcountLeadingZeros\("), "metal::clz("),
    (re.compile(r"\babs\("), "metal::fabs("),
    (re.compile(r"\bcube_isnan_f32\("), "metal::isnan("),
    (re.compile(r"\bcube_isinf_f32\("), "metal::isinf("),
    (re.compile(r"\bcube_fmod_f32\("), "metal::precise::fmod("),
    (re.compile(r"\b(" + "|".join(_MSL_CALLS) + r")\("), r"metal::\1("),
    (re.compile(r"\blet "), "const auto "),
    (re.compile(r"\bvar "), "auto "),
    (re.compile(r"\bf32\("), "float("),
    (re.compile(r"\bi32\("), "int("),
    (re.compile(r"\bu32\("), "uint("),
]
_MSL_TYPES = {"F": "float", "i32": "int", "bool": "bool"}
MSL_BUILTIN_DEPS = frozenset({"isnan", "isinf", "fmod"})  # spelled as metal:: calls


def msl_text(name: str) -> str:
    """The MSL function `cube_<name>_f32` ({fn} stands for the dialect's qualifiers)."""
    h = HELPERS[name]
    body = h.body
    for pattern, repl in _MSL_RENAMES:
        body = pattern.sub(repl, body)
    params = ", ".join(f"{_MSL_TYPES[t]} {p}" for p, t in h.params)
    return f"{{fn}} {_MSL_TYPES[h.result]} cube_{name}_f32({params}) {{\n{body}\n}}"
