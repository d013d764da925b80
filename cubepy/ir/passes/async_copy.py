"""lower_async_copies: asynchronous copies as plain copies, for targets without them
(`Target.async_copies` False: WGSL, Metal, the cpu runtime).

`pipeline.memcpy_async(dst, i, src, j)` becomes the element copies
`dst[i * n + k] = src[j * n + k]`, and commit and wait vanish. That is indistinguishable
from the asynchronous copy in a correct kernel: the copied data may only be read after
a wait (and, by other units, a sync_cube), and the destination is not otherwise written
while a copy to it is in flight. A checked launch keeps its element checks: a source
element past the end reads 0, a destination element past the end is dropped.
"""
from __future__ import annotations

import dataclasses

from .. import nodes as ir
from .line_access import line_element_index
from .rewrite import map_stmts


def lower_async_copies(kernel: ir.Kernel) -> ir.Kernel:
    """The kernel with every asynchronous copy a plain copy and no commit or wait (the
    package's entry point runs it only on a kernel that has them: passes/needs.py)."""
    return dataclasses.replace(kernel, body=map_stmts(kernel.body, plain_copy))


def plain_copy(s: ir.Stmt) -> list[ir.Stmt]:
    """`s` as element copies when it is an AsyncCopy, nothing for a commit or a wait,
    else `[s]`. The frontend makes both line indices variables or constants, so they
    are not recomputed from memory the copy changes."""
    if isinstance(s, (ir.AsyncCommit, ir.AsyncWait)):
        return []
    if not isinstance(s, ir.AsyncCopy):
        return [s]
    out: list[ir.Stmt] = []
    for k in range(s.size):
        value = ir.Index(ty=s.src.elem, buffer=s.src, loc=s.loc,
                         index=element_index(s.src_line, s.size, k))
        out.append(ir.Store(buffer=s.dst, index=element_index(s.dst_line, s.size, k),
                            value=value, loc=s.loc))
    return out


def element_index(line: ir.Expr, size: int, k: int) -> ir.Expr:
    """`line * size + k` in the line index's type (`line` itself for a copy of one
    element)."""
    return line if size == 1 else line_element_index(line, size, k)
