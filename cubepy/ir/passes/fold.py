"""specialize_cube_dim and fold_constants."""
from __future__ import annotations

import dataclasses

from .. import nodes as ir
from ..types import bool_, u32
from . import consteval as ce
from .rewrite import map_expr, map_exprs_deep, map_stmts

_DIM_AXES = {"cube_dim_x": 0, "cube_dim_y": 1, "cube_dim_z": 2}


def specialize_cube_dim(kernel: ir.Kernel) -> ir.Kernel:
    """CUBE_DIM, CUBE_DIM_X/Y/Z -> constants from `kernel.cube_dim`."""
    x, y, z = kernel.cube_dim

    def fn(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Builtin):
            if e.name == "cube_dim":
                return ir.Const(ty=u32, value=x * y * z, loc=e.loc)
            if e.name in _DIM_AXES:
                return ir.Const(ty=u32, value=kernel.cube_dim[_DIM_AXES[e.name]], loc=e.loc)
        return e
    return dataclasses.replace(kernel, body=map_exprs_deep(kernel.body, fn))


def _const(e: ir.Expr, value) -> ir.Expr:
    if value is ce.NOFOLD:
        return e
    return ir.Const(ty=e.ty, value=value, loc=e.loc)


def _is(e: ir.Expr, value) -> bool:
    """Whether `e` is a constant equal to `value` (ints and bools only, not floats)."""
    return (isinstance(e, ir.Const) and not e.ty.is_float and type(e.value) is not float
            and e.value == value and type(e.value) is type(value))


def fold_expr(e: ir.Expr) -> ir.Expr:
    """One node, children already folded."""
    if isinstance(e, ir.Binary):
        a, b = e.lhs, e.rhs
        if isinstance(a, ir.Const) and isinstance(b, ir.Const):
            return _const(e, ce.binary(e.op, e.ty, a.value, b.value))
        if e.ty.is_int:  # identities exact for wrapping integers (operands are pure)
            if e.op in ("add", "bitor", "bitxor", "shl", "shr") and _is(b, 0):
                return a
            if e.op in ("add", "bitor", "bitxor") and _is(a, 0):
                return b
            if e.op == "sub" and _is(b, 0):
                return a
            if e.op in ("mul", "floordiv") and _is(b, 1):
                return a
            if e.op == "mul" and _is(a, 1):
                return b
            if e.op in ("mul", "bitand") and (_is(a, 0) or _is(b, 0)):
                return ir.Const(ty=e.ty, value=0, loc=e.loc)
            if e.op == "mod" and _is(b, 1):
                return ir.Const(ty=e.ty, value=0, loc=e.loc)
        return e
    if isinstance(e, ir.Unary):
        if isinstance(e.operand, ir.Const):
            return _const(e, ce.unary(e.op, e.operand.ty, e.operand.value))
        if e.op == "not" and isinstance(e.operand, ir.Unary) and e.operand.op == "not":
            return e.operand.operand
        return e
    if isinstance(e, ir.Compare):
        a, b = e.lhs, e.rhs
        if isinstance(a, ir.Const) and isinstance(b, ir.Const) and a.ty.name != "bf16":
            return ir.Const(ty=bool_, value=ce.compare(e.op, a.value, b.value, a.ty),
                            loc=e.loc)
        return e
    if isinstance(e, ir.Logical):
        a, b = e.lhs, e.rhs
        absorbing = e.op == "or"  # `or` is decided by true, `and` by false
        for side, other in ((a, b), (b, a)):
            if isinstance(side, ir.Const):
                # both sides are pure, so the order of evaluation does not matter
                return ir.Const(ty=bool_, value=absorbing, loc=e.loc) \
                    if bool(side.value) is absorbing else other
        return e
    if isinstance(e, ir.Select):
        if isinstance(e.cond, ir.Const):
            return e.if_true if e.cond.value else e.if_false
        if e.if_true == e.if_false and isinstance(e.if_true, ir.Const) \
                and type(e.if_true.value) is type(e.if_false.value):
            return e.if_true
        return e
    if isinstance(e, ir.Bits):
        if all(isinstance(a, ir.Const) for a in e.args):
            from ..bitops import fold_bits
            return _const(e, fold_bits(e.op, e.ty, e.args[0].ty,
                                       tuple(a.value for a in e.args)))
        return e
    if isinstance(e, ir.Cast):
        if e.operand.ty is e.ty:
            return e.operand
        if isinstance(e.operand, ir.Const):
            return _const(e, ce.cast(e.operand.value, e.operand.ty, e.ty))
        return e
    return e


def _empty_range(s: ir.For) -> bool:
    if not all(isinstance(x, ir.Const) for x in (s.start, s.stop, s.step)):
        return False
    start, stop, step = s.start.value, s.stop.value, s.step.value
    return (step > 0 and start >= stop) or (step < 0 and start <= stop)


def fold_stmt(s: ir.Stmt) -> list[ir.Stmt]:
    """One statement, nested blocks already folded: expressions folded, constant
    control flow resolved (a branch is spliced into the enclosing block)."""
    return fold_control(_map_own_exprs(s))


def fold_control(s: ir.Stmt) -> list[ir.Stmt]:
    """`fold_stmt` for a statement whose expressions are folded already."""
    if isinstance(s, ir.If) and isinstance(s.cond, ir.Const):
        return list((s.then if s.cond.value else s.orelse).stmts)
    if isinstance(s, ir.If) and not s.then.stmts and not s.orelse.stmts:
        return []  # the condition is pure
    if isinstance(s, ir.While) and isinstance(s.cond, ir.Const) and not s.cond.value:
        return []
    if isinstance(s, ir.For) and _empty_range(s):
        return []
    if isinstance(s, ir.For) and isinstance(s.step, ir.Const) and s.step.value == 0:
        return []  # a zero step runs no iteration (the bounds are pure)
    return [s]


def _map_own_exprs(s: ir.Stmt) -> ir.Stmt:
    from ..visit import map_stmt_exprs
    return map_stmt_exprs(s, fold_expr)


def fold_block(block: ir.Block) -> ir.Block:
    return map_stmts(block, fold_stmt)


def fold_constants(kernel: ir.Kernel) -> ir.Kernel:
    """Evaluates constant expressions and resolves constant control flow."""
    return dataclasses.replace(kernel, body=fold_block(kernel.body))


__all__ = ["specialize_cube_dim", "fold_constants", "fold_block", "fold_expr", "map_expr"]
