"""The pipeline calls (cubepy/pipeline.py): asynchronous copies from global memory into
shared memory, and the commit and wait that order them (docs/LANGUAGE.md,
"Asynchronous copies")."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ir import nodes as n
from .intrinsics import CallSite, intrinsic
from .values import Buf, Py

if TYPE_CHECKING:
    from .build import Builder

COPY_BYTES = (4, 8, 16)  # what one cp.async moves


@intrinsic("pipeline.memcpy_async")
def _memcpy_async(b: Builder, node: ast.Call, site: CallSite):
    """`pipeline.memcpy_async(dst, dst_index, src, src_index)`."""
    b.arity(node, site.name, 4)
    b.no_side_effects(site.name, node)
    dst_node, dst_index_node, src_node, src_index_node = node.args
    dst = b.expr(dst_node)
    if not (isinstance(dst, Buf) and dst.kind == "shared"):
        b.error(f"{site.name}() copies into shared memory: its first argument must be a "
                f"SharedMemory array, not {_what(dst)}", dst_node)
    src = b.expr(src_node)
    if not (isinstance(src, Buf) and src.kind in ("tensor", "array")):
        b.error(f"{site.name}() copies from global memory: its third argument must be a "
                f"Tensor or Array parameter, not {_what(src)}", src_node)
    elem = dst.ref.elem
    if src.ref.elem is not elem:
        b.error(f"{site.name}(): {src.ref.name!r} holds {src.ref.elem.name} but "
                f"{dst.ref.name!r} holds {elem.name}: both must hold the same type",
                src_node)
    if src.line != dst.line:
        b.error(f"{site.name}(): {src.ref.name!r} has lines of {src.line} but "
                f"{dst.ref.name!r} of {dst.line}: a copy moves one item of both, so their "
                f"line sizes must match", src_node)
    nbytes = elem.itemsize * dst.line
    if elem.is_bool or nbytes not in COPY_BYTES:
        b.error(f"{site.name}() moves 4, 8 or 16 bytes at once, but an item of "
                f"{dst.ref.name!r} ({_item(elem.name, dst.line)}) is "
                f"{'a bool' if elem.is_bool else f'{nbytes} bytes'}: copy lines of "
                f"4, 8 or 16 bytes (e.g. Line[f16] of 8)", node)
    dst_line = _line_index(b, dst, dst_index_node)
    src_line = _line_index(b, src, src_index_node)
    b.emit(n.AsyncCopy(dst=dst.ref, dst_line=dst_line, src=src.ref, src_line=src_line,
                       size=dst.line, loc=b.ctx.loc))
    return Py(None)


def _line_index(b: Builder, buf: Buf, node: ast.expr) -> n.Expr:
    """The item index `buf[node]` names, as a u32 clamped so that its element indices do
    not wrap around, in a variable or a constant (a plain copy then never recomputes it
    from memory it has changed)."""
    with b.at(node):
        index = b.as_u32(b.buffer_index(buf, node))
        if buf.line > 1 and not isinstance(index, n.Const):
            index = b.clamped_line(index, buf.line)
        return b.once(index, f"{buf.ref.name}_item")


@intrinsic("pipeline.commit")
def _commit(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, site.name, 0)
    b.no_side_effects(site.name, node)
    b.emit(n.AsyncCommit(loc=b.ctx.loc))
    return Py(None)


@intrinsic("pipeline.wait")
def _wait(b: Builder, node: ast.Call, site: CallSite):
    b.arity(node, site.name, 1)
    b.no_side_effects(site.name, node)
    pending = b.ct_int(b.expr(node.args[0]))
    if pending is None or pending < 0:
        b.error(f"{site.name}(n): n, the groups of copies that may still be in flight, "
                f"must be an int >= 0 known at compile time (a literal, a constant or a "
                f"Comptime[int] parameter)", node.args[0])
    b.emit(n.AsyncWait(pending=pending, loc=b.ctx.loc))
    return Py(None)


def _what(v) -> str:
    if isinstance(v, Buf):
        return {"tensor": "a Tensor", "array": "an Array", "shared": "shared memory",
                "local": "a LocalArray"}[v.kind] + f" ({v.ref.name!r})"
    return "a value"


def _item(elem: str, line: int) -> str:
    return elem if line == 1 else f"Line[{elem}] of {line}"
