"""Indexing and views: `t[i, j, ...]` through a tensor's strides, `s[i, j]` on a
multi-dimensional SharedMemory, 1-D views `x[a:b]` / `x[a:]`, and the shape queries
`t.shape[d]` / `t.stride[d]` (and their call forms on views and shared memory).

Everything lowers to the flat index the IR already has (offset = sum(i_k * stride_k),
a view adds its start), so no code generator knows about any of it. Offsets are u32
arithmetic: an i32 index is converted to u32 (a negative index does not wrap around
as in Python; it becomes a huge one). For a checked launch each index is also checked
against its dimension (a view's index against the view's length): a failing one makes
the flat index OUT_OF_RANGE, which the code generators' buffer check then refuses
(read 0, store dropped), so one mechanism serves every target
(docs/LANGUAGE.md, "Multi-dimensional indexing and views").
"""
from __future__ import annotations

import ast
import dataclasses
import math

from ..ir import nodes as n
from ..ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)
from ..ir.types import DType, bool_, u32
from .infer import find
from .values import Buf, Py, Tup, is_number

_SHAPE_METHODS = ("shape", "stride")
OUT_OF_RANGE = 2**32 - 1  # a flat index past every buffer (lengths are at most 2**32 - 1)


class IndexMixin:
    """Index and view building for Builder."""

    # -- indices ------------------------------------------------------------------------
    def buffer_index(self, buf: Buf, node: ast.expr) -> n.Expr:
        """The flat index of `buf[node]`: one index is flat (a view adds its start), a
        tuple goes through the strides (a tensor) or the compile-time shape (shared)."""
        if isinstance(node, ast.Slice):
            self.error("a slice x[a:b] is a view: assign it to a name (v = x[a:b]) and "
                       "index the view; a slice cannot be stored to", node)
        if not isinstance(node, ast.Tuple):
            index = self.index(node)
            if buf.start is None:
                return index
            i = self.as_u32(index)
            return self.guarded(self.u32_add(buf.start, i), [self.below(i, buf.length)])
        if any(isinstance(e, (ast.Slice, ast.Starred)) for e in node.elts):
            self.error("slices are 1-D views: x[a:b]; t[i, a:b] is not supported", node)
        name = buf.ref.name
        if buf.start is not None:
            self.error(f"{name!r} is a 1-D view: it takes one index, got "
                       f"{len(node.elts)}", node)
        if buf.kind == "array":
            self.error(f"{name!r} is an Array (1-D, no strides): it takes one index, got "
                       f"{len(node.elts)}; use a Tensor parameter for t[i, j]", node)
        if buf.kind == "shared":
            return self.shared_offset(buf, node)
        return self.strided_offset(buf, node)

    def index_terms(self, node: ast.Tuple) -> list[n.Expr]:
        """Each index of a tuple as u32 (compile-time negatives are errors)."""
        terms = []
        for e in node.elts:
            v = self.expr(e)
            if isinstance(v, Py) and isinstance(v.value, int) and not isinstance(v.value, bool):
                if v.value < 0:
                    self.error(f"negative index {v.value}: indices do not wrap around in "
                               f"kernels (write the dimension minus one, e.g. "
                               f"t.shape[d] - 1)", e)
                if v.value > OUT_OF_RANGE:
                    self.error(f"the index {v.value} does not fit in u32", e)
                terms.append(n.Const(ty=u32, value=v.value, loc=self.ctx.loc))
                continue
            terms.append(self.as_u32(self.index_value(v, e)))  # evaluated once
        return terms

    def strided_offset(self, buf: Buf, node: ast.Tuple) -> n.Expr:
        """`t[i, j, ...]` = t[i * t.stride(0) + j * t.stride(1) + ...]; the launch checks
        that the tensor has as many dimensions as there are indices."""
        ref = buf.ref
        if buf.line > 1:
            self.error(f"t[i, j] on the Line tensor {ref.name!r} is not supported: strides "
                       f"count elements and an index counts lines; compute the line "
                       f"index, e.g. {ref.name}[(i * {ref.name}.stride(0) + j) // "
                       f"{ref.name}.line_size()]", node)
        self.require_rank(ref.name, len(node.elts), node)
        loc = self.ctx.loc
        offset, checks = None, []
        for d, term in enumerate(self.index_terms(node)):
            dim = n.Const(ty=u32, value=d, loc=loc)
            stride = n.Meta(ty=u32, kind="stride", buffer=ref, loc=loc, dim=dim)
            part = n.Binary(ty=u32, op="mul", lhs=term, rhs=stride, loc=loc)
            offset = part if offset is None else self.u32_add(offset, part)
            checks.append(self.below(term, n.Meta(ty=u32, kind="shape", buffer=ref, loc=loc,
                                                  dim=dim)))
        return self.guarded(offset, checks)

    def require_rank(self, name: str, rank: int, node: ast.AST) -> None:
        """Records that tensor `name` is indexed with `rank` indices (one count per
        kernel: the launch checks the tensor's rank against it)."""
        seen = self.ctx.index_ranks.get(name)
        if seen is None:
            self.ctx.index_ranks[name] = (rank, self.ctx.loc)
        elif seen[0] != rank:
            self.error(f"{name!r} is indexed with {rank} indices here but with {seen[0]} "
                       f"at line {seen[1].lineno}: a tensor has one rank", node)

    def shared_offset(self, buf: Buf, node: ast.Tuple) -> n.Expr:
        """`s[i, j]` on SharedMemory(T, (rows, cols)): row-major, compile-time strides."""
        shape = buf.dims
        if len(node.elts) != len(shape):
            self.error(f"the shared memory {buf.ref.name!r} has {len(shape)} "
                       f"dimension{'s' if len(shape) != 1 else ''} {tuple(shape)}: it takes "
                       f"{len(shape)} indices (or one flat index), got {len(node.elts)}",
                       node)
        loc = self.ctx.loc
        offset, checks = None, []
        for d, (term, e) in enumerate(zip(self.index_terms(node), node.elts)):
            if isinstance(term, n.Const) and term.value >= shape[d]:
                self.error(f"index {term.value} is out of range for dimension {d} of "
                           f"{buf.ref.name!r}, of size {shape[d]}", e)
            if d > 0:  # dimension 0: the check against the whole array covers it
                checks.append(self.below(term, n.Const(ty=u32, value=shape[d], loc=loc)))
            stride = math.prod(shape[d + 1:])
            part = term if stride == 1 else n.Binary(
                ty=u32, op="mul", lhs=term, rhs=n.Const(ty=u32, value=stride, loc=loc),
                loc=loc)
            offset = part if offset is None else self.u32_add(offset, part)
        return self.guarded(offset, checks)

    def below(self, index: n.Expr, limit: n.Expr) -> n.Expr | None:
        """`index < limit` (u32), or None when it holds at compile time."""
        if isinstance(index, n.Const) and isinstance(limit, n.Const) \
                and index.value < limit.value:
            return None
        return n.Compare(ty=bool_, op="lt", lhs=index, rhs=limit, loc=self.ctx.loc)

    def guarded(self, offset: n.Expr, checks: list) -> n.Expr:
        """In a checked launch: `offset` when every check holds, else OUT_OF_RANGE."""
        checks = [c for c in checks if c is not None]
        if not self.ctx.checked or not checks:
            return offset
        cond = checks[0]
        for c in checks[1:]:
            cond = n.Logical(ty=bool_, op="and", lhs=cond, rhs=c, loc=self.ctx.loc)
        return n.Select(ty=u32, cond=cond, if_true=offset, loc=self.ctx.loc,
                        if_false=n.Const(ty=u32, value=OUT_OF_RANGE, loc=self.ctx.loc))

    def as_u32(self, e: n.Expr) -> n.Expr:
        if isinstance(e, n.Const) and isinstance(find(e.ty), DType) and e.value >= 0:
            return n.Const(ty=u32, value=int(e.value), loc=e.loc)
        if find(e.ty) is u32:
            return e
        return n.Cast(ty=u32, operand=e, loc=self.ctx.loc)

    def u32_add(self, a: n.Expr, b: n.Expr) -> n.Expr:
        if isinstance(a, n.Const) and a.value == 0:
            return b
        return n.Binary(ty=u32, op="add", lhs=a, rhs=b, loc=self.ctx.loc)

    # -- views --------------------------------------------------------------------------
    def e_Slice(self, node: ast.Slice):
        """A slice anywhere but right after a buffer (`line[0:2]`)."""
        self.error("only tensors, arrays and shared memory can be sliced (x[a:b] is a "
                   "view); a line takes one element index: v[k]", node)

    def view(self, buf: Buf, node: ast.Slice) -> Buf:
        """`x[a:b]`, `x[a:]`, `x[:b]`: a 1-D view of `x`'s flat elements a..b-1, with the
        bounds clamped as Python clamps them (0 <= start <= end <= len(x)), fixed when
        the view is made."""
        if node.step is not None:
            if self.ct_int(self.expr(node.step)) != 1:
                self.error("a view takes a step of 1 only (x[a:b]); other steps are not "
                           "supported", node.step)
        total = self.length_of(buf)
        end = total if node.upper is None else self.slice_bound(node.upper, total)
        end = self.once(end, "view_end")  # fixed now: later writes of b do not move it
        start = n.Const(ty=u32, value=0, loc=self.ctx.loc) if node.lower is None \
            else self.once(self.slice_bound(node.lower, end), "view_start")
        length = self.once(self.fold_u32("sub", end, start), "view_len")
        if buf.start is not None:
            start = self.once(self.fold_u32("add", buf.start, start), "view_start")
        return dataclasses.replace(buf, start=start, length=length, shape=None)

    def slice_bound(self, node: ast.expr, limit: n.Expr) -> n.Expr:
        """One bound of a slice as u32, clamped to `limit` (no negative wrap-around)."""
        v = self.expr(node)
        if isinstance(v, Py) and isinstance(v.value, int) and not isinstance(v.value, bool):
            if v.value < 0:
                self.error(f"negative slice bound {v.value}: bounds do not wrap around in "
                           f"kernels (write len(x) - {-v.value})", node)
            bound = n.Const(ty=u32, value=min(v.value, OUT_OF_RANGE), loc=self.ctx.loc)
        else:
            bound = self.as_u32(self.index_value(v, node))  # evaluated once
        return self.fold_u32("min", bound, limit)

    def fold_u32(self, op: str, a: n.Expr, b: n.Expr) -> n.Expr:
        """`a op b` in u32, folded when both sides are constants."""
        if isinstance(a, n.Const) and isinstance(b, n.Const):
            x, y = int(a.value), int(b.value)
            value = {"add": x + y, "sub": x - y, "min": min(x, y)}[op]
            if 0 <= value < 2**32:
                return n.Const(ty=u32, value=value, loc=self.ctx.loc)
        return n.Binary(ty=u32, op=op, lhs=a, rhs=b, loc=self.ctx.loc)

    def length_of(self, buf: Buf) -> n.Expr:
        """len(buf) as a u32 expression: a view's length, the size of shared memory, or
        the element (line) count of a tensor or array."""
        if buf.length is not None:
            return buf.length
        if buf.kind == "shared":
            return n.Const(ty=u32, value=buf.size, loc=self.ctx.loc)
        return n.Meta(ty=u32, kind="len", buffer=buf.ref, loc=self.ctx.loc)

    # -- shape queries ------------------------------------------------------------------
    def shape_query(self, buf: Buf, name: str, dim_node: ast.expr, node: ast.AST):
        """`x.shape(d)` / `x.stride(d)` (and the `x.shape[d]` spelling)."""
        ref = buf.ref
        if buf.kind == "array" and buf.start is None:
            self.error(f"{ref.name}.{name}(d): only a Tensor has a shape and strides (an "
                       f"Array has len())", node)
        if buf.kind == "tensor" and buf.start is None:
            with self.at(dim_node):
                d = self.rvalue(dim_node)
                self.ctx.unifier.unify(d.ty, u32, self.ctx.loc, lambda a, b: (
                    f"the dimension of {name}() must be u32, not {a}: cast it, e.g. "
                    f"u32(...)"))
            return n.Meta(ty=u32, kind=name, buffer=ref, dim=d, loc=self.ctx.loc)
        # views and shared memory: compile-time dimensions
        d = self.ct_int(self.expr(dim_node))
        shape = (None,) if buf.start is not None else buf.dims
        what = "a view" if buf.start is not None else "shared memory"
        if d is None or not 0 <= d < len(shape):
            self.error(f"{ref.name}.{name}(d) of {what} with {len(shape)} "
                       f"dimension{'s' if len(shape) != 1 else ''} needs d known at compile "
                       f"time, 0 to {len(shape) - 1}", dim_node)
        if buf.start is not None:
            return buf.length if name == "shape" else n.Const(ty=u32, value=1,
                                                                loc=self.ctx.loc)
        value = shape[d] if name == "shape" else math.prod(shape[d + 1:])
        return n.Const(ty=u32, value=value, loc=self.ctx.loc)

    def subscripted(self, node: ast.expr):
        """The value `node[...]` indexes: node evaluated, except that `t.shape` /
        `t.stride` of a buffer (not values alone) come back as a ShapeOf."""
        if not (isinstance(node, ast.Attribute) and node.attr in _SHAPE_METHODS):
            return self.expr(node)
        base = self.expr(node.value)
        if isinstance(base, Buf):
            return ShapeOf(base, node.attr)
        with self.at(node):
            return self.e_Attribute_of(base, node)

    def shape_item(self, of: "ShapeOf", node: ast.Subscript):
        """`t.shape[d]` / `t.stride[d]`: the same value as t.shape(d) / t.stride(d)."""
        what = f"{of.buf.ref.name}.{of.name}"
        if isinstance(node.slice, (ast.Tuple, ast.Slice)):
            self.error(f"{what}[d] takes one dimension", node.slice)
        return self.shape_query(of.buf, of.name, node.slice, node)

    def unpacked_shape(self, of: "ShapeOf", count: int, node: ast.AST) -> Tup:
        """`rows, cols = t.shape` (or `t.stride`): one value per dimension. On a tensor
        the number of names fixes its rank, as indexing it with that many indices does
        (the launch checks it); shared memory and views have their own."""
        buf = of.buf
        if buf.kind == "tensor" and buf.start is None:
            self.require_rank(buf.ref.name, count, node)
        elif buf.start is not None or buf.kind == "shared":
            rank = 1 if buf.start is not None else len(buf.dims)
            if count != rank:
                self.error(f"{buf.ref.name}.{of.name} has {rank} value"
                           f"{'s' if rank != 1 else ''}, not {count}", node)
        else:
            self.error(f"{buf.ref.name}.{of.name}: only a Tensor (or shared memory, or a "
                       f"view) has a shape to unpack (an Array has len())", node)
        dims = [ast.copy_location(ast.Constant(d), node) for d in range(count)]
        return Tup(tuple(self.shape_query(buf, of.name, d, node) for d in dims))

    def meta_of_view(self, buf: Buf, name: str):
        """rank()/len()/buffer_len() of a view or a multi-dimensional shared memory;
        None for the other buffers."""
        loc = self.ctx.loc
        if buf.start is not None:
            return n.Const(ty=u32, value=1, loc=loc) if name == "rank" else buf.length
        if buf.kind == "shared":
            value = len(buf.dims) if name == "rank" else buf.size
            return n.Const(ty=u32, value=value, loc=loc)
        return None


@dataclass(frozen=True)
class ShapeOf:
    """`t.shape` or `t.stride` of a buffer, waiting for its `[d]`."""

    buf: Buf
    name: str


def shared_dims(b, node: ast.expr) -> tuple[int, ...]:
    """The compile-time shape of `SharedMemory(T, shape)`: an int, or a tuple of ints
    (written in place, or a compile-time tuple)."""
    if isinstance(node, ast.Tuple):
        values = [b.expr(e) for e in node.elts]
        nodes = list(node.elts)
    else:
        v = b.expr(node)
        if isinstance(v, Py) and isinstance(v.value, tuple):
            values, nodes = [Py(x) for x in v.value], [node] * len(v.value)
        else:
            values, nodes = [v], [node]
    if not values:
        b.error("the shape of SharedMemory needs at least one dimension", node)
    dims = []
    for v, at in zip(values, nodes):
        d = b.ct_int(v) if not (isinstance(v, Py) and not is_number(v.value)) else None
        if d is None:
            b.error("the size of SharedMemory must be known at compile time (a literal, a "
                    "constant or a Comptime[int] parameter)", at)
        if d <= 0:
            b.error(f"the size of SharedMemory must be positive, not {d}", at)
        dims.append(d)
    return tuple(dims)
