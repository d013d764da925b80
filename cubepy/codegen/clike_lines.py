"""Whole-line accesses (LoadLine / StoreLine) as vector loads and stores, for the C-like
targets (CUDA, Metal).

A line of n elements moves in accesses of at most 16 bytes (`MAX_LINE_ACCESS_BYTES`): a
line of 4 f32 is one float4, of 8 f16 one uint4 on CUDA (two half4 on Metal), of 8 f32
two float4. The dialect names the type of one access and how its elements are read and
packed (`Dialect.line_piece`); with none for an element type the line goes element by
element. The address is a multiple of the access's bytes: the line index times the
line's bytes from a buffer the launch found aligned (`Param.aligned`), or from shared
memory, which the generator declares aligned to 16 bytes (cuda.py's `_aligned_shared`).
The dialect's vocabulary for a vector access (`LinePiece`) is in clike_dialect.py; this
module is imported at a kernel's first whole-line access.

A checked launch keeps the vector access for lines wholly inside the buffer and checks
each element of the others:

    if (last element in range) { vector access } else { element accesses }
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..abi import MAX_LINE_ACCESS_BYTES
from ..ir import nodes as n
from ..ir.passes.line_access import element_accesses, line_element_index
from .clike_dialect import LinePiece

if TYPE_CHECKING:
    from .clike import CEmitter


def _access(em: "CEmitter", s: n.LoadLine | n.StoreLine,
            size: int) -> tuple[int, LinePiece | None]:
    """The elements of one access and how the dialect moves them: as many as fit in 16
    bytes and in one of the dialect's vector types (Metal's have 4 components at most);
    None when it has none for the element type."""
    per = min(size, MAX_LINE_ACCESS_BYTES // s.buffer.elem.itemsize)
    while per >= 2:
        piece = em.d.line_piece(em, s.buffer.elem, per, s.buffer.space)
        if piece is not None:
            return per, piece
        per //= 2
    return 1, None


def load_line(em: "CEmitter", s: n.LoadLine) -> None:
    """`parts = buffer[line]` as vector loads (the elements past the end read 0)."""
    size = len(s.parts)
    per, piece = _access(em, s, size)
    if piece is None:
        for x in element_accesses(s):
            em.stmt_assign(x)
        return

    def vector() -> None:
        for j in range(0, size, per):
            ptr = _pointer(em, s, size, j, piece, const=True)
            tmp = em.fresh("line")
            em.line(f"const {piece.type} {tmp} = *{ptr};")
            for k in range(per):
                em.line(f"{em.var(s.parts[j + k])} = {piece.get(tmp, k)};")

    def elements() -> None:
        for x in element_accesses(s):
            em.stmt_assign(x)
    _checked_or_not(em, s, size, vector, elements)


def store_line(em: "CEmitter", s: n.StoreLine) -> None:
    """`buffer[line] = values` as vector stores (the elements past the end dropped)."""
    size = len(s.values)
    per, piece = _access(em, s, size)
    if piece is None:
        for x in element_accesses(s):
            em.stmt_store(x)
        return
    values = [em.expr(v) for v in s.values]
    if not all(isinstance(v, (n.Load, n.Const)) for v in s.values):
        # each computed once, before the access (a checked launch's paths both use them)
        for k, v in enumerate(s.values):
            tmp = em.fresh("value")
            em.line(f"const {em.d.type_name(v.ty)} {tmp} = {values[k]};")
            values[k] = tmp

    def vector() -> None:
        for j in range(0, size, per):
            ptr = _pointer(em, s, size, j, piece, const=False)
            em.line(f"*{ptr} = {piece.make(values[j:j + per])};")

    def elements() -> None:
        buf = em.buffer(s.buffer)
        for k in range(size):
            index = line_element_index(s.line, size, k)
            em.line(f"if ({em.bounds_check(s.buffer, index)}) "
                    f"{buf}[{em.expr(index)}] = {values[k]};")
    _checked_or_not(em, s, size, vector, elements)


def _pointer(em: "CEmitter", s: n.LoadLine | n.StoreLine, size: int, first: int,
             piece: LinePiece, const: bool) -> str:
    """A pointer to the access starting at element `first` of the line."""
    ref = f"{em.buffer(s.buffer)}[{em.expr(line_element_index(s.line, size, first))}]"
    return em.d.vector_pointer(ref, piece.type, const)


def _checked_or_not(em: "CEmitter", s: n.LoadLine | n.StoreLine, size: int,
                    vector: Callable[[], None], elements: Callable[[], None]) -> None:
    """`vector()` alone, or (checked) when the whole line is in range, else `elements()`."""
    cond = em.bounds_check(s.buffer, line_element_index(s.line, size, size - 1))
    if cond is None:
        vector()
        return
    em.branch(cond, vector, elements)
