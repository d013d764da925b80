"""Tree helpers shared by the passes: deep rewrites of blocks and small queries."""
from __future__ import annotations

import dataclasses
from typing import Callable

from .. import nodes as ir
from ..visit import child_blocks, map_blocks, map_expr, map_stmt_exprs, walk_all_exprs, walk_stmts


def map_exprs_deep(block: ir.Block, fn: Callable[[ir.Expr], ir.Expr]) -> ir.Block:
    """`block` with `map_expr(e, fn)` applied to every expression of every statement."""
    def stmt(s: ir.Stmt) -> ir.Stmt:
        return map_blocks(map_stmt_exprs(s, fn), lambda b: map_exprs_deep(b, fn))
    return ir.Block(tuple(stmt(s) for s in block.stmts))


def substitute(block: ir.Block, var: ir.Var, value: ir.Expr) -> ir.Block:
    """Every read of `var` in `block` replaced by `value`."""
    def fn(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Load) and e.var == var:
            return dataclasses.replace(value, loc=e.loc)
        return e
    return map_exprs_deep(block, fn)


def _renamed(v: ir.Var | None, names: dict[str, str]) -> ir.Var | None:
    if v is not None and v.name in names:
        return ir.Var(names[v.name], v.ty)
    return v


def rename_vars(block: ir.Block, names: dict[str, str]) -> ir.Block:
    """`block` with the variables named in `names` renamed (declarations and uses)."""
    def expr(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Load) and e.var.name in names:
            return dataclasses.replace(e, var=_renamed(e.var, names))
        return e

    def stmt(s: ir.Stmt) -> ir.Stmt:
        s = map_blocks(map_stmt_exprs(s, expr), lambda b: rename_vars(b, names))
        return rename_own_vars(s, names)
    return ir.Block(tuple(stmt(s) for s in block.stmts))


def rename_own_vars(s: ir.Stmt, names: dict[str, str]) -> ir.Stmt:
    """`s` with the variables it declares or assigns (not those of its expressions or
    nested blocks) renamed as `names` says."""
    if isinstance(s, (ir.Declare, ir.Assign, ir.For)):
        return dataclasses.replace(s, var=_renamed(s.var, names))
    if isinstance(s, ir.AtomicOp) and s.result is not None:
        return dataclasses.replace(s, result=_renamed(s.result, names))
    if isinstance(s, ir.LoadLine):
        return dataclasses.replace(s, parts=tuple(_renamed(v, names) for v in s.parts))
    return s


def declared_vars(block: ir.Block) -> list[ir.Var]:
    """Variables declared anywhere in `block` (Declare, Assign(declare=True), For)."""
    out = []
    for s in walk_stmts(block):
        if isinstance(s, (ir.Declare, ir.For)) or (isinstance(s, ir.Assign) and s.declare):
            out.append(s.var)
    return out


def all_var_names(kernel: ir.Kernel) -> set[str]:
    """Every variable name of the kernel: parameters, declarations and reads."""
    names = {p.name for p in kernel.params}
    names.update(p.name for p in kernel.params)
    names.update(d.buffer.name for d in kernel.shared)
    names.update(d.buffer.name for d in kernel.local_arrays)
    names.update(v.name for v in declared_vars(kernel.body))
    names.update(e.var.name for e in walk_all_exprs(kernel.body) if isinstance(e, ir.Load))
    return names


def contains(stmt_or_block, kinds) -> bool:
    """Whether a statement (or block) holds a statement of one of `kinds`, itself included."""
    if isinstance(stmt_or_block, ir.Block):
        return any(contains(s, kinds) for s in stmt_or_block.stmts)
    if isinstance(stmt_or_block, kinds):
        return True
    return any(contains(b, kinds) for b in child_blocks(stmt_or_block))


def escaping_jump(stmt: ir.Stmt) -> ir.Stmt | None:
    """A Break/Continue inside `stmt` that leaves `stmt` (targets a loop around it)."""
    if isinstance(stmt, (ir.Break, ir.Continue)):
        return stmt
    if isinstance(stmt, (ir.For, ir.While)):
        return None
    for b in child_blocks(stmt):
        for s in b.stmts:
            found = escaping_jump(s)
            if found is not None:
                return found
    return None


def map_stmts(block: ir.Block, fn: Callable[[ir.Stmt], list[ir.Stmt]]) -> ir.Block:
    """Rebuilds `block` bottom-up: nested blocks first, then `fn` on each statement,
    which returns the statements replacing it (splicing is allowed)."""
    out: list[ir.Stmt] = []
    for s in block.stmts:
        out.extend(fn(map_blocks(s, lambda b: map_stmts(b, fn))))
    return ir.Block(tuple(out))


__all__ = ["map_exprs_deep", "substitute", "rename_vars", "rename_own_vars", "declared_vars",
           "all_var_names", "contains", "escaping_jump", "map_stmts", "map_expr"]
