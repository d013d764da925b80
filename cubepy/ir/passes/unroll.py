"""unroll_loops: `for i in unroll(range(...))` with constant bounds -> copies of the body."""
from __future__ import annotations

import dataclasses

from ... import errors
from .. import nodes as ir
from .fold import fold_block
from .rewrite import all_var_names, declared_vars, escaping_jump, fresh_name, rename_vars, \
    substitute

MAX_UNROLL = 1024


def unroll_loops(kernel: ir.Kernel) -> ir.Kernel:
    """Expands every For(unroll=True); its body copies see the loop variable as a
    constant and get their own copies of the variables they declare."""
    taken = all_var_names(kernel)
    return dataclasses.replace(kernel, body=_block(kernel.body, taken))


def _block(block: ir.Block, taken: set[str]) -> ir.Block:
    out: list[ir.Stmt] = []
    for s in block.stmts:
        if isinstance(s, ir.For) and s.unroll:
            out.extend(_unroll(s, taken))
        else:
            out.append(_map_blocks(s, taken))
    return ir.Block(tuple(out))


def _map_blocks(s: ir.Stmt, taken: set[str]) -> ir.Stmt:
    from ..visit import map_blocks
    return map_blocks(s, lambda b: _block(b, taken))


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


def _unroll(s: ir.For, taken: set[str]) -> list[ir.Stmt]:
    jump = next((j for j in map(escaping_jump, s.body.stmts) if j is not None), None)
    if jump is not None:
        word = "break" if isinstance(jump, ir.Break) else "continue"
        errors.compile_error(jump.loc, f"{word} inside an unrolled loop is not supported; "
                                       f"use a plain range() or an if around the body")
    local = [v.name for v in declared_vars(s.body)]
    out: list[ir.Stmt] = []
    for n, value in enumerate(_iterations(s)):
        body = substitute(s.body, s.var, ir.Const(ty=s.var.ty, value=value, loc=s.loc))
        if n > 0 and local:  # each copy declares its own variables
            body = rename_vars(body, {name: fresh_name(name, taken) for name in local})
        body = fold_block(body)
        out.extend(_block(body, taken).stmts)  # inner unrolled loops, now constant
    return out
