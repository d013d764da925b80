"""The handlers of the integer and bit functions (`popcount`, `clz`, `ctz`, `ffs`,
`reverse_bits`, `mul_hi`, `saturating_add`, `saturating_sub`, `bitcast`): each builds
one `Bits` node. They take integers (i32, u32, i64, u64; a line of them works per
element); `bitcast(T, x)` takes any numeric x whose type has T's size.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.ops import COUNT_OPS, OPS, BitOp
from ..ir.types import DType, LineType, elem_of, u32
from .infer import find
from .intrinsics import CallSite, intrinsic
from .values import Py

if TYPE_CHECKING:
    from .build import Builder

_INTEGER_OPS = tuple(op.value for op in BitOp if op is not BitOp.BITCAST)


def _integer_operands(b: Builder, node: ast.Call, name: str) -> list[n.Expr]:
    """The operands of `name`, of one integer type (a literal takes the others' type;
    alone it is i32)."""
    u = b.ctx.unifier
    args = b.broadcast([b.rvalue(a) for a in node.args], f"in {name}()")
    ty = args[0].ty
    for a in args[1:]:
        ty = u.unify(ty, a.ty, b.ctx.loc, lambda p, q: (
            f"{name}() operands mix {p} and {q}: cast one, e.g. "
            f"{next((t for t in (p, q) if ' ' not in t), 'u32')}(...)"))
    u.require(ty, lambda t: elem_of(t).is_int, b.ctx.loc, lambda t: (
        f"{name}() takes integers (i32, u32, i64, u64), not {t.name}"
        + ("; bitcast(u32, x) gives the bits of a float" if elem_of(t).is_float else "")))
    return args


@intrinsic(*_INTEGER_OPS)
def _bits(b: Builder, node: ast.Call, site: CallSite):
    """`popcount(x)` ... `saturating_sub(a, b)`: one `Bits` node of the operands' type,
    or u32 for the counts."""
    name = site.name
    op = BitOp(name)
    b.arity(node, name, OPS[op].arity)
    args = _integer_operands(b, node, name)
    ty = args[0].ty
    if op in COUNT_OPS:  # a u32 count (a line of them for a line)
        line = find(ty)
        if isinstance(line, LineType):
            ty = LineType(u32, line.size)
        else:
            b.no_line(ty, f"{name}() of a value typed after the call")
            ty = u32
    return n.Bits(ty=ty, op=name, args=tuple(args), loc=b.ctx.loc)


@intrinsic("bitcast")
def _bitcast(b: Builder, node: ast.Call, site: CallSite):
    """`bitcast(T, x)`: x's bits as T. Both sizes must agree (checked once x's type is
    known: a literal is i32 unless its use says otherwise)."""
    b.arity(node, "bitcast", 2)
    target = b.as_type(b.expr(node.args[0]), node.args[0])
    if not isinstance(target, DType):
        b.error("bitcast(T, x) needs a concrete type T, e.g. u32 or f32", node.args[0])
    if target.is_bool:
        b.error("bitcast(T, x) cannot give bool (a bool has no defined bits): compare "
                "instead, e.g. x != 0", node.args[0])
    value = b.expr(node.args[1])
    if isinstance(value, Py) and isinstance(value.value, float):
        b.error("bitcast() of a float literal: give it a type first, e.g. "
                "bitcast(u32, f32(1.5))", node.args[1])
    x = b.materialize(value, node.args[1])
    u, loc = b.ctx.unifier, b.ctx.loc
    u.require(x.ty, lambda t: not elem_of(t).is_bool and elem_of(t).bits == target.bits,
              loc, lambda t: _size_message(elem_of(t), target))
    line = find(x.ty)
    if isinstance(line, LineType):
        return n.Bits(ty=LineType(target, line.size), op="bitcast", args=(x,), loc=loc)
    b.no_line(x.ty, "bitcast() of a value typed after the call")
    if line is target:
        return x
    return n.Bits(ty=target, op="bitcast", args=(x,), loc=loc)


def _size_message(src: DType, target: DType) -> str:
    if src.is_bool:
        return "bitcast() of a bool: a bool has no defined bits; use u32(x) instead"
    head = (f"bitcast({target.name}, x) needs a value of {target.bits} bits, but x is "
            f"{src.name} ({src.bits} bits): bitcast only reinterprets types of the same "
            f"size")
    if target.bits == 16 or src.bits == 16:
        return head + "; the 16-bit types are f16 and bf16 (cubepy has no 16-bit integers)"
    kind = "f" if src.is_float else ("i" if src.is_signed else "u")
    return head + f"; convert first, e.g. bitcast({target.name}, {kind}{target.bits}(x))"
