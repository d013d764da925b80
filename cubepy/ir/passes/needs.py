"""What a kernel holds that some pass exists for: the cheap tests that let the pipeline
skip a pass, and leave its module unimported, for a kernel that has nothing for it.

A small kernel's first compile loaded every module its passes live in; four of them
(lines, uniform, unroll, elif_chains: about 80 KB of bytecode, 1.2 ms of a cold first
compile on the development machine) rewrite only what most kernels lack. The package's
entry points of those passes (passes/__init__.py) run these tests, once; the pass
modules do not repeat them.
"""
from __future__ import annotations

from .. import nodes as ir
from ..types import LineType
from ..visit import child_blocks, walk_all_exprs, walk_stmts

MAX_ELIF_CHAIN = 64  # branches an if/elif chain keeps nested; longer ones are flattened


def has_lines(kernel: ir.Kernel) -> bool:
    """Whether some parameter, expression or variable of the kernel is a line."""
    return any(p.line_size != 1 for p in kernel.params) or has_line_values(kernel)


def has_line_values(kernel: ir.Kernel) -> bool:
    """Whether some expression or variable of the kernel is a line."""
    if any(isinstance(e.ty, LineType) for e in walk_all_exprs(kernel.body)):
        return True
    return any(isinstance(getattr(s, "var", None), ir.Var) and isinstance(s.var.ty, LineType)
               for s in walk_stmts(kernel.body))


def holds_barrier(x: ir.Block | ir.Stmt, syncs: frozenset[str]) -> bool:
    """Whether a statement or block holds a Barrier whose op is in `syncs`."""
    if isinstance(x, ir.Block):
        return any(holds_barrier(s, syncs) for s in x.stmts)
    if isinstance(x, ir.Barrier):
        return x.op in syncs
    return any(holds_barrier(b, syncs) for b in child_blocks(x))


def has_async_copies(kernel: ir.Kernel) -> bool:
    """Whether the kernel copies asynchronously (a copy, a commit or a wait)."""
    return any(isinstance(s, ir.ASYNC_STMTS) for s in walk_stmts(kernel.body))


def has_line_accesses(kernel: ir.Kernel) -> bool:
    """Whether the kernel reads or writes a whole line at once."""
    return any(isinstance(s, (ir.LoadLine, ir.StoreLine)) for s in walk_stmts(kernel.body))


def has_unrolled_loop(kernel: ir.Kernel) -> bool:
    """Whether some `for` of the kernel is to be unrolled."""
    return any(isinstance(s, ir.For) and s.unroll for s in walk_stmts(kernel.body))


def elif_chain(s: ir.If) -> tuple[list[ir.If], ir.Block]:
    """The Ifs of the chain starting at `s` and its final else block."""
    links = [s]
    while len(links[-1].orelse.stmts) == 1 and isinstance(links[-1].orelse.stmts[0], ir.If):
        links.append(links[-1].orelse.stmts[0])
    return links, links[-1].orelse


def is_long_elif_chain(s: ir.Stmt) -> bool:
    """Whether `s` starts an if/elif chain of more than MAX_ELIF_CHAIN branches."""
    return isinstance(s, ir.If) and len(elif_chain(s)[0]) > MAX_ELIF_CHAIN


def has_long_elif_chain(kernel: ir.Kernel) -> bool:
    """Whether the kernel holds an if/elif chain of more than MAX_ELIF_CHAIN branches."""
    return any(is_long_elif_chain(s) for s in walk_stmts(kernel.body))
