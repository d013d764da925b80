"""Integer and bit functions (`Bits` nodes) for the C-like targets: CUDA's intrinsics
(`__popc`, `__clz`, `__brev`, `__mulhi`, ... and their `ll`/`u`/`64` forms by type) and
MSL's integer functions (`popcount`, `clz`, `ctz`, `reverse_bits`, `mulhi`, `addsat`,
`subsat`, `as_type`). Counts are u32 on every target; the semantics are in
docs/LANGUAGE.md ("Integer and bit operations") and ir/bitops.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.dtype_facts import SPELLING
from ..ir.ops import LOWERED, BitOp
from ..ir.types import DType
from ..targets import get_target

if TYPE_CHECKING:
    from .clike import CEmitter

_C = SPELLING["c"]
_CUDA = get_target("cuda")
_METAL = get_target("metal")

# CUDA: the 32-bit intrinsic (the op table's spelling) -> its 64-bit form, and the
# operand type each takes (C converts the others implicitly: the casts keep it exact)
_CUDA_64 = {"__popc": "__popcll", "__clz": "__clzll", "__ffs": "__ffsll",
            "__brev": "__brevll", "__mulhi": "__mul64hi", "__umulhi": "__umul64hi"}
_CUDA_OPERAND = {"__popc": "u", "__clz": "i", "__ffs": "i", "__brev": "u"}


def _cuda_name(op: BitOp, ty: DType) -> str:
    base = _CUDA.spelling(op)
    if op is BitOp.MUL_HI and not ty.is_signed:
        base = "__umulhi"
    return _CUDA_64[base] if ty.bits == 64 else base


def _as(em: "CEmitter", e: n.Expr, kind: str) -> str:
    """`e` as the signed ("i") or unsigned ("u") integer type of its width (a cast
    only where the type differs)."""
    want = f"{kind}{e.ty.bits}"
    text = em.expr(e)
    if e.ty.name == want:
        return text
    from .clike import UNARY
    return f"({_C[want]}){em.expr_prec(e, UNARY)}"


def cuda_bits(em: "CEmitter", e: n.Bits) -> tuple[str, int]:
    """CUDA C for a bit function."""
    from .clike import PRIMARY, UNARY
    op, x = BitOp(e.op), e.args[0]
    ty = x.ty
    if op is BitOp.BITCAST:
        return _cuda_bitcast(em, x, e.ty)
    if op in (BitOp.SATURATING_ADD, BitOp.SATURATING_SUB):
        return f"{saturating_helper(em, op, ty)}({em.expr(x)}, {em.expr(e.args[1])})", PRIMARY
    if op is BitOp.MUL_HI:
        kind = "i" if ty.is_signed else "u"
        return (f"{_cuda_name(op, ty)}({_as(em, x, kind)}, {_as(em, e.args[1], kind)})",
                PRIMARY)
    if op is BitOp.CTZ:  # no intrinsic: the leading zeros of the reversed bits
        rev = f"{_cuda_name(BitOp.REVERSE_BITS, ty)}({_as(em, x, 'u')})"
        return f"(unsigned int){_cuda_name(BitOp.CLZ, ty)}(({_C[f'i{ty.bits}']}){rev})", UNARY
    name = _cuda_name(op, ty)
    call = f"{name}({_as(em, x, _CUDA_OPERAND[_CUDA.spelling(op)])})"
    if op is BitOp.REVERSE_BITS:
        return (call, PRIMARY) if ty.name.startswith("u") else (f"({_C[ty.name]}){call}", UNARY)
    return f"(unsigned int){call}", UNARY  # the counts are int in CUDA, u32 here


_CUDA_BITCAST = {("f32", "i32"): "__int_as_float", ("f32", "u32"): "__uint_as_float",
                 ("i32", "f32"): "__float_as_int", ("u32", "f32"): "__float_as_uint",
                 ("f64", "i64"): "__longlong_as_double",
                 ("i64", "f64"): "__double_as_longlong",
                 ("f16", "bf16"): "__ushort_as_half", ("bf16", "f16"): "__ushort_as_bfloat16"}
_HALF_BITS = {"f16": "__half_as_ushort", "bf16": "__bfloat16_as_ushort"}


def _cuda_bitcast(em: "CEmitter", x: n.Expr, dst: DType) -> tuple[str, int]:
    from .clike import PRIMARY, UNARY
    src = x.ty
    if src is dst:
        return em.expr(x), PRIMARY
    if src.is_int and dst.is_int:  # same width: C's conversion keeps the bits
        return f"({_C[dst.name]}){em.expr_prec(x, UNARY)}", UNARY
    if src.name in _HALF_BITS:
        return f"{_CUDA_BITCAST[(dst.name, src.name)]}({_HALF_BITS[src.name]}({em.expr(x)}))", \
            PRIMARY
    if src.name == "u64":  # through long long
        return f"__longlong_as_double((long long){em.expr_prec(x, UNARY)})", PRIMARY
    if dst.name == "u64":
        return f"(unsigned long long)__double_as_longlong({em.expr(x)})", UNARY
    return f"{_CUDA_BITCAST[(dst.name, src.name)]}({em.expr(x)})", PRIMARY


def metal_bits(em: "CEmitter", e: n.Bits) -> tuple[str, int]:
    """MSL for a bit function: metal:: integer functions, counts converted to uint."""
    from .clike import PRIMARY
    op, x = BitOp(e.op), e.args[0]
    args = ", ".join(em.expr(a) for a in e.args)
    if op is BitOp.BITCAST:
        if x.ty is e.ty:
            return em.expr(x), PRIMARY
        return f"as_type<{em.d.type_name(e.ty)}>({args})", PRIMARY
    spelled = _METAL.spelling(op)
    if spelled == LOWERED:  # ffs
        return f"{_metal_ffs_helper(em, x.ty)}({args})", PRIMARY
    call = f"metal::{spelled}({args})"
    return (f"uint({call})" if e.ty is not x.ty else call), PRIMARY


def _metal_ffs_helper(em: "CEmitter", ty: DType) -> str:
    t = em.d.type_name(ty)
    name = f"cube_ffs_{ty.name}"
    return em.helper(name, f"""
{{fn}} uint {name}({t} x) {{
    return x == 0 ? 0u : uint(metal::ctz(x)) + 1u;
}}""")


def saturating_helper(em: "CEmitter", op: BitOp, ty: DType) -> str:
    """`cube_saturating_add_i32` ...: a + b (a - b) clamped to the type's range, the
    wrapped result computed in the unsigned type (signed overflow is undefined in C)."""
    kind = "add" if op is BitOp.SATURATING_ADD else "sub"
    name = f"cube_saturating_{kind}_{ty.name}"
    t, ut = em.d.type_name(ty), _C[f"u{ty.bits}"]
    sym = "+" if kind == "add" else "-"
    if not ty.is_signed:
        body = (f"    const {t} r = a + b;\n    return r < a ? ({t})~({t})0 : r;"
                if kind == "add" else f"    return a > b ? a - b : ({t})0;")
    else:
        lo, _ = em.d.literal(-(1 << (ty.bits - 1)), ty)
        hi, _ = em.d.literal((1 << (ty.bits - 1)) - 1, ty)
        # overflow: the result's sign differs from a's and from b's (add), or a and b
        # differ in sign and the result's sign is not a's (sub)
        test = "((a ^ r) & (b ^ r)) < 0" if kind == "add" else "((a ^ b) & (a ^ r)) < 0"
        body = (f"    const {t} r = ({t})(({ut})a {sym} ({ut})b);\n"
                f"    if ({test}) return a < 0 ? {lo} : {hi};\n    return r;")
    return em.helper(name, f"""
{{fn}} {t} {name}({t} a, {t} b) {{
{body}
}}""")
