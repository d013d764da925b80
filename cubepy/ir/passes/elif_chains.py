"""flatten_elif_chains: a long `if/elif/.../else` chain -> a sequence of ifs guarded by
a `done` flag.

An elif chain nests: each `elif` is an If in the `else` of the one before, and so it is
in SPIR-V and in the cpu runtime's Python. Software Vulkan (llvmpipe) computed wrong
results past about 80 nested branches (a 100-branch chain took branch 78), so chains
longer than MAX_ELIF_CHAIN become siblings: `if c0 {done = true; A}`, then
`if !done && c1 {done = true; B}` ... and `if !done {else}`. `&&` short-circuits, so
every condition is evaluated exactly when the chain would have evaluated it.
"""
from __future__ import annotations

import dataclasses

from .. import nodes as ir
from ..names import NameTable
from ..types import bool_
from ..visit import map_blocks
from .needs import elif_chain, is_long_elif_chain
from .rewrite import all_var_names


def flatten_elif_chains(kernel: ir.Kernel) -> ir.Kernel:
    """Flattens every if/elif chain of more than MAX_ELIF_CHAIN branches. The pipeline
    runs it only on a kernel with one (passes/needs.py)."""
    names = NameTable(all_var_names(kernel), style="always_n")  # elif_done_1, ...
    return dataclasses.replace(kernel, body=_block(kernel.body, names))


def _block(block: ir.Block, names: NameTable) -> ir.Block:
    out: list[ir.Stmt] = []
    for s in block.stmts:
        if is_long_elif_chain(s):
            out.extend(_flatten(s, names))
        else:
            out.append(map_blocks(s, lambda b: _block(b, names)))
    return ir.Block(tuple(out))


def _flatten(s: ir.If, names: NameTable) -> list[ir.Stmt]:
    links, final = elif_chain(s)
    loc = s.loc
    done = ir.Var(names.fresh("elif_done"), bool_)
    is_done = ir.Load(ty=bool_, var=done, loc=loc)
    not_done = ir.Unary(ty=bool_, op="not", operand=is_done, loc=loc)
    mark = ir.Assign(var=done, value=ir.Const(ty=bool_, value=True, loc=loc), loc=loc)
    out: list[ir.Stmt] = [ir.Assign(var=done, value=ir.Const(ty=bool_, value=False, loc=loc),
                                    declare=True, loc=loc)]
    for k, link in enumerate(links):
        cond = link.cond if k == 0 else ir.Logical(ty=bool_, op="and", lhs=not_done,
                                                    rhs=link.cond, loc=link.loc)
        then = _block(link.then, names)
        out.append(ir.If(cond=cond, then=ir.Block((mark, *then.stmts)), loc=link.loc))
    if final.stmts:
        out.append(ir.If(cond=not_done, then=_block(final, names), loc=loc))
    return out
