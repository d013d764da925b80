"""Helper functions the WGSL emitter adds to a shader's prelude, only when used.

Each helper implements one piece of the shared semantics (docs/LANGUAGE.md) that WGSL's
own operators do not match: Python's floor division and modulo, NaN-aware max/min,
saturating float->int casts with NaN -> 0, erf, ... Every helper is named `cube_...`,
a prefix user identifiers can never take (see names.py).

`PreludeBuilder.use(name, ty)` returns the name of the helper to call and remembers its
text; `text()` gives all used helpers in first-use order.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Callable

from ..ir.dtype_facts import int_range
from ..ir.types import dtype_from_name
from . import wgsl_float_divmod as float_divmod
from .wgsl_expr import literal


def _literals(value, names: tuple[str, ...]) -> dict[str, str]:
    """type name -> the WGSL literal of `value` in that type (wgsl_expr.literal)."""
    return {t: literal(value, dtype_from_name(t)) for t in names}


_INF = _literals(math.inf, ("f32", "f16"))  # bitcast<f32>(0x7f800000u), f16(...)
_NAN = _literals(math.nan, ("f32", "f16"))
_ZERO = _literals(0, ("f32", "f16", "i32", "u32"))
_ONE = _literals(1, ("f32", "f16", "i32", "u32"))


def _isnan(t: str) -> str:
    # Bit test rather than `x != x`, which a fast-math driver may fold to false.
    return (f"fn cube_isnan_{t}(x: {t}) -> bool {{\n"
            f"    return (bitcast<u32>(f32(x)) & 0x7fffffffu) > 0x7f800000u;\n}}")


def _isinf(t: str) -> str:
    return (f"fn cube_isinf_{t}(x: {t}) -> bool {{\n"
            f"    return (bitcast<u32>(f32(x)) & 0x7fffffffu) == 0x7f800000u;\n}}")


def _minmax(op: str, t: str) -> str:
    # The non-NaN operand wins, as on every other target.
    return (f"fn cube_{op}_{t}(a: {t}, b: {t}) -> {t} {{\n"
            f"    if (cube_isnan_{t}(a)) {{ return b; }}\n"
            f"    if (cube_isnan_{t}(b)) {{ return a; }}\n"
            f"    return {op}(a, b);\n}}")


def _floordiv(t: str) -> str:
    if t == "u32":
        return ("fn cube_floordiv_u32(a: u32, b: u32) -> u32 {\n"
                "    return select(a / b, 0u, b == 0u);\n}")
    if t == "i32":
        # WGSL: a / 0 == a, MIN / -1 == MIN (no traps). The remainder is a - q * b, not
        # `%`: NVIDIA's Vulkan driver (via wgpu 0.32) computes i32 `%` as unsigned.
        return ("fn cube_floordiv_i32(a: i32, b: i32) -> i32 {\n"
                "    if (b == 0i) { return 0i; }\n"
                "    let q = a / b;\n"
                "    let r = a - q * b;\n"
                "    return select(q, q - 1i, r != 0i && ((r < 0i) != (b < 0i)));\n}")
    return float_divmod.floordiv_text(t)


def _mod(t: str) -> str:
    if t == "u32":
        return ("fn cube_mod_u32(a: u32, b: u32) -> u32 {\n"
                "    return select(a % b, a, b == 0u);\n}")
    if t == "i32":  # a - (a / b) * b rather than `%`: see _floordiv
        return ("fn cube_mod_i32(a: i32, b: i32) -> i32 {\n"
                "    if (b == 0i) { return a; }\n"
                "    let r = a - (a / b) * b;\n"
                "    return select(r, r + b, r != 0i && ((r < 0i) != (b < 0i)));\n}")
    return float_divmod.mod_text(t)


def _pow(t: str) -> str:
    # WGSL pow is undefined for a negative base; follow C/Python for integral exponents.
    z, one = _ZERO[t], _ONE[t]
    return (f"fn cube_pow_{t}(a: {t}, b: {t}) -> {t} {{\n"
            f"    if (b == {z}) {{ return {one}; }}\n"
            f"    if (a == {z}) {{ return select({z}, {_INF[t]}, b < {z}); }}\n"
            f"    let r = pow(abs(a), b);\n"
            f"    if (a > {z}) {{ return r; }}\n"
            f"    if (b != trunc(b)) {{ return {_NAN[t]}; }}\n"
            f"    return select(r, -r, fract(b * {t}(0.5)) != {z});\n}}")


def _float_to_int(src: str, dst: str) -> str:
    # Truncate toward zero, saturate, NaN -> 0 (WGSL leaves NaN unspecified).
    x = "f32(x)" if src == "f16" else "x"
    t = dtype_from_name(dst)
    lo, hi = int_range(t)
    top = f"    if (v >= {hi + 1}.0f) {{ return {literal(hi, t)}; }}\n"
    if dst == "i32":
        body = (f"    let v = {x};\n{top}"
                f"    if (v <= {lo}.0f) {{ return {literal(lo, t)}; }}\n"
                "    if (cube_isnan_f32(v)) { return 0i; }\n"
                "    return i32(v);\n")
    else:
        body = (f"    let v = {x};\n{top}"
                "    if (!(v > -1.0f)) { return 0u; }\n"
                "    return u32(v);\n")
    return f"fn cube_{src}_to_{dst}(x: {src}) -> {dst} {{\n{body}}}"


def _runtime(t: str) -> str:
    # An identity function: a constant passed through it is no WGSL const-expression, so
    # an operation on constants that the folder left (0.0 / 0.0, sqrt(-1.0), ...) runs in
    # the shader instead of failing shader creation (naga rejects a const-expression
    # whose value is not finite).
    return f"fn cube_runtime_{t}(x: {t}) -> {t} {{\n    return x;\n}}"


# name -> (builder taking the type name, helpers it depends on as (name, type) lists)
_HELPERS = {
    "isnan": (_isnan, lambda t: []),
    "isinf": (_isinf, lambda t: []),
    "max": (lambda t: _minmax("max", t), lambda t: [("isnan", t)]),
    "min": (lambda t: _minmax("min", t), lambda t: [("isnan", t)]),
    "floordiv": (_floordiv, lambda t: float_divmod.deps("floordiv", t)),
    "mod": (_mod, lambda t: float_divmod.deps("mod", t)),
    "fmod": (float_divmod.fmod_text, lambda t: float_divmod.deps("fmod", t)),
    "divq": (float_divmod.divq_text, lambda t: float_divmod.deps("divq", t)),
    "unpack": (float_divmod.unpack_text, lambda t: float_divmod.deps("unpack", t)),
    "pow": (_pow, lambda t: []),
    "runtime": (_runtime, lambda t: []),
}


def _helper(name: str) -> tuple[Callable[[str], str], Callable[[str], list]]:
    """`name`'s (builder, dependencies). The math library's helpers (erf, lgamma, log1p,
    ldexp, ...) live in codegen/float_helpers.py, imported at the first one a shader
    uses: the largest of the code generator's modules, which most kernels never need."""
    found = _HELPERS.get(name)
    if found is None:
        from . import float_helpers
        if name not in float_helpers.HELPERS:
            raise KeyError(name)
        found = _HELPERS[name] = (partial(float_helpers.wgsl_text, name),
                                  partial(float_helpers.wgsl_deps, name))
    return found


class PreludeBuilder:
    """Collects the helper functions a shader uses, each once, dependencies first."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def use(self, name: str, ty: str) -> str:
        """The helper `cube_<name>_<ty>`, added to the prelude when first used."""
        fn_name = f"cube_{name}_{ty}"
        if fn_name not in self._texts:
            build, deps = _helper(name)
            for dep_name, dep_ty in deps(ty):
                self.use(dep_name, dep_ty)
            self._texts[fn_name] = build(ty)
        return fn_name

    def float_to_int(self, src: str, dst: str) -> str:
        """The saturating float->int conversion helper from `src` to `dst`."""
        fn_name = f"cube_{src}_to_{dst}"
        if fn_name not in self._texts:
            if dst == "i32":
                self.use("isnan", "f32")
            self._texts[fn_name] = _float_to_int(src, dst)
        return fn_name

    def add(self, fn_name: str, text: str) -> str:
        """Adds a helper built elsewhere (per-buffer accessors) under `fn_name`."""
        self._texts.setdefault(fn_name, text)
        return fn_name

    def text(self) -> str:
        return "\n\n".join(self._texts.values())

    def __bool__(self) -> bool:
        return bool(self._texts)
