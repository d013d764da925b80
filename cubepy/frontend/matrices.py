"""The cmma calls (cubepy/cmma.py): fragments of a plane's matrix multiply and the
statements that fill, load, multiply, store and convert them.

A fragment is declared once per kernel (like a LocalArray) and named by a FragVal; the
calls emit the IR's Matrix* statements. What each target has (shapes, element types) is
its `matrix_shapes`: the frontend accepts what some built-in target has and the legalize
pass names a target that lacks it.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from ..cmma import MatrixIdent, MatrixLayout
from ..ir import nodes as n
from ..ir.types import DType, i32, u32
from ..lang import MatrixElement
from ..targets import PORTABLE
from .infer import find
from .intrinsics import CallSite, intrinsic
from .values import Buf, FragArray, FragVal, Py

if TYPE_CHECKING:
    from .build import Builder

_IDENT_NAMES = {"a": "cmma.A", "b": "cmma.B", "accumulator": "cmma.ACCUMULATOR"}


def _shapes_text(shapes) -> str:
    return ", ".join(f"{m}x{n_}x{k}" for m, n_, k in sorted(shapes))


def _portable_elems(ident: str, shape: tuple[int, int, int]) -> set[str]:
    """Element types some built-in target has for a fragment `ident` of `shape`."""
    side = 1 if ident == "accumulator" else 0
    return {pair[side] for pair, shapes in PORTABLE.matrix_shapes_anywhere.items()
            if shape in shapes}


def _elem_shapes(ident: str, elem: str) -> set[tuple[int, int, int]]:
    side = 1 if ident == "accumulator" else 0
    return {s for pair, shapes in PORTABLE.matrix_shapes_anywhere.items()
            if pair[side] == elem for s in shapes}


# -- declarations -------------------------------------------------------------------
@intrinsic("cmma.Matrix", "cmma.Matrices")
def _matrix(b: Builder, node: ast.Call, site: CallSite):
    """`cmma.Matrix(ident, m, n, k, elem[, layout])` and `cmma.Matrices(count, ...)`."""
    name = site.name
    if site.shared_name is None:
        b.error(f"{name}(...) must be assigned to a name: "
                f"acc = {name}({'2, ' if name == 'cmma.Matrices' else ''}"
                f"cmma.ACCUMULATOR, 16, 16, 16, f32)", node)
    count = None
    args = list(node.args)
    if name == "cmma.Matrices":
        b.arity(node, name, 6, 7)
        count = b.ct_int(b.expr(args[0]))
        if count is None or count <= 0:
            b.error("the count of cmma.Matrices must be a positive int known at compile "
                    "time", args[0])
        args = args[1:]
    else:
        b.arity(node, name, 5, 6)
    ident = _ident(b, args[0])
    shape = tuple(_dim(b, a, what) for a, what in zip(args[1:4], "mnk"))
    elem = _elem(b, args[4], ident)
    layout = _layout(b, args[5]) if len(args) == 6 else None
    if ident == "accumulator" and layout is not None:
        b.error("an accumulator has no layout: its loads and stores name one "
                "(cmma.load_with_layout, cmma.store)", args[5])
    if ident != "accumulator" and layout is None:
        b.error(f"an {ident.upper()} fragment needs a layout: cmma.ROW_MAJOR or "
                f"cmma.COL_MAJOR (how its tile lies in memory)", node)
    if elem not in _portable_elems(ident, shape):
        shapes = _elem_shapes(ident, elem)
        b.error(f"no target has a {_shape(shape)} {elem} {_role(ident)} fragment "
                f"({elem} {_role(ident)}s take {_shapes_text(shapes) or 'no shape'}; "
                f"targets per shape: docs/LANGUAGE.md, Matrix units)", node)
    decl = _declare(b, site.shared_name, ident, shape, elem, layout, count)
    return FragArray(decl) if count is not None else FragVal(decl)


def _declare(b: Builder, base: str, ident: str, shape, elem: str, layout, count):
    ctx = b.ctx
    taken = {d.name for d in ctx.matrices}
    name = base
    if not ctx.frame.is_kernel or name in taken:
        name = ctx.names.fresh(base)
        while name in taken:
            name = ctx.names.fresh(base)
    m, n_, k = shape
    decl = n.MatrixDecl(name, ident, m, n_, k, elem, layout, count, loc=ctx.loc)
    ctx.matrices.append(decl)
    return decl


def _shape(shape) -> str:
    return "x".join(str(d) for d in shape)


def _article(word: str) -> str:
    return "an" if word[0] in "AEIOUaeiou" else "a"


def _role(ident: str) -> str:
    if ident == "warpgroup":
        return "warpgroup accumulator"
    return "accumulator" if ident == "accumulator" else ident.upper()


def _ident(b: Builder, node: ast.expr) -> str:
    v = b.expr(node)
    if isinstance(v, Py) and isinstance(v.value, MatrixIdent):
        return v.value.value
    b.error("the first argument of cmma.Matrix is cmma.A, cmma.B or cmma.ACCUMULATOR", node)


def _layout(b: Builder, node: ast.expr) -> Optional[str]:
    v = b.expr(node)
    if isinstance(v, Py) and isinstance(v.value, MatrixLayout):
        return v.value.value
    if isinstance(v, Py) and v.value is None:
        return None
    b.error("a layout is cmma.ROW_MAJOR or cmma.COL_MAJOR", node)


def _dim(b: Builder, node: ast.expr, what: str) -> int:
    v = b.ct_int(b.expr(node))
    if v is None or v <= 0:
        b.error(f"{what} of a cmma fragment must be a positive int known at compile time "
                f"(a literal, a constant or a Comptime[int] parameter)", node)
    return v


def _elem(b: Builder, node: ast.expr, ident: str) -> str:
    v = b.expr(node)
    if isinstance(v, Py) and isinstance(v.value, MatrixElement):
        if ident == "accumulator":
            b.error(f"{v.value.name} is an A/B element type: an accumulator holds f32 "
                    f"(or f16)", node)
        return v.value.name
    ty = b.as_type(v, node)
    allowed = {"f16", "bf16", "f32"}
    if not isinstance(ty, DType) or ty.name not in allowed:
        b.error(f"a cmma fragment holds f16, bf16, f32 or tf32 elements, not "
                f"{getattr(ty, 'name', ty)}", node)
    return ty.name


# -- fragment operands --------------------------------------------------------------
def frag_item(b: Builder, arr: FragArray, node: ast.expr) -> FragVal:
    """`frags[i]`: one fragment of an array (a compile-time index is range checked)."""
    if isinstance(node, (ast.Tuple, ast.Slice)):
        b.error("an array of cmma fragments takes one index: frags[i]", node)
    with b.at(node):
        v = b.expr(node)
        const = b.ct_int(v)
        count = arr.decl.count
        if const is not None:
            if not 0 <= const < count:
                b.error(f"index {const} is out of range for the {count} fragments of "
                        f"{arr.decl.name!r}", node)
            return FragVal(arr.decl, n.Const(ty=u32, value=const, loc=b.ctx.loc))
        return FragVal(arr.decl, _u32(b, v, node, "the index of a fragment array"))


def _u32(b: Builder, v, node: ast.expr, what: str) -> n.Expr:
    """A runtime u32 or i32 expression (a non-negative literal becomes a u32)."""
    const = b.ct_int(v) if isinstance(v, Py) else None
    if const is not None:
        if const < 0:
            b.error(f"{what} must not be negative", node)
        return n.Const(ty=u32, value=const, loc=b.ctx.loc)
    e = b.materialize(v, node)
    b.ctx.unifier.require(e.ty, lambda t: t is u32 or t is i32, b.ctx.loc,
                          lambda t: f"{what} must be u32 or i32, not {t.name}: cast it, "
                                    f"e.g. u32(...)")
    return e


def _frag(b: Builder, node: ast.expr, call: str, *idents: str) -> n.Frag:
    v = b.expr(node)
    if isinstance(v, FragArray):
        b.error(f"{v.decl.name!r} is an array of fragments: pick one, e.g. "
                f"{v.decl.name}[0]", node)
    if not isinstance(v, FragVal):
        b.error(f"{call}() takes a cmma fragment here (cmma.Matrix)", node)
    d = v.decl
    if idents and d.ident not in idents:
        want = " or ".join(_role(i) for i in idents)
        b.error(f"{call}() takes {_article(want)} {want} fragment here, but {d.name!r} is "
                f"{_article(_role(d.ident))} {_role(d.ident)} fragment"
                + (": load an accumulator with cmma.load_with_layout(acc, buffer, offset, "
                   "stride, layout)" if call == "cmma.load" else ""), node)
    return n.Frag(ty=d.storage, matrix=d, index=v.index, loc=b.ctx.loc)


def _buffer(b: Builder, node: ast.expr, call: str, frag: n.Frag) -> tuple[Buf, n.Expr]:
    """The buffer of a load or store (a tensor, an array or shared memory, holding the
    fragment's storage type), and a view's first element (else None)."""
    buf = b.expr(node)
    if not isinstance(buf, Buf):
        b.error(f"{call}() takes a tensor, an array or shared memory here", node)
    if buf.kind == "local":
        b.error(f"{call}() on the LocalArray {buf.ref.name!r}: fragments load from and "
                f"store to global or shared memory", node)
    # A Line buffer is fine: offset and stride count elements, not lines, so a tile
    # staged in shared memory as 16-byte lines is loaded from the same array.
    d = frag.matrix
    if d.warpgroup and call == "cmma.store":
        if buf.ref.elem.name not in ("f32", "f16", "bf16"):
            b.error(f"{call}(): {buf.ref.name!r} holds {buf.ref.elem.name}: a warpgroup "
                    f"accumulator is stored to f32, f16 or bf16 (converted)", node)
    elif buf.ref.elem is not d.storage:
        hint = " (tf32 fragments use f32 buffers)" if d.elem == "tf32" else ""
        b.error(f"{call}(): {buf.ref.name!r} holds {buf.ref.elem.name}, but the fragment "
                f"{d.name!r} holds {d.elem}{hint}", node)
    return buf, buf.start


def _offset(b: Builder, node: ast.expr, start, what: str) -> n.Expr:
    with b.at(node):
        e = _u32(b, b.expr(node), node, what)
        if start is None:
            return e
        if find(e.ty) is not find(start.ty):
            e = n.Cast(ty=start.ty, operand=e, loc=b.ctx.loc)
        return n.Binary(ty=start.ty, op="add", lhs=start, rhs=e, loc=b.ctx.loc)


def _begin(b: Builder, node: ast.Call, site: CallSite, *arity: int) -> None:
    b.arity(node, site.name, *arity)
    b.no_side_effects(site.name, node)


# -- statements -----------------------------------------------------------------------
@intrinsic("cmma.fill")
def _fill(b: Builder, node: ast.Call, site: CallSite):
    _begin(b, node, site, 2)
    frag = _frag(b, node.args[0], site.name)
    value = _element_value(b, node.args[1], frag, "cmma.fill(): the fragment", "value")
    b.emit(n.MatrixFill(frag=frag, value=value, loc=b.ctx.loc))
    return Py(None)


def _element_value(b: Builder, node: ast.expr, frag: n.Frag, holder: str,
                   what: str) -> n.Expr:
    """`node` as a value of the fragment's element (storage) type: a Python number is
    converted, a typed value must have that type."""
    with b.at(node):
        value = b.expr(node)
        if isinstance(value, Py):
            return b.cast_to(frag.ty, value, node)
        value = b.materialize(value, node)
        b.ctx.unifier.unify(value.ty, frag.ty, b.ctx.loc, lambda x, y: (
            f"{holder} holds {y}, the {what} is {x}: cast it, e.g. {y}(...)"))
    return value


@intrinsic("cmma.scale")
def _scale(b: Builder, node: ast.Call, site: CallSite):
    """`cmma.scale(acc, factor)`: acc's elements multiplied by factor, in acc's type."""
    _begin(b, node, site, 2)
    frag = _frag(b, node.args[0], site.name, "accumulator", "warpgroup")
    value = _element_value(b, node.args[1], frag, "cmma.scale(): the accumulator", "factor")
    b.emit(n.MatrixScale(frag=frag, value=value, loc=b.ctx.loc))
    return Py(None)


@intrinsic("cmma.scale_rows", "cmma.scale_cols")
def _scale_by(b: Builder, node: ast.Call, site: CallSite):
    """`cmma.scale_rows(acc, buffer, offset)`: row r of a warpgroup accumulator times
    buffer[offset + r]; `cmma.scale_cols`: column c times buffer[offset + c]."""
    _begin(b, node, site, 3)
    frag = _frag(b, node.args[0], site.name, "accumulator", "warpgroup")
    if not frag.matrix.warpgroup:
        b.error(f"{site.name}() takes a warpgroup accumulator (cmma.WarpgroupAccumulator): "
                f"a plane's fragment keeps its elements in an order its target does not "
                f"document; store it (cmma.store) and scale the stored rows or columns",
                node.args[0])
    buf, start = _buffer(b, node.args[1], site.name, frag)
    offset = _offset(b, node.args[2], start, f"the offset of {site.name}")
    b.emit(n.MatrixScaleBy(frag=frag, buffer=buf.ref, offset=offset,
                           axis=site.name[len("cmma.scale_"):], loc=b.ctx.loc))
    return Py(None)


@intrinsic("cmma.load", "cmma.load_with_layout")
def _load(b: Builder, node: ast.Call, site: CallSite):
    with_layout = site.name == "cmma.load_with_layout"
    _begin(b, node, site, 5 if with_layout else 4)
    idents = ("accumulator",) if with_layout else ("a", "b")
    frag = _frag(b, node.args[0], site.name, *idents)
    buf, start = _buffer(b, node.args[1], site.name, frag)
    offset = _offset(b, node.args[2], start, "the offset of a cmma load")
    stride = _offset(b, node.args[3], None, "the stride of a cmma load")
    layout = _required_layout(b, node.args[4]) if with_layout else None
    b.emit(n.MatrixLoad(frag=frag, buffer=buf.ref, offset=offset, stride=stride,
                        layout=layout, loc=b.ctx.loc))
    return Py(None)


def _required_layout(b: Builder, node: ast.expr) -> str:
    layout = _layout(b, node)
    if layout is None:
        b.error("a layout is cmma.ROW_MAJOR or cmma.COL_MAJOR", node)
    return layout


@intrinsic("cmma.store")
def _store(b: Builder, node: ast.Call, site: CallSite):
    _begin(b, node, site, 5)
    frag = _frag(b, node.args[2], site.name, "accumulator", "warpgroup")
    buf, start = _buffer(b, node.args[0], site.name, frag)
    offset = _offset(b, node.args[1], start, "the offset of a cmma store")
    stride = _offset(b, node.args[3], None, "the stride of a cmma store")
    layout = _required_layout(b, node.args[4])
    if frag.matrix.warpgroup and layout != "row_major":
        b.error("a warpgroup accumulator is stored row major (cmma.ROW_MAJOR)",
                node.args[4])
    b.emit(n.MatrixStore(buffer=buf.ref, offset=offset, frag=frag, stride=stride,
                         layout=layout, loc=b.ctx.loc))
    return Py(None)


@intrinsic("cmma.execute")
def _execute(b: Builder, node: ast.Call, site: CallSite):
    _begin(b, node, site, 4)
    fa = _frag(b, node.args[0], site.name, "a")
    fb = _frag(b, node.args[1], site.name, "b")
    fc = _frag(b, node.args[2], site.name, "accumulator")
    fd = _frag(b, node.args[3], site.name, "accumulator")
    a, bm, c, d = (f.matrix for f in (fa, fb, fc, fd))
    if a.k != bm.k:
        b.error(f"cmma.execute(): A is {a.m}x{a.k} (k = {a.k}) but B is {bm.k}x{bm.n} "
                f"(k = {bm.k}): their k must match", node.args[1])
    for f, arg in ((bm, node.args[1]), (c, node.args[2]), (d, node.args[3])):
        if (f.m, f.n, f.k) != (a.m, a.n, a.k):
            b.error(f"cmma.execute(): {f.name!r} is {f.shape_text}, A is {a.shape_text}: "
                    f"every fragment of one multiply has the same m x n x k", arg)
    if a.elem != bm.elem:
        b.error(f"cmma.execute(): A holds {a.elem}, B holds {bm.elem}: they must match",
                node.args[1])
    if c.elem != d.elem:
        b.error(f"cmma.execute(): C holds {c.elem}, D holds {d.elem}: they must match "
                f"(convert with cmma.cast)", node.args[3])
    if (a.elem, c.elem) not in PORTABLE.matrix_shapes_anywhere:
        pairs = ", ".join(f"{x} x {x} + {y}" for x, y in
                          sorted(PORTABLE.matrix_shapes_anywhere))
        b.error(f"cmma.execute(): no target multiplies {a.elem} fragments into an {c.elem} "
                f"accumulator (there are {pairs})", node)
    b.emit(n.MatrixExecute(a=fa, b=fb, c=fc, d=fd, loc=b.ctx.loc))
    return Py(None)


@intrinsic("cmma.cast")
def _cast(b: Builder, node: ast.Call, site: CallSite):
    """`cmma.cast(acc, elem)`: a new accumulator of `elem` holding acc's elements."""
    _begin(b, node, site, 2)
    src = _frag(b, node.args[0], site.name, "accumulator")
    elem = _elem(b, node.args[1], "accumulator")
    d = src.matrix
    shape = (d.m, d.n, d.k)
    if elem not in _portable_elems("accumulator", shape):
        b.error(f"cmma.cast(): no target has a {d.shape_text} {elem} accumulator",
                node.args[1])
    decl = _declare(b, site.shared_name or f"{d.name}_{elem}", "accumulator", shape, elem,
                    None, None)
    dst = n.Frag(ty=decl.storage, matrix=decl, loc=b.ctx.loc)
    b.emit(n.MatrixCast(src=src, dst=dst, loc=b.ctx.loc))
    return FragVal(decl)


@intrinsic("tf32")
def _tf32(b: Builder, node: ast.Call, site: CallSite):
    b.error("tf32 is only the element type of a cmma fragment (cmma.Matrix(cmma.A, 16, 16, "
            "8, tf32, ...)), not a cast: its buffers and values are f32", node)
