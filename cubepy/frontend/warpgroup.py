"""The warpgroup calls of cubepy.cmma (Hopper's wgmma): the accumulator declaration, the
multiply, its fence / commit / wait, and `wg_offset`, the shared memory layout the
multiply reads (docs/LANGUAGE.md, "Warpgroup matrix multiply (wgmma)").

The accumulator is a MatrixDecl of ident "warpgroup" (64 x n x 16, f32), so cmma.fill
and cmma.store take it as they take a plane's accumulator (matrices.py). Which targets
have the multiply is the legalize pass's business (Target.warpgroup_mma).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.types import DType, u32
from .infer import find
from .intrinsics import CallSite, intrinsic
from .matrices import _begin, _declare, _frag, _layout, _offset, _u32
from .values import Buf, Py

if TYPE_CHECKING:
    from .build import Builder


@intrinsic("cmma.WarpgroupAccumulator")
def _accumulator(b: Builder, node: ast.Call, site: CallSite):
    """`cmma.WarpgroupAccumulator(n, f32)`."""
    from .values import FragVal
    if site.shared_name is None:
        b.error("cmma.WarpgroupAccumulator(...) must be assigned to a name: "
                "acc = cmma.WarpgroupAccumulator(128, f32)", node)
    b.arity(node, site.name, 2)
    width = b.ct_int(b.expr(node.args[0]))
    if width not in n.WARPGROUP_N:
        b.error("the n of a warpgroup accumulator is a compile-time multiple of 8 from 8 "
                "to 256 (the tile is 64 x n)", node.args[0])
    elem = b.as_type(b.expr(node.args[1]), node.args[1])
    if not isinstance(elem, DType) or elem.name != "f32":
        b.error(f"a warpgroup accumulator holds f32, not {getattr(elem, 'name', elem)}",
                node.args[1])
    decl = _declare(b, site.shared_name, "warpgroup",
                    (n.WARPGROUP_M, width, n.WARPGROUP_K), "f32", None, None)
    return FragVal(decl)


def _tile(b: Builder, node: ast.Call, i: int, what: str) -> tuple[n.BufferRef, n.Expr, int]:
    """The shared array, first element and row count of operand `what` (args i..i+2)."""
    buf = b.expr(node.args[i])
    if not isinstance(buf, Buf) or buf.kind != "shared":
        b.error(f"cmma.wg_mma() reads {what} from shared memory (a SharedMemory array)",
                node.args[i])
    if buf.ref.elem.name not in n.WARPGROUP_ELEMS + n.WARPGROUP_FP8:
        b.error(f"cmma.wg_mma(): {buf.ref.name!r} holds {buf.ref.elem.name}; the warpgroup "
                f"multiply takes f16, bf16, e4m3 or e5m2 A and B", node.args[i])
    offset = _offset(b, node.args[i + 1], buf.start, f"the offset of {what}")
    rows = b.ct_int(b.expr(node.args[i + 2]))
    if rows is None or rows < 8 or rows % 8:
        b.error(f"the rows of {what}'s tile must be a compile-time positive multiple of 8",
                node.args[i + 2])
    return buf.ref, offset, rows


def _swizzle(b: Builder, node: ast.Call, i: int) -> int:
    """The optional compile-time swizzle argument `i` of `node`: 0 (the core-matrix
    layout) or 128 (the 128-byte swizzle)."""
    if len(node.args) <= i:
        return 0
    swizzle = b.ct_int(b.expr(node.args[i]))
    if swizzle not in n.WARPGROUP_SWIZZLES:
        b.error("the swizzle of a warpgroup tile is a compile-time 0 (core matrices) or "
                "128 (the 128-byte swizzle)", node.args[i])
    return swizzle


@intrinsic("cmma.wg_mma")
def _wg_mma(b: Builder, node: ast.Call, site: CallSite):
    _begin(b, node, site, 8, 9)
    acc = _frag(b, node.args[0], site.name, "warpgroup")
    a, a_offset, a_rows = _tile(b, node, 1, "A")
    bb, b_offset, b_rows = _tile(b, node, 4, "B")
    fp8 = a.elem.name in n.WARPGROUP_FP8
    if a.elem is not bb.elem and not (fp8 and bb.elem.name in n.WARPGROUP_FP8):
        b.error(f"cmma.wg_mma(): A holds {a.elem.name}, B holds {bb.elem.name}: they must "
                f"match (or both be 8-bit: e4m3 and e5m2 mix)", node.args[4])
    layout = _layout(b, node.args[7])
    if layout is None:
        b.error("B's layout is cmma.ROW_MAJOR (its tile stored k x n) or cmma.COL_MAJOR "
                "(n x k)", node.args[7])
    if fp8 and layout != "col_major":
        b.error("cmma.wg_mma(): an 8-bit B is read K-major only: store it n x k and pass "
                "cmma.COL_MAJOR (wgmma transposes 16-bit tiles only)", node.args[7])
    need_a, need_b = 64, acc.matrix.n if layout == "col_major" else 16
    for rows, need, arg, what in ((a_rows, need_a, node.args[3], "A"),
                                  (b_rows, need_b, node.args[6], "B")):
        if rows < need:
            b.error(f"cmma.wg_mma(): {what}'s tile has {rows} rows, fewer than the {need} "
                    f"one multiply reads", arg)
    swizzle = _swizzle(b, node, 8)
    b.emit(n.WarpgroupMma(acc=acc, a=a, a_offset=a_offset, a_rows=a_rows, b=bb,
                          b_offset=b_offset, b_rows=b_rows, b_layout=layout,
                          swizzle=swizzle, loc=b.ctx.loc))
    return Py(None)


@intrinsic("cmma.wg_fence", "cmma.wg_commit", "cmma.wg_wait")
def _wg_sync(b: Builder, node: ast.Call, site: CallSite):
    op = site.name[len("cmma.wg_"):]
    pending = 0
    if op == "wait":
        _begin(b, node, site, 1)
        pending = b.ct_int(b.expr(node.args[0]))
        if pending is None or not 0 <= pending <= 7:
            b.error("cmma.wg_wait(n): n is a compile-time int from 0 to 7 (the committed "
                    "groups that may still run)", node.args[0])
    else:
        _begin(b, node, site, 0)
    b.emit(n.WarpgroupSync(op=op, pending=pending, loc=b.ctx.loc))
    return Py(None)


@intrinsic("cmma.wg_offset")
def _wg_offset(b: Builder, node: ast.Call, site: CallSite):
    """((col / 8) * (rows / 8) + row / 8) * 64 + (row % 8) * 8 + col % 8, in u32; with
    the 128-byte swizzle ((col / 64) * rows + row) * 64 + (((col / 8) % 8) ^ (row % 8)) *
    8 + col % 8 (wgmma_layout.offset). An optional fifth argument, the element type,
    makes it the layout of 8-bit elements: 16 where 16-bit ones have 8 (16 bytes)."""
    b.arity(node, site.name, 3, 4, 5)
    rows = b.ct_int(b.expr(node.args[2]))
    if rows is None or rows < 8 or rows % 8:
        b.error("the rows of a cmma.wg_offset tile must be a compile-time positive "
                "multiple of 8", node.args[2])
    loc = b.ctx.loc

    def operand(arg: ast.expr, what: str) -> n.Expr:
        with b.at(arg):
            e = _u32(b, b.expr(arg), arg, what)
        return e if find(e.ty) is u32 else n.Cast(ty=u32, operand=e, loc=loc)

    def k(v: int) -> n.Expr:
        return n.Const(ty=u32, value=v, loc=loc)

    def op(name: str, x: n.Expr, y: n.Expr) -> n.Expr:
        return n.Binary(ty=u32, op=name, lhs=x, rhs=y, loc=loc)

    row = b.once(operand(node.args[0], "the row of cmma.wg_offset"), "wg_row")
    col = b.once(operand(node.args[1], "the column of cmma.wg_offset"), "wg_col")
    swizzle = _swizzle(b, node, 3)
    e = 3  # log2 of the elements in 16 bytes: 8 (16-bit), 16 (8-bit)
    if len(node.args) > 4:
        elem = b.as_type(b.expr(node.args[4]), node.args[4])
        if not isinstance(elem, DType) or elem.name not in n.WARPGROUP_ELEMS + n.WARPGROUP_FP8:
            b.error("the element type of cmma.wg_offset is f16, bf16, e4m3 or e5m2 (the "
                    "multiply's inputs)", node.args[4])
        e = 4 if elem.itemsize == 1 else 3
    if swizzle == 128:  # rows of 128 bytes: 2^(e + 3) elements
        block = op("add", op("mul", op("shr", col, k(e + 3)), k(rows)), row)
        chunk = op("bitxor", op("bitand", op("shr", col, k(e)), k(7)), op("bitand", row, k(7)))
        inner = op("add", op("shl", chunk, k(e)), op("bitand", col, k((1 << e) - 1)))
        return op("add", op("shl", block, k(e + 3)), inner)
    core = op("add", op("mul", op("shr", col, k(e)), k(rows // 8)), op("shr", row, k(3)))
    inner = op("add", op("shl", op("bitand", row, k(7)), k(e)),
               op("bitand", col, k((1 << e) - 1)))
    return op("add", op("shl", core, k(e + 3)), inner)
