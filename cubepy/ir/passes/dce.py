"""remove_dead_code: unreachable statements and variables nobody reads."""
from __future__ import annotations

import dataclasses

from .. import nodes as ir
from ..visit import map_blocks, walk_all_exprs
from .rewrite import map_stmts

_JUMPS = (ir.Terminate, ir.Break, ir.Continue)


def _cut_after_jumps(block: ir.Block) -> ir.Block:
    out: list[ir.Stmt] = []
    for s in block.stmts:
        out.append(map_blocks(s, _cut_after_jumps))
        if isinstance(s, _JUMPS):
            break
    return ir.Block(tuple(out))


def _read_vars(body: ir.Block) -> set[str]:
    return {e.var.name for e in walk_all_exprs(body) if isinstance(e, ir.Load)}


def _drop_unread(block: ir.Block, read: set[str]) -> ir.Block:
    def fn(s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, (ir.Declare, ir.Assign)) and s.var.name not in read:
            return []  # values are pure: dropping the assignment changes nothing else
        if isinstance(s, ir.AtomicOp) and s.op == "load" and (
                s.result is None or s.result.name not in read):
            return []  # a relaxed load nobody reads changes nothing
        if isinstance(s, ir.LoadLine) and not any(v.name in read for v in s.parts):
            return []  # a read nobody uses (a part still read keeps the whole access)
        if isinstance(s, ir.AtomicOp) and s.result is not None and s.result.name not in read:
            return [dataclasses.replace(s, result=None)]
        return [s]
    return map_stmts(block, fn)


def remove_dead_code(kernel: ir.Kernel) -> ir.Kernel:
    """Drops statements after terminate/break/continue in the same block, and every
    declaration and assignment of a variable that is never read (to a fixpoint)."""
    body = _cut_after_jumps(kernel.body)
    while True:
        new = _drop_unread(body, _read_vars(body))
        if new == body:
            break
        body = new
    return dataclasses.replace(kernel, body=body)
