"""Math calls that are more than one IR op: `frexp` and `modf` (two results, a Tup),
`ldexp` (an i32 exponent), `round(x, ndigits)`, and the top-level `cubepy.clamp`, which
shares math.clamp's handler (intrinsics.py) and so also takes integers.

Semantics (docs/LANGUAGE.md, Math): frexp(x) is (ldexp(x, -e), e) with e the IR op
frexp_exp (0 for 0, inf and NaN, as C and Python); modf(x) is (copysign(x - trunc(x),
x), trunc(x)) with a zero fraction for infinities; round(x, n) is rint(x * 10**n) /
10**n in x's type.
"""
from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

import numpy as np

from ..ir import nodes as n
from ..ir.types import bool_, i32
from .intrinsics import CallSite, intrinsic, math_call
from .values import Py, Tup, is_number

if TYPE_CHECKING:
    from .build import Builder


def _float_arg(b: Builder, node: ast.Call, name: str) -> n.Expr:
    """The one float argument of `name`, kept in a variable when it is computed (it is
    read more than once)."""
    b.arity(node, name, 1)
    x = b.rvalue(node.args[0])
    ty = b.ctx.unifier.require_float(x.ty, b.ctx.loc, lambda t: (
        f"{name}() needs a float argument, not {t}: cast it, e.g. f32(...)"))
    b.no_line(ty, f"{name}()")
    return b.once(x, name)


@intrinsic("math.frexp")
def _frexp(b: Builder, node: ast.Call, site: CallSite):
    x = _float_arg(b, node, "frexp")
    loc = b.ctx.loc
    e = b.once(n.Call(ty=i32, func="frexp_exp", args=(x,), loc=loc), "frexp_exp")
    neg = n.Unary(ty=i32, op="neg", operand=e, loc=loc)
    m = b.once(n.Call(ty=x.ty, func="ldexp", args=(x, neg), loc=loc), "frexp_m")
    return Tup((m, e))


@intrinsic("math.modf")
def _modf(b: Builder, node: ast.Call, site: CallSite):
    x = _float_arg(b, node, "modf")
    loc, ty = b.ctx.loc, x.ty
    whole = b.once(n.Call(ty=ty, func="trunc", args=(x,), loc=loc), "modf_i")
    inf = n.Call(ty=bool_, func="isinf", args=(x,), loc=loc)
    diff = n.Binary(ty=ty, op="sub", lhs=x, rhs=whole, loc=loc)
    zero = n.Const(ty=ty, value=0.0, loc=loc)
    frac = n.Call(ty=ty, func="copysign",
                  args=(n.Select(ty=ty, cond=inf, if_true=zero, if_false=diff, loc=loc), x),
                  loc=loc)
    return Tup((b.once(frac, "modf_f"), whole))


@intrinsic("math.ldexp")
def _ldexp(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, "ldexp", 2)
    x = b.rvalue(node.args[0])
    u = b.ctx.unifier
    ty = u.require_float(x.ty, b.ctx.loc, lambda t: (
        f"ldexp() needs a float first argument, not {t}: cast it, e.g. f32(...)"))
    b.no_line(ty, "ldexp()")
    with b.at(node.args[1]):
        e = b.rvalue(node.args[1])
        u.unify(e.ty, i32, b.ctx.loc, lambda p, q: (
            f"the exponent of ldexp() must be i32, not {p}: cast it, e.g. i32(...)"))
    return n.Call(ty=ty, func="ldexp", args=(x, e), loc=b.ctx.loc)


@intrinsic("builtins.round")
def _round(b: Builder, node: ast.Call, site: CallSite):
    """round(x) rounds half to even and keeps x's type; round(x, n) with n known at
    compile time rounds to n decimal digits (n < 0: to tens, hundreds, ...)."""
    b.arity(node, "round", 1, 2)
    if len(node.args) == 1:
        return math_call(b, node, "round")
    x = b.expr(node.args[0])
    digits = b.ct_int(b.expr(node.args[1]))
    if digits is None or abs(digits) > 308:
        b.error("the number of digits of round(x, n) must be an int known at compile "
                "time, at most 308 in size", node.args[1])
    if isinstance(x, Py) and is_number(x.value):
        return Py(round(x.value, digits))
    x = b.materialize(x, node.args[0])
    loc = b.ctx.loc
    ty = b.ctx.unifier.require_float(x.ty, loc, lambda t: (
        f"round(x, n) needs a float x, not {t}: cast it, e.g. f32(...)"))
    b.no_line(ty, "round(x, n)")
    x = b.once(x, "round_x")
    scale = n.Const(ty=ty, value=float(10.0 ** abs(digits)), loc=loc)
    rint = n.Call(ty=ty, func="round", loc=loc, args=(
        b.once(_divide(x, scale, loc) if digits < 0 else
               n.Binary(ty=ty, op="mul", lhs=x, rhs=scale, loc=loc), "round_s"),))
    scaled = rint.args[0]
    rounded = (_divide(rint, scale, loc) if digits >= 0 else
               n.Binary(ty=ty, op="mul", lhs=rint, rhs=scale, loc=loc))
    # x has no digits to round away where x * 10**n is an integer already (at least
    # 2^mantissa bits, or past the type's range), not a number, or (n >= 0) 0: x itself
    # is exact there, and a driver's shortcuts through a division by a huge 10**n are
    # avoided
    whole = float(2 ** _MANTISSA_BITS[ty.name])
    has_digits: n.Expr = n.Logical(  # -2^m < s < 2^m (comparisons only: bf16 everywhere)
        ty=bool_, op="and", loc=loc,
        lhs=n.Compare(ty=bool_, op="lt", lhs=scaled, rhs=n.Const(ty=ty, value=whole, loc=loc),
                      loc=loc),
        rhs=n.Compare(ty=bool_, op="gt", lhs=scaled,
                      rhs=n.Const(ty=ty, value=-whole, loc=loc), loc=loc))
    if digits >= 0:
        zero = n.Const(ty=ty, value=0.0, loc=loc)
        has_digits = n.Logical(
            ty=bool_, op="and", loc=loc, lhs=has_digits,
            rhs=n.Compare(ty=bool_, op="ne", lhs=scaled, rhs=zero, loc=loc))
    return n.Select(ty=ty, cond=has_digits, if_true=rounded, if_false=x, loc=loc)


# Explicit mantissa bits: from 2**bits on, every value of the type is an integer.
_MANTISSA_BITS = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}


def _divide(a: n.Expr, scale: n.Const, loc) -> n.Expr:
    """a / 10**k. WGSL divides accurately only by [2^-126, 2^126] (NVIDIA's driver takes
    a / 1e38 as a times a flushed 1/1e38, 0): f32's 10**38 divides as
    (a * 2^-64) / (10**38 * 2^-64), the same quotient (a * 2^-64 is exact wherever the
    quotient is not far below an ulp of 1)."""
    ty = scale.ty
    if ty.name != "f32":
        return n.Binary(ty=ty, op="div", lhs=a, rhs=scale, loc=loc)
    value = float(np.float32(scale.value))
    if not (2.0 ** 126 < value < math.inf):
        return n.Binary(ty=ty, op="div", lhs=a, rhs=scale, loc=loc)
    small = n.Const(ty=ty, value=2.0 ** -64, loc=loc)
    return n.Binary(ty=ty, op="div", lhs=n.Binary(ty=ty, op="mul", lhs=a, rhs=small, loc=loc),
                    rhs=n.Const(ty=ty, value=value * 2.0 ** -64, loc=loc), loc=loc)
