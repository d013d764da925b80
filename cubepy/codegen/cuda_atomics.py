"""CUDA's atomics, one element type family at a time: 32- and 64-bit integers (signed
64-bit through the unsigned long long forms, min/max through the long long ones),
f32/f64 (add native; min/max compare-and-swap loops whose fmax/fmin ignore a NaN
operand, as every target does), f16/bf16 add, relaxed load/store as volatile accesses
(PTX treats ld/st.volatile as relaxed) and atomicInc/atomicDec on u32."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import compile_error
from ..ir import nodes as n
from ..ir.dtype_facts import SPELLING
from ..ir.ops import AtomicOp
from ..targets import get_target

if TYPE_CHECKING:
    from .clike import CEmitter

_TARGET = get_target("cuda")
_TYPES = SPELLING["c"]
_SIMPLE = re.compile(r"^[\w.\[\]]+$")
_ULL = "unsigned long long"


def cuda_atomic(em: "CEmitter", s: n.AtomicOp, ptr: str, value: str | None,
                compare: str | None) -> str:
    """The CUDA expression of atomic `s` on `ptr` (`&buf[i]`), giving the old value."""
    t, op = s.buffer.elem, s.op
    if (t.name in ("f16", "bf16") and op not in ("add", "sub")) or t.is_bool or (
            op in ("inc", "dec") and t.name != "u32") or (
            t.is_float and op in ("and", "or", "xor")) or (
            t.name == "f64" and op == "compare_exchange"):
        compile_error(s.loc, f"atomic_{op} on {t.name} is not supported by the CUDA target")
    if op == "load":
        return f"*(volatile {_TYPES[t.name]}*){ptr}"
    if op == "store":
        return f"*(volatile {_TYPES[t.name]}*){ptr} = {value}"
    neg = value if _SIMPLE.match(value or "") else f"({value})"
    if t.name in ("i32", "u32"):
        if op == "compare_exchange":
            return f"atomicCAS({ptr}, {compare}, {value})"
        return f"{_TARGET.spelling(AtomicOp(op))}({ptr}, {value})"
    if t.name in ("i64", "u64"):
        return _wide_int(t.name, op, ptr, value, neg, compare)
    if op == "add":  # f16, bf16, f32, f64
        return f"atomicAdd({ptr}, {value})"
    if op == "sub":
        return f"atomicAdd({ptr}, -{neg})"
    if op == "exchange" and t.name == "f32":
        return f"atomicExch({ptr}, {value})"
    if op == "exchange":  # f64: the bits through the 64-bit exchange
        return (f"__longlong_as_double((long long)atomicExch(({_ULL}*){ptr}, "
                f"({_ULL})__double_as_longlong({value})))")
    if op == "compare_exchange":  # f32 (hand-built IR; the frontend offers no float CAS)
        return f"{_cas_f32_helper(em)}({ptr}, {compare}, {value})"
    return f"{_float_minmax_helper(em, op, t.name)}({ptr}, {value})"  # min/max


def _wide_int(name: str, op: str, ptr: str, value: str, neg: str,
              compare: str | None) -> str:
    """i64/u64: signed min/max have long long forms (sm_35+); the rest use the
    unsigned long long ones, two's complement giving the same bits."""
    if op in ("min", "max"):
        return f"atomic{op.capitalize()}({ptr}, {value})"
    p = ptr if name == "u64" else f"({_ULL}*){ptr}"
    v = value if name == "u64" else f"({_ULL}){neg}"
    back = "" if name == "u64" else "(long long)"
    if op == "compare_exchange":
        c = compare if name == "u64" else f"({_ULL})({compare})"
        return f"{back}atomicCAS({p}, {c}, {v})"
    if op == "sub":
        return f"{back}atomicAdd({p}, 0ull - ({_ULL}){neg})"
    return f"{back}{_TARGET.spelling(AtomicOp(op))}({p}, {v})"  # add/and/or/xor/exchange


def _cas_f32_helper(em: "CEmitter") -> str:
    return em.helper("cube_atomic_cas_f32", """
{fn} float cube_atomic_cas_f32(float* p, float expected, float v) {
    return __int_as_float(atomicCAS((int*)p, __float_as_int(expected), __float_as_int(v)));
}""")


# f32 and f64 seen as same-sized integers for the compare-and-swap loops
_BITS = {"f32": ("float", "int", "__int_as_float", "__float_as_int", "f{op}f"),
         "f64": ("double", _ULL, "__longlong_as_double", f"({_ULL})__double_as_longlong",
                 "f{op}")}


def _float_minmax_helper(em: "CEmitter", op: str, name: str) -> str:
    """`cube_atomic_<min|max>_<f32|f64>`: fminf/fmaxf keep the number when one side is
    NaN, so a NaN operand leaves the element as it was and a NaN element is replaced."""
    ft, it, to_f, to_i, fn = _BITS[name]
    pick = fn.format(op=op)
    helper = f"cube_atomic_{op}_{name}"
    as_f = f"{to_f}((long long)old)" if name == "f64" else f"{to_f}(old)"
    return em.helper(helper, f"""
{{fn}} {ft} {helper}({ft}* p, {ft} v) {{
    {it} old = *(volatile {it}*)p;
    while (true) {{
        const {ft} current = {as_f};
        const {it} wanted = {to_i}({pick}(current, v));
        if (wanted == old) return current;
        const {it} seen = atomicCAS(({it}*)p, old, wanted);
        if (seen == old) return current;
        old = seen;
    }}
}}""")
