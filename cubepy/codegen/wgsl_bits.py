"""Integer and bit functions (`Bits` nodes) in WGSL: the 32-bit built-ins
(`countOneBits`, `countLeadingZeros`, `countTrailingZeros`, `firstTrailingBit`,
`reverseBits`, `bitcast`) and prelude helpers for what WGSL lacks (`mul_hi`, the
saturating add and sub). WGSL has no 64-bit integers: the legalize pass rejects them
before this module is reached. Semantics: docs/LANGUAGE.md and ir/bitops.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import compile_error
from ..ir import nodes as n
from ..ir.ops import BitOp, Helper
from ..targets import get_target

if TYPE_CHECKING:
    from .wgsl_expr import ExprEmitter

_WGSL = get_target("wgsl")
_COUNTS = (BitOp.POPCOUNT, BitOp.CLZ, BitOp.CTZ)  # built-ins of the operand type (ffs: below)


def wgsl_bits(em: "ExprEmitter", e: n.Bits) -> tuple[str, bool]:
    """(text, compound) of a bit function."""
    from .wgsl_expr import wgsl_type
    op = BitOp(e.op)
    x = e.args[0]
    t = wgsl_type(x.ty, em._at(e))
    args = ", ".join(em(a, True) for a in e.args)
    spelled = _WGSL.spelling(op)
    if op is BitOp.BITCAST:
        dst = wgsl_type(e.ty, em._at(e))
        return (em(x), False) if dst == t else (f"bitcast<{dst}>({args})", False)
    if isinstance(spelled, Helper):
        return f"{_helper(em, str(spelled), t)}({args})", False
    if op is BitOp.FFS:  # firstTrailingBit gives -1 (all ones for u32) for 0: + 1 is 0
        if t == "u32":
            return f"{spelled}({args}) + 1u", True
        return f"u32({spelled}({args}) + 1i)", False
    call = f"{spelled}({args})"
    if op in _COUNTS and t != "u32":
        return f"u32({call})", False
    if op in _COUNTS or op is BitOp.REVERSE_BITS:
        return call, False
    compile_error(em._at(e), f"{e.op} is not available in WGSL")  # pragma: no cover


def _helper(em: "ExprEmitter", name: str, t: str) -> str:
    """The prelude helper `cube_<name>_<t>` (and the ones it calls)."""
    if name == "mul_hi" and t == "i32":
        _helper(em, "mul_hi", "u32")
    fn = f"cube_{name}_{t}"
    return em.prelude.add(fn, _TEXTS[name](t))


def _mul_hi(t: str) -> str:
    if t == "u32":  # 16-bit halves: every partial product and sum fits in a u32
        return ("fn cube_mul_hi_u32(a: u32, b: u32) -> u32 {\n"
                "    let a_lo = a & 0xffffu;\n    let a_hi = a >> 16u;\n"
                "    let b_lo = b & 0xffffu;\n    let b_hi = b >> 16u;\n"
                "    let lo_hi = a_lo * b_hi;\n    let hi_lo = a_hi * b_lo;\n"
                "    let mid = ((a_lo * b_lo) >> 16u) + (hi_lo & 0xffffu) + lo_hi;\n"
                "    return a_hi * b_hi + (hi_lo >> 16u) + (mid >> 16u);\n}")
    # signed from unsigned: hi_s = hi_u - (a < 0 ? b : 0) - (b < 0 ? a : 0) (mod 2^32)
    return ("fn cube_mul_hi_i32(a: i32, b: i32) -> i32 {\n"
            "    let ua = bitcast<u32>(a);\n    let ub = bitcast<u32>(b);\n"
            "    let hi = cube_mul_hi_u32(ua, ub) - select(0u, ub, a < 0i)"
            " - select(0u, ua, b < 0i);\n"
            "    return bitcast<i32>(hi);\n}")


def _saturating(kind: str):
    def text(t: str) -> str:
        name = f"cube_saturating_{kind}_{t}"
        head = f"fn {name}(a: {t}, b: {t}) -> {t} {{\n"
        if t == "u32":
            if kind == "add":
                return head + "    let r = a + b;\n    return select(r, 0xffffffffu, r < a);\n}"
            return head + "    return select(0u, a - b, a > b);\n}"
        sym = "+" if kind == "add" else "-"
        test = "((a ^ r) & (b ^ r)) < 0i" if kind == "add" else "((a ^ b) & (a ^ r)) < 0i"
        return (head + f"    let r = bitcast<i32>(bitcast<u32>(a) {sym} bitcast<u32>(b));\n"
                f"    let limit = select(2147483647i, -2147483647i - 1i, a < 0i);\n"
                f"    return select(r, limit, {test});\n}}")
    return text


_TEXTS = {"mul_hi": _mul_hi, "saturating_add": _saturating("add"),
          "saturating_sub": _saturating("sub")}
