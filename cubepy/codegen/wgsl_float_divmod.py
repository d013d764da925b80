"""WGSL texts of the exact float `%` and `//` (numpy's semantics, docs/LANGUAGE.md).

WGSL has no fmod, its float `%` is x - y * trunc(x / y), and its division may be off by
2.5 ulp (Vulkan's limits), so neither can serve: a Python remainder of a large quotient
would come out wrong by whole multiples of b. Here:

- `cube_fmod_f32` is binary long division on the integer mantissas (musl's fmodf): one
  compare-and-subtract per exponent step, each exact, so at most ~280 passes run (the
  f32 exponent range, subnormals included, read from the bits so that a device which
  flushes subnormals still gets them right).
- `cube_divq_f32` is the correctly rounded quotient x / y for x a nonzero multiple of y
  (quotient >= 1/2, so no subnormal result): a 25-bit integer long division of the
  mantissas, rounded half to even, as IEEE division would give.
- `cube_mod_f32` / `cube_floordiv_f32` are numpy's npy_divmod on top of them. Nothing
  multiplies (no product a driver could fuse), special values are tested on the bits.
f16 computes in f32 and rounds once, as numpy's half does.
"""
from __future__ import annotations

_NAN = "bitcast<f32>(0x7fc00000u)"


def fmod_text(t: str) -> str:
    assert t == "f32"
    # musl's fmodf on the bits: subnormals work even where the device flushes them
    return f"""fn cube_fmod_f32(x: f32, y: f32) -> f32 {{
    let sx = bitcast<u32>(x) & 0x80000000u;
    let ax = bitcast<u32>(x) & 0x7fffffffu;
    let ay = bitcast<u32>(y) & 0x7fffffffu;
    if (ay == 0u || ax >= 0x7f800000u || ay > 0x7f800000u) {{ return {_NAN}; }}
    if (ax < ay) {{ return x; }}
    if (ax == ay) {{ return bitcast<f32>(sx); }}
    var mx = cube_mant_f32(ax);
    let my = cube_mant_f32(ay);
    var ex = cube_exp_f32(ax);
    let ey = cube_exp_f32(ay);
    for (; ex > ey; ex--) {{
        if (mx >= my) {{ mx = mx - my; }}
        if (mx == 0u) {{ return bitcast<f32>(sx); }}
        mx = mx << 1u;
    }}
    if (mx >= my) {{ mx = mx - my; }}
    if (mx == 0u) {{ return bitcast<f32>(sx); }}
    let s = countLeadingZeros(mx) - 8u;
    mx = mx << s;
    ex = ex - i32(s);
    if (ex > 0) {{ return bitcast<f32>(sx | (u32(ex) << 23u) | (mx - 0x800000u)); }}
    return bitcast<f32>(sx | (mx >> u32(1 - ex)));
}}"""


def unpack_text(t: str) -> str:
    assert t == "f32"
    # the 24-bit integer mantissa and unbiased-by-127 exponent of |x| (bits without
    # sign), subnormals normalised: |x| = mant * 2^(exp - 150)
    return """fn cube_mant_f32(a: u32) -> u32 {
    if ((a >> 23u) == 0u) { return a << (countLeadingZeros(a) - 8u); }
    return (a & 0x7fffffu) | 0x800000u;
}

fn cube_exp_f32(a: u32) -> i32 {
    if ((a >> 23u) == 0u) { return 1 - i32(countLeadingZeros(a) - 8u); }
    return i32(a >> 23u);
}"""


def divq_text(t: str) -> str:
    assert t == "f32"
    return """fn cube_divq_f32(x: f32, y: f32) -> f32 {
    let neg = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
    let ax = bitcast<u32>(x) & 0x7fffffffu;
    let ay = bitcast<u32>(y) & 0x7fffffffu;
    if (ax == 0u || ay == 0x7f800000u) { return bitcast<f32>(neg); }
    var r = cube_mant_f32(ax);
    let my = cube_mant_f32(ay);
    var e = cube_exp_f32(ax) - cube_exp_f32(ay);
    if (r < my) { r = r << 1u; e = e - 1; }
    var q = 0u;
    for (var i = 0; i < 25; i++) {
        q = q << 1u;
        if (r >= my) { r = r - my; q = q | 1u; }
        r = r << 1u;
    }
    var m = q >> 1u;
    if ((q & 1u) != 0u && (r != 0u || (m & 1u) != 0u)) { m = m + 1u; }
    if (m == 0x1000000u) { m = 0x800000u; e = e + 1; }
    if (e > 127) { return bitcast<f32>(0x7f800000u | neg); }
    return bitcast<f32>(neg | (u32(e + 127) << 23u) | (m - 0x800000u));
}"""


def mod_text(t: str) -> str:
    if t == "f16":
        return ("fn cube_mod_f16(a: f16, b: f16) -> f16 {\n"
                "    return f16(cube_mod_f32(f32(a), f32(b)));\n}")
    return """fn cube_mod_f32(a: f32, b: f32) -> f32 {
    var m = cube_fmod_f32(a, b);
    if (cube_isnan_f32(m)) { return m; }
    if (m != 0.0f) {
        if ((b < 0.0f) != (m < 0.0f)) { m = m + b; }
    } else {
        m = bitcast<f32>(bitcast<u32>(b) & 0x80000000u);
    }
    return m;
}"""


def floordiv_text(t: str) -> str:
    if t == "f16":
        return ("fn cube_floordiv_f16(a: f16, b: f16) -> f16 {\n"
                "    return f16(cube_floordiv_f32(f32(a), f32(b)));\n}")
    return f"""fn cube_floordiv_f32(a: f32, b: f32) -> f32 {{
    let sign = (bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u;
    if (cube_isnan_f32(a) || cube_isnan_f32(b)) {{ return {_NAN}; }}
    if ((bitcast<u32>(b) & 0x7fffffffu) == 0u) {{  // a / 0: +-inf, 0 / 0: nan
        if ((bitcast<u32>(a) & 0x7fffffffu) == 0u) {{ return {_NAN}; }}
        return bitcast<f32>(0x7f800000u | sign);
    }}
    if (cube_isinf_f32(a)) {{ return {_NAN}; }}
    let m = cube_fmod_f32(a, b);
    var d = cube_divq_f32(a - m, b);
    if (m != 0.0f && (b < 0.0f) != (m < 0.0f)) {{ d = d - 1.0f; }}
    if (d == 0.0f) {{ return bitcast<f32>(sign); }}
    if (cube_isinf_f32(d)) {{ return d; }}
    var f = floor(d);
    if (d - f > 0.5f) {{ f = f + 1.0f; }}
    return f;
}}"""


def deps(kind: str, t: str) -> list[tuple[str, str]]:
    """The helpers `cube_<kind>_<t>` calls, as (name, type) pairs."""
    if t == "f16":
        return [(kind, "f32")]
    if t != "f32":
        return []
    if kind == "unpack":
        return []
    if kind in ("fmod", "divq"):
        return [("unpack", "f32")]
    base = [("isnan", "f32"), ("isinf", "f32"), ("fmod", "f32")]
    return base if kind == "mod" else base + [("divq", "f32")]
