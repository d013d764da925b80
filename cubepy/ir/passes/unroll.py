"""unroll_loops: `for i in unroll(range(...))` with constant bounds -> copies of the body."""
from __future__ import annotations

import dataclasses

from ... import errors
from .. import nodes as ir
from ..names import NameTable
from ..visit import map_stmt_exprs
from .fold import fold_control, fold_expr
from .rewrite import all_var_names, declared_vars, escaping_jump, map_stmts, \
    rename_own_vars

MAX_UNROLL = 1024  # iterations of one unrolled loop
MAX_UNROLLED_STATEMENTS = 65536  # statements all unrolled copies of a kernel may add


def _check_size(s: ir.For) -> None:
    """Rejects, at the outermost unrolled loop and before expanding anything, a nest
    whose copies would exceed MAX_UNROLLED_STATEMENTS (1024 x 1024 would run for
    minutes). Bounds are compile-time constants, so the count is exact before folding."""
    total = _estimate(s)
    if total > MAX_UNROLLED_STATEMENTS:
        errors.compile_error(s.loc, f"unrolling this loop makes {total} statements, more "
                                    f"than the limit of {MAX_UNROLLED_STATEMENTS} (nested "
                                    f"unroll() multiplies its copies): unroll fewer loops "
                                    f"or use a plain range()")


def _estimate(s: ir.For) -> int:
    """Statements unrolling `s` makes (bounds that are not constant, an error that
    _iterations reports, count as one trip)."""
    bounds = (s.start, s.stop, s.step)
    trips = 1
    if all(isinstance(b, ir.Const) for b in bounds) and int(s.step.value) != 0:
        trips = len(range(int(s.start.value), int(s.stop.value), int(s.step.value)))
    return trips * _block_estimate(s.body)


def _block_estimate(block: ir.Block) -> int:
    from ..visit import child_blocks
    count = 0
    for s in block.stmts:
        if isinstance(s, ir.For) and s.unroll:
            count += _estimate(s)
        else:
            count += 1 + sum(_block_estimate(b) for b in child_blocks(s))
    return count


def unroll_loops(kernel: ir.Kernel) -> ir.Kernel:
    """Expands every For(unroll=True); its body copies see the loop variable as a
    constant and get their own copies of the variables they declare. The pipeline runs
    it only on a kernel with such a loop (passes/needs.py)."""
    names = NameTable(all_var_names(kernel), style="always_n")  # copies: x_1, x_2, ...
    return dataclasses.replace(kernel, body=_block(kernel.body, names, outer=True))


def _block(block: ir.Block, names: NameTable, outer: bool) -> ir.Block:
    """`outer`: no unrolled loop encloses `block` (its loops' sizes are checked)."""
    out: list[ir.Stmt] = []
    for s in block.stmts:
        if isinstance(s, ir.For) and s.unroll:
            if outer:
                _check_size(s)
            out.extend(_unroll(s, names))
        else:
            out.append(_map_blocks(s, names, outer))
    return ir.Block(tuple(out))


def _map_blocks(s: ir.Stmt, names: NameTable, outer: bool) -> ir.Stmt:
    from ..visit import map_blocks
    return map_blocks(s, lambda b: _block(b, names, outer))


def _iterations(s: ir.For) -> range:
    bounds = (s.start, s.stop, s.step)
    if not all(isinstance(b, ir.Const) for b in bounds):
        errors.compile_error(s.loc, "unroll() needs a range with compile-time bounds "
                                    "(constants or Comptime parameters)")
    start, stop, step = (int(b.value) for b in bounds)
    if step == 0:
        errors.compile_error(s.loc, "range() step must not be zero")
    r = range(start, stop, step)
    if len(r) > MAX_UNROLL:
        errors.compile_error(s.loc, f"unroll() of {len(r)} iterations: at most "
                                    f"{MAX_UNROLL} are unrolled; use a plain range()")
    return r


def _unroll(s: ir.For, names: NameTable) -> list[ir.Stmt]:
    jump = next((j for j in map(escaping_jump, s.body.stmts) if j is not None), None)
    if jump is not None:
        word = "break" if isinstance(jump, ir.Break) else "continue"
        errors.compile_error(jump.loc, f"{word} inside an unrolled loop is not supported; "
                                       f"use a plain range() or an if around the body")
    local = [v.name for v in declared_vars(s.body)]
    out: list[ir.Stmt] = []
    for n, value in enumerate(_iterations(s)):
        # each copy but the first declares its own variables
        renames = {name: names.fresh(name) for name in local} if n > 0 else {}
        body = _copy(s.body, s.var, ir.Const(ty=s.var.ty, value=value, loc=s.loc), renames)
        # inner unrolled loops, now constant
        out.extend(_block(body, names, outer=False).stmts)
    return out


def _copy(body: ir.Block, var: ir.Var, value: ir.Const,
          renames: dict[str, str]) -> ir.Block:
    """One copy of an unrolled body: `substitute(body, var, value)`, then
    `rename_vars(..., renames)`, then `fold_block(...)`, in one walk of the tree rather
    than three (a large unrolled kernel spent most of its compile here)."""
    def expr(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Load):
            if e.var == var:
                return dataclasses.replace(value, loc=e.loc)
            if e.var.name in renames:
                return dataclasses.replace(e, var=ir.Var(renames[e.var.name], e.var.ty))
            return e
        return fold_expr(e)  # (its children substituted, renamed and folded)

    def stmt(s: ir.Stmt) -> list[ir.Stmt]:
        return fold_control(rename_own_vars(map_stmt_exprs(s, expr), renames))
    return map_stmts(body, stmt)
