"""lower_line_access: whole-line accesses back to element accesses, for targets that have
no vector loads and stores (`Target.vector_lines` False: WGSL, the cpu runtime).

A `LoadLine` of n scalars becomes the n assignments `part_k = buffer[line * n + k]`, a
`StoreLine` the n stores `buffer[line * n + k] = value_k`: exactly what scalarize_lines
makes for a buffer whose lines are not accessed whole.
"""
from __future__ import annotations

import dataclasses

from .. import nodes as ir
from .rewrite import map_stmts


def lower_line_access(kernel: ir.Kernel) -> ir.Kernel:
    """The kernel with every LoadLine and StoreLine split into element accesses (the
    package's entry point runs it only on a kernel that has them: passes/needs.py)."""
    return dataclasses.replace(kernel, body=map_stmts(kernel.body, element_accesses))


def line_element_index(line: ir.Expr, size: int, k: int) -> ir.Expr:
    """`line * size + k`, element k of line `line`, in the line index's own integer type."""
    ty, loc = line.ty, line.loc
    out = ir.Binary(ty=ty, op="mul", lhs=line, rhs=ir.Const(ty=ty, value=size, loc=loc), loc=loc)
    if k:
        out = ir.Binary(ty=ty, op="add", lhs=out, rhs=ir.Const(ty=ty, value=k, loc=loc), loc=loc)
    return out


def element_accesses(s: ir.Stmt) -> list[ir.Stmt]:
    """`s` as element accesses when it is a whole-line access, else `[s]`."""
    if isinstance(s, ir.LoadLine):
        n = len(s.parts)
        return [ir.Assign(var=v, value=ir.Index(ty=v.ty, buffer=s.buffer, loc=s.loc,
                                                index=line_element_index(s.line, n, k)),
                          loc=s.loc) for k, v in enumerate(s.parts)]
    if isinstance(s, ir.StoreLine):
        n = len(s.values)
        return [ir.Store(buffer=s.buffer, index=line_element_index(s.line, n, k), value=v,
                         loc=s.loc) for k, v in enumerate(s.values)]
    return [s]
