"""Reads the IR text form (cubepy/ir/printer.py) back into an ir.Kernel.

The grammar (ir.lark) is LALR(1) and loaded once. The parse tree is turned into nodes by
a small recursive reader that walks the text in order, so a variable is known (with its
type) from its declaration on: `%x` alone needs no type.
"""
from __future__ import annotations

import functools
import json
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from . import nodes as ir
from .printer import call_type, implied_type
from .types import DType, bool_, type_from_name


class IRParseError(ValueError):
    """The text is not a valid IR kernel."""


@functools.cache
def _lark() -> Lark:
    grammar = resources.files("cubepy.ir").joinpath("ir.lark").read_text()
    return Lark(grammar, parser="lalr", maybe_placeholders=True)


def parse_kernel(text: str) -> ir.Kernel:
    """Parses the text form of a kernel; raises IRParseError when it is malformed."""
    try:
        tree = _lark().parse(text)
    except LarkError as e:
        raise IRParseError(str(e)) from None
    return _Reader().kernel(tree)


def _type(tok: Token | None) -> DType | None:
    if tok is None:
        return None
    try:
        return type_from_name(str(tok))
    except KeyError:
        raise IRParseError(f"line {tok.line}: unknown type {tok!s}") from None


def _num(tok: Token) -> int | float:
    text = str(tok)
    if text in ("+inf", "-inf", "+nan", "-nan"):
        return float(text)
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


def _name(tok: Token) -> str:
    return str(tok)[1:]  # drop the sigil


class _Reader:
    def __init__(self):
        self.vars: dict[str, ir.Var] = {}
        self.buffers: dict[str, ir.BufferRef] = {}
        self.matrices: dict[str, ir.MatrixDecl] = {}
        self.filename = ir.NO_LOC.filename
        self.loc = ir.NO_LOC  # the location of the statement being read

    def fail(self, tok, msg: str):
        line = getattr(tok, "line", "?")
        raise IRParseError(f"line {line}: {msg}")

    def make_loc(self, tok: Token | None) -> ir.Loc:
        if tok is None:
            return ir.NO_LOC
        body = str(tok).lstrip("#").strip()[len("line"):].strip()
        number, _, rest = body.partition(" ")
        filename = json.loads(rest.strip()) if rest.strip() else self.filename
        return ir.Loc(filename, int(number))

    # -- kernel ------------------------------------------------------------------------
    def kernel(self, tree: Tree) -> ir.Kernel:
        kname, *rest = tree.children
        name_tok = kname.children[0]
        name = json.loads(name_tok) if name_tok.type == "STRING" else str(name_tok)
        i = 0
        params = []
        while i < len(rest) and (rest[i] is None or isinstance(rest[i], Tree)):
            if rest[i] is not None:
                params.append(self.param(rest[i]))
            i += 1
        dims = tuple(int(str(t)) for t in rest[i:i + 3])
        checked = rest[i + 3] is None  # the optional `unchecked` after cube_dim(...)
        i += 4
        kloc = self.make_loc(rest[i])
        if rest[i] is not None:
            self.filename = kloc.filename
        shared, local, matrices, stmts = [], [], [], []
        for child in rest[i + 1:]:
            if isinstance(child, Tree) and child.data == "shared":
                shared.append(self.shared(child))
            elif isinstance(child, Tree) and child.data == "local":
                local.append(self.local(child))
            elif isinstance(child, Tree) and child.data == "matrix":
                matrices.append(self.matrix(child))
            else:
                stmts.append(self.stmt(child))
        return ir.Kernel(name, tuple(params), tuple(shared), ir.Block(tuple(stmts)),
                         dims, loc=kloc, local_arrays=tuple(local),
                         matrices=tuple(matrices), checked=checked)

    def param(self, tree: Tree) -> ir.Param:
        if tree.data == "scalar_param":
            var_tok, ty_tok = tree.children
            var = ir.Var(_name(var_tok), _type(ty_tok))
            self.vars[var.name] = var
            return ir.Param(var.name, "scalar", var.ty)
        buf_tok, kind_tok, ty_tok, line_tok, rank_tok, misaligned = tree.children
        kind = str(kind_tok)
        if kind not in ("tensor", "array"):
            self.fail(kind_tok, f"unknown parameter kind {kind}")
        p = ir.Param(_name(buf_tok), kind, _type(ty_tok),
                     int(str(line_tok)) if line_tok is not None else 1,
                     int(str(rank_tok)) if rank_tok is not None else None,
                     aligned=misaligned is None)
        self.buffers[p.name] = p.buffer
        return p

    def shared(self, tree: Tree) -> ir.SharedDecl:
        buf_tok, ty_tok, size_tok, loc_tok = tree.children
        buf = ir.BufferRef(_name(buf_tok), _type(ty_tok), "shared")
        self.buffers[buf.name] = buf
        return ir.SharedDecl(buf, int(str(size_tok)), loc=self.make_loc(loc_tok))

    def local(self, tree: Tree) -> ir.LocalDecl:
        buf_tok, ty_tok, size_tok, loc_tok = tree.children
        buf = ir.BufferRef(_name(buf_tok), _type(ty_tok), "local")
        self.buffers[buf.name] = buf
        return ir.LocalDecl(buf, int(str(size_tok)), loc=self.make_loc(loc_tok))

    def matrix(self, tree: Tree) -> ir.MatrixDecl:
        frag_tok, ident_tok, m, n_, k, elem_tok, layout_tok, count_tok, loc_tok = tree.children
        ident, elem = str(ident_tok), str(elem_tok)
        if ident not in ir.MATRIX_IDENTS:
            self.fail(ident_tok, f"unknown matrix kind {ident}")
        if elem not in ir.MATRIX_ELEMS:
            self.fail(elem_tok, f"unknown matrix element type {elem}")
        decl = ir.MatrixDecl(_name(frag_tok), ident, int(str(m)), int(str(n_)), int(str(k)),
                             elem, str(layout_tok) if layout_tok is not None else None,
                             int(str(count_tok)) if count_tok is not None else None,
                             loc=self.make_loc(loc_tok))
        self.matrices[decl.name] = decl
        return decl

    def frag(self, tree: Tree) -> ir.Frag:
        frag_tok, index = tree.children
        decl = self.matrices.get(_name(frag_tok))
        if decl is None:
            self.fail(frag_tok, f"unknown matrix {frag_tok!s}")
        return ir.Frag(ty=decl.storage, matrix=decl,
                       index=self.expr(index) if index is not None else None, loc=self.loc)

    def matrix_stmt(self, kind: str, c: list, loc: ir.Loc) -> ir.Stmt:
        layout = lambda tok: str(tok) if tok is not None else None  # noqa: E731
        if kind == "cmma_fill":
            return ir.MatrixFill(frag=self.frag(c[0]), value=self.expr(c[1]), loc=loc)
        if kind == "cmma_scale":
            return ir.MatrixScale(frag=self.frag(c[0]), value=self.expr(c[1]), loc=loc)
        if kind in ("cmma_scale_rows", "cmma_scale_cols"):
            return ir.MatrixScaleBy(frag=self.frag(c[0]), buffer=self.buffer(c[1]),
                                    offset=self.expr(c[2]), axis=kind[len("cmma_scale_"):],
                                    loc=loc)
        if kind == "cmma_load":
            return ir.MatrixLoad(frag=self.frag(c[0]), buffer=self.buffer(c[1]),
                                 offset=self.expr(c[2]), stride=self.expr(c[3]),
                                 layout=layout(c[4]), loc=loc)
        if kind == "cmma_store":
            return ir.MatrixStore(buffer=self.buffer(c[0]), offset=self.expr(c[1]),
                                  frag=self.frag(c[2]), stride=self.expr(c[3]),
                                  layout=str(c[4]), loc=loc)
        if kind == "cmma_wg_mma":
            return ir.WarpgroupMma(acc=self.frag(c[0]), a=self.buffer(c[1]),
                                   a_offset=self.expr(c[2]), a_rows=int(str(c[3])),
                                   b=self.buffer(c[4]), b_offset=self.expr(c[5]),
                                   b_rows=int(str(c[6])), b_layout=str(c[7]),
                                   swizzle=int(str(c[8])) if c[8] is not None else 0,
                                   loc=loc)
        if kind in ("cmma_wg_fence", "cmma_wg_commit", "cmma_wg_wait"):
            pending = int(str(c[0])) if kind == "cmma_wg_wait" else 0
            return ir.WarpgroupSync(op=kind[len("cmma_wg_"):], pending=pending, loc=loc)
        if kind == "cmma_execute":
            a, b, cc, d = (self.frag(t) for t in c[:4])
            return ir.MatrixExecute(a=a, b=b, c=cc, d=d, loc=loc)
        return ir.MatrixCast(src=self.frag(c[0]), dst=self.frag(c[1]), loc=loc)

    # -- statements --------------------------------------------------------------------
    def body(self, tree: Tree) -> ir.Block:
        return ir.Block(tuple(self.stmt(s) for s in tree.children))

    def declare_var(self, var_tok: Token, ty_tok: Token) -> ir.Var:
        var = ir.Var(_name(var_tok), _type(ty_tok))
        self.vars[var.name] = var
        return var

    def buffer(self, tok: Token) -> ir.BufferRef:
        buf = self.buffers.get(_name(tok))
        if buf is None:
            self.fail(tok, f"unknown buffer {tok!s}")
        return buf

    def varref(self, tree: Tree) -> ir.Var:
        var_tok, ty_tok = tree.children
        if ty_tok is not None:
            return ir.Var(_name(var_tok), _type(ty_tok))
        var = self.vars.get(_name(var_tok))
        if var is None:
            self.fail(var_tok, f"variable {var_tok!s} used before its declaration")
        return var

    def stmt(self, tree: Tree) -> ir.Stmt:
        kind, c = tree.data, tree.children
        loc_tok = c[-1] if c and isinstance(c[-1], Token) and c[-1].type == "LOC" else None
        if kind in ("if_", "for_", "while_"):
            loc_tok = next((t for t in c if isinstance(t, Token) and t.type == "LOC"), None)
        loc = self.loc = self.make_loc(loc_tok)
        if kind == "declare":
            return ir.Declare(var=self.declare_var(c[0], c[1]), loc=loc)
        if kind == "let":
            value = self.expr(c[2])
            return ir.Assign(var=self.declare_var(c[0], c[1]), value=value, declare=True,
                             loc=loc)
        if kind == "assign":
            var = self.varref(c[0])
            return ir.Assign(var=var, value=self.expr(c[1]), loc=loc)
        if kind == "store":
            return ir.Store(buffer=self.buffer(c[0]), index=self.expr(c[1]),
                            value=self.expr(c[2]), loc=loc)
        if kind == "atomic":
            result_tree, op_tok, buf_tok, index, value, compare = c[:6]
            result = self.varref(result_tree) if result_tree is not None else None
            return ir.AtomicOp(op=str(op_tok), buffer=self.buffer(buf_tok),
                               index=self.expr(index),
                               value=self.expr(value) if value is not None else None,
                               compare=self.expr(compare) if compare is not None else None,
                               result=result, loc=loc)
        if kind == "load_line":
            parts = tuple(self.varref(t) for t in c if isinstance(t, Tree)
                          and t.data == "varref")
            buf_tok, line = c[len(parts)], c[len(parts) + 1]
            return ir.LoadLine(buffer=self.buffer(buf_tok), line=self.expr(line),
                               parts=parts, loc=loc)
        if kind == "store_line":
            items = c[1:-1] if loc_tok is not None or c[-1] is None else c[1:]
            return ir.StoreLine(buffer=self.buffer(c[0]), line=self.expr(items[0]),
                                values=tuple(self.expr(e) for e in items[1:]), loc=loc)
        if kind == "if_":
            cond = self.expr(c[0])
            bodies = [t for t in c if isinstance(t, Tree) and t.data == "body"]
            then = self.body(bodies[0])
            orelse = self.body(bodies[1]) if len(bodies) > 1 else ir.Block()
            return ir.If(cond=cond, then=then, orelse=orelse, loc=loc)
        if kind == "for_":
            head, start, stop, step, unroll = c[:5]
            bounds = [self.expr(e) for e in (start, stop, step)]
            var = self.declare_var(*head.children)
            return ir.For(var=var, start=bounds[0], stop=bounds[1], step=bounds[2],
                          body=self.body(c[-1]), unroll=unroll is not None, loc=loc)
        if kind == "while_":
            cond = self.expr(c[0])
            return ir.While(cond=cond, body=self.body(c[-1]), loc=loc)
        if kind == "barrier" and c and isinstance(c[0], Token) and c[0].type == "NAME":
            if str(c[0]) not in ir.SYNC_OPS:
                self.fail(c[0], f"unknown barrier {c[0]}")
            return ir.Barrier(op=str(c[0]), loc=loc)
        simple = {"break_": ir.Break, "continue_": ir.Continue, "terminate": ir.Terminate,
                  "barrier": ir.Barrier}
        if kind in simple:
            return simple[kind](loc=loc)
        if kind == "comment":
            return ir.Comment(text=json.loads(str(c[0])), loc=loc)
        if kind == "async_copy":
            return ir.AsyncCopy(dst=self.buffer(c[0]), dst_line=self.expr(c[1]),
                                src=self.buffer(c[2]), src_line=self.expr(c[3]),
                                size=int(str(c[4])), loc=loc)
        if kind == "async_commit":
            return ir.AsyncCommit(loc=loc)
        if kind == "async_wait":
            return ir.AsyncWait(pending=int(str(c[0])), loc=loc)
        if kind.startswith("cmma_"):
            return self.matrix_stmt(kind, c, loc)
        raise IRParseError(f"unknown statement {kind}")

    # -- expressions -------------------------------------------------------------------
    def expr(self, tree) -> ir.Expr:
        e = self._expr(tree)
        return e

    def _expr(self, tree) -> ir.Expr:
        loc = self.loc
        kind, c = tree.data, tree.children
        if kind == "const":
            ty = _type(c[1])
            value = _num(c[0])
            if ty is bool_:
                value = bool(value)
            return ir.Const(ty=ty, value=value, loc=loc)
        if kind in ("true", "false"):
            return ir.Const(ty=bool_, value=kind == "true", loc=loc)
        if kind == "load":
            var_tok, ty_tok = c
            if ty_tok is not None:
                var = ir.Var(_name(var_tok), _type(ty_tok))
            else:
                var = self.vars.get(_name(var_tok))
                if var is None:
                    self.fail(var_tok, f"variable {var_tok!s} used before its declaration")
            return ir.Load(ty=var.ty, var=var, loc=loc)
        if kind == "builtin":
            name_tok, ty_tok = c
            if str(name_tok) not in ir.BUILTINS:
                self.fail(name_tok, f"unknown builtin {name_tok!s}")
            return self.typed(ir.Builtin(ty=bool_, name=str(name_tok), loc=loc), ty_tok)
        if kind == "index":
            buf_tok, index, ty_tok = c
            buf = self.buffer(buf_tok)
            return self.typed(ir.Index(ty=buf.elem, buffer=buf, index=self.expr(index),
                                       loc=loc), ty_tok)
        if kind == "math":
            name_tok, ty_tok, *args = c
            func = str(name_tok)
            if func not in ir.MATH_FUNCS:
                self.fail(name_tok, f"unknown math function {func}")
            args = tuple(self.expr(a) for a in args if a is not None)
            ty = call_type(func, [a.ty for a in args]) or bool_
            return self.typed(ir.Call(ty=ty, func=func, args=args, loc=loc), ty_tok)
        if kind == "bits":
            name_tok, ty_tok, *args = c
            op = str(name_tok)
            if op not in ir.BIT_OPS:
                self.fail(name_tok, f"unknown bit function {op}")
            if op == "bitcast" and ty_tok is None:
                self.fail(name_tok, "bits.bitcast needs its result type: bits.bitcast:f32(...)")
            args = tuple(self.expr(a) for a in args if a is not None)
            return self.typed(ir.Bits(ty=args[0].ty, op=op, args=args, loc=loc), ty_tok)
        if kind == "plane":
            name_tok, ty_tok, value, arg = c
            op = str(name_tok)
            if op not in ir.PLANE_OPS:
                self.fail(name_tok, f"unknown plane operation {op}")
            value = self.expr(value)
            arg = self.expr(arg) if arg is not None else None
            return self.typed(ir.Plane(ty=ir.plane_type(op, value.ty), op=op, value=value,
                                       arg=arg, loc=loc), ty_tok)
        if kind == "apply":
            return self.apply(c[0], c[1], [a for a in c[2:] if a is not None], loc)
        raise IRParseError(f"unknown expression {kind}")

    def typed(self, e: ir.Expr, ty_tok: Token | None) -> ir.Expr:
        """`e` with its result type: the one written in the text, else the implied one."""
        ty = _type(ty_tok) if ty_tok is not None else implied_type(e)
        return e if e.ty is ty else _replace_ty(e, ty)

    def apply(self, name_tok: Token, ty_tok, args: list, loc: ir.Loc) -> ir.Expr:
        name = str(name_tok)
        bufs = [a for a in args if isinstance(a, Tree) and a.data == "bufarg"]
        if name in ir.META_KINDS:
            if not args or args[0] not in bufs or len(args) > 2 or len(bufs) > 1:
                self.fail(name_tok, f"{name} takes a buffer and an optional dimension")
            dim = self.expr(args[1]) if len(args) == 2 else None
            return self.typed(ir.Meta(ty=bool_, kind=name, buffer=self.buffer(
                args[0].children[0]), dim=dim, loc=loc), ty_tok)
        if bufs:
            self.fail(name_tok, f"{name} takes no buffer argument")
        ops = [self.expr(a) for a in args]

        def arity(k: int) -> None:
            if len(ops) != k:
                self.fail(name_tok, f"{name} takes {k} operands, got {len(ops)}")

        if name in ("true", "false"):
            self.fail(name_tok, f"{name} is not a function")
        try:
            target = type_from_name(name)
        except KeyError:
            target = None
        if target is not None and name != "bool_":
            arity(1)
            return ir.Cast(ty=target, operand=ops[0], loc=loc)
        if name == "make_line":
            if len(ops) < 2:
                self.fail(name_tok, "make_line takes at least 2 elements")
            e = ir.MakeLine(ty=bool_, elems=tuple(ops), loc=loc)
            return self.typed(e, ty_tok)
        if name == "extract":
            arity(2)
            e = ir.Extract(ty=bool_, value=ops[0], index=ops[1], loc=loc)
            return self.typed(e, ty_tok)
        if name == "select":
            arity(3)
            e = ir.Select(ty=bool_, cond=ops[0], if_true=ops[1], if_false=ops[2], loc=loc)
        elif name in ir.UNARY_OPS:
            arity(1)
            e = ir.Unary(ty=bool_, op=name, operand=ops[0], loc=loc)
        elif name in ir.BINARY_OPS:
            arity(2)
            e = ir.Binary(ty=bool_, op=name, lhs=ops[0], rhs=ops[1], loc=loc)
        elif name in ir.COMPARE_OPS:
            arity(2)
            e = ir.Compare(ty=bool_, op=name, lhs=ops[0], rhs=ops[1], loc=loc)
        elif name in ir.LOGICAL_OPS:
            arity(2)
            e = ir.Logical(ty=bool_, op=name, lhs=ops[0], rhs=ops[1], loc=loc)
        else:
            self.fail(name_tok, f"unknown operator {name}")
        return self.typed(e, ty_tok)


def _replace_ty(e: ir.Expr, ty: DType) -> ir.Expr:
    import dataclasses
    return dataclasses.replace(e, ty=ty)
