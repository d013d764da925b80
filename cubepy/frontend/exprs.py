"""Expressions: names, literals, operators, comparisons, indexing.

Every expression evaluates to an IR `Expr` (a runtime value, typed by a DType or a type
variable), a `Py` (a value known at compile time: folded like Python), or a `Buf`.
"""
from __future__ import annotations

import ast
import re
from typing import Any

import numpy as np

from ..ir import nodes as n
from ..ir.dtype_facts import int_range
from ..ir.types import DType, LineType, bool_, elem_of, i32, u32
from ..ir.types import Generic
from ..lang import BuiltinVar, Line, LineOf, MatrixElement
from .infer import TVar, describe, find, float_lit, int_lit, resolve
from .parse import make_loc, python_scalar_type
from .indexing import ShapeOf
from .values import Buf, Dead, FragArray, FragVal, Py, Rec, Tup, is_number

# ast operator -> (IR op, source symbol)
BINOPS: dict[type, tuple[str, str]] = {
    ast.Add: ("add", "+"), ast.Sub: ("sub", "-"), ast.Mult: ("mul", "*"),
    ast.Div: ("div", "/"), ast.FloorDiv: ("floordiv", "//"), ast.Mod: ("mod", "%"),
    ast.Pow: ("pow", "**"), ast.BitAnd: ("bitand", "&"), ast.BitOr: ("bitor", "|"),
    ast.BitXor: ("bitxor", "^"), ast.LShift: ("shl", "<<"), ast.RShift: ("shr", ">>"),
}
CMPOPS: dict[type, tuple[str, str]] = {
    ast.Eq: ("eq", "=="), ast.NotEq: ("ne", "!="), ast.Lt: ("lt", "<"),
    ast.LtE: ("le", "<="), ast.Gt: ("gt", ">"), ast.GtE: ("ge", ">="),
}
_PY_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
           "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
MAX_POW_MULS = 32  # `x ** k` with a constant k becomes at most this many multiplications
MAX_COMPTIME_INT_BITS = 1024  # compile-time Python integers (they end in 64-bit types)


def mix_message(sym: str):
    """The error for two different types meeting in operator `sym`."""
    def msg(a: str, b: str) -> str:
        pick = next((t for t in (a, b) if " " not in t), "f32")
        if " " in a or " " in b:  # a literal met a type it cannot take
            pick = "f32" if "float" in a + b else pick
        pick = re.sub(r"x[0-9]+$", "", pick)  # a line: its element type casts it
        return f"cannot mix {a} and {b} in '{sym}': cast one side, e.g. {pick}(...)"
    return msg


def _too_large(op: str, a, b) -> bool:
    """Whether a compile-time integer result would exceed MAX_COMPTIME_INT_BITS (checked
    before computing it: `10 ** 10 ** 8` would run for minutes)."""
    if not (isinstance(a, int) and isinstance(b, int)):
        return False
    if op == "pow":
        return b > 0 and abs(a) > 1 and (abs(a).bit_length() - 1) * b > MAX_COMPTIME_INT_BITS
    if op == "mul":
        return abs(a).bit_length() + abs(b).bit_length() - 1 > MAX_COMPTIME_INT_BITS
    return max(abs(a).bit_length(), abs(b).bit_length()) > MAX_COMPTIME_INT_BITS


def _fold_binop(op: str, a, b):
    """Python evaluation with the language's semantics; None when not foldable."""
    both_int = isinstance(a, int) and isinstance(b, int)
    try:
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        if op == "floordiv":
            if both_int:
                return 0 if b == 0 else a // b
            return a // b  # Python's float divmod (b == 0 raises: not folded here)
        if op == "mod":
            if both_int:
                return a if b == 0 else a % b
            return a % b
        if op == "pow":
            r = a ** b
            return r if isinstance(r, (int, float)) else None
        if not both_int:
            return None
        if op in ("shl", "shr"):
            if not 0 <= b < 32:
                return None
            return a << b if op == "shl" else a >> b
        return {"bitand": a & b, "bitor": a | b, "bitxor": a ^ b}[op]
    except (ArithmeticError, ValueError, TypeError):
        return None


class ExprMixin:
    """Expression building for Builder."""

    def expr(self, node: ast.expr) -> Any:
        handler = getattr(self, "e_" + type(node).__name__, None)
        if handler is None:
            self.error(f"unsupported expression: {type(node).__name__}", node)
        with self.at(node):
            return handler(node)

    def rvalue(self, node: ast.expr) -> n.Expr:
        return self.materialize(self.expr(node), node)

    def materialize(self, value, node: ast.AST | None = None) -> n.Expr:
        """A runtime IR expression for `value` (a literal gets a literal type)."""
        if isinstance(value, n.Expr):
            return value
        loc = self.ctx.loc if node is None else make_loc(self.ctx.frame.parsed.filename, node)
        if isinstance(value, Py):
            v = value.value
            if isinstance(v, bool):
                return n.Const(ty=bool_, value=v, loc=loc)
            if isinstance(v, int):
                return n.Const(ty=int_lit(), value=v, loc=loc)
            if isinstance(v, float):
                return n.Const(ty=float_lit(), value=v, loc=loc)
            if isinstance(v, str):
                self.error("a string can only be compared with a Comptime[str] parameter "
                           "in a compile-time condition", node)
            if v is None:
                self.error("this gives no value", node)
            self.error(f"{_describe_py(v)} cannot be used as a value in a kernel", node)
        if isinstance(value, Buf):
            self.error(f"the buffer {value.ref.name!r} cannot be used as a value: index "
                       f"it, e.g. {value.ref.name}[i]", node)
        if isinstance(value, Tup):
            self.error(f"a tuple of {len(value.items)} values cannot be used as one value: "
                       f"unpack it (a, b = ...) or take an item (t[0])", node)
        if isinstance(value, (FragVal, FragArray)):
            self.error(f"the cmma fragment{'s' if isinstance(value, FragArray) else ''} "
                       f"{value.decl.name!r} cannot be used as a value: fragments are read "
                       f"and written only by the cmma calls (cmma.load, cmma.execute, "
                       f"cmma.store, ...)", node)
        if isinstance(value, Rec):
            self.error(f"the struct {value.path!r} ({value.cls.__name__}) cannot be used as "
                       f"a value: read a field, e.g. {value.path}.{value.fields[0][0]}", node)
        self.error("this cannot be used as a value", node)

    def from_python(self, value, node: ast.AST):
        if isinstance(value, BuiltinVar):
            return n.Builtin(ty=u32, name=value.name, loc=self.ctx.loc)
        if isinstance(value, np.generic) and not isinstance(value, np.str_):
            return Py(value.item())
        return Py(value)

    # -- names and attributes ---------------------------------------------------------
    def e_Name(self, node: ast.Name):
        frame = self.ctx.frame
        name = node.id
        b = frame.scope.get(name)
        if b is None and name in frame.parsed.assign_counts:
            if frame.loop_depth == 0 or name in frame.comptime_names:
                self.error(f"{name!r} is used before it is assigned", node)
            b = self.local(name)  # a loop-carried variable, assigned later in the loop
        if b is not None:
            if isinstance(b, n.Var):
                if name not in frame.assigned and frame.loop_depth == 0:
                    self.error(f"{name!r} is used before it is assigned", node)
                self.use(b)
                return n.Load(ty=b.ty, var=b, loc=self.ctx.loc)
            if isinstance(b, Dead):
                self.error(f"the loop variable {name!r} cannot be used after its loop",
                           node)
            return b
        found, value = frame.parsed.lookup_global(name)
        if not found:
            self.error(f"unknown name {name!r}", node)
        return self.from_python(value, node)

    def e_Attribute(self, node: ast.Attribute):
        base = self.expr(node.value)
        if isinstance(base, Rec):
            return self.rec_field(base, node)
        if isinstance(base, n.Expr) and node.attr == "size":
            self.error(f"{ast.unparse(node)} is a method: {ast.unparse(node)}() is the "
                       f"line's size", node)
        if isinstance(base, Buf):
            self.error(f"{base.ref.name}.{node.attr} is not a value: buffers have the "
                       f"methods shape(d), stride(d), rank(), len(), buffer_len() (and "
                       f"shape[d], stride[d])", node)
        if not isinstance(base, Py) or is_number(base.value) or isinstance(base.value, str):
            self.error(f"unknown attribute {node.attr!r}", node)
        try:
            value = getattr(base.value, node.attr)
        except AttributeError:
            self.error(f"{_describe_py(base.value)} has no attribute {node.attr!r}", node)
        except Exception as exc:  # a property or module __getattr__ that fails
            self.error(f"reading {ast.unparse(node)} raised {type(exc).__name__}: {exc}",
                       node)
        return self.from_python(value, node)

    def rec_field(self, rec: Rec, node: ast.Attribute):
        """`cfg.scale`: a field of a struct value (a scalar reads its parameter)."""
        value = rec.get(node.attr)
        if value is None:
            names = ", ".join(k for k, _ in rec.fields)
            self.error(f"{rec.path} (a {rec.cls.__name__}) has no field {node.attr!r} "
                       f"(fields: {names})", node)
        if isinstance(value, n.Var):
            self.use(value)
            return n.Load(ty=value.ty, var=value, loc=self.ctx.loc)
        return value

    def e_Constant(self, node: ast.Constant):
        return Py(node.value)

    # -- indexing ---------------------------------------------------------------------
    def index(self, node: ast.expr) -> n.Expr:
        if isinstance(node, (ast.Tuple, ast.Slice)):
            self.error("a line takes one element index: v[k]", node)
        with self.at(node):
            return self.index_value(self.expr(node), node)

    def index_value(self, value, node: ast.expr) -> n.Expr:
        """An already evaluated index (`value`, built from `node`) as a u32 or i32
        expression."""
        with self.at(node):
            idx = self.materialize(value, node)
            self.ctx.unifier.require(idx.ty, lambda t: t is u32 or t is i32, self.ctx.loc,
                                     lambda t: f"an index must be u32 or i32, not {t.name}: "
                                               f"cast it, e.g. u32(...)")
        return idx

    def e_Subscript(self, node: ast.Subscript):
        buf = self.subscripted(node.value)
        if isinstance(buf, Tup):
            return self.tuple_item(buf, node.slice)
        if isinstance(buf, ShapeOf):  # t.shape[d], t.stride[d]
            return self.shape_item(buf, node)
        if isinstance(buf, Py) and buf.value is Line:  # Line[T] as a compile-time type
            elem = self.expr(node.slice)
            if not (isinstance(elem, Py) and isinstance(elem.value, (DType, Generic))):
                self.error("Line[...] takes a dtype or a placeholder, e.g. Line[f32]",
                           node.slice)
            return Py(LineOf(elem.value))
        if isinstance(buf, n.Expr) and isinstance(find(buf.ty), LineType):
            return self.line_element(buf, node.slice)
        if isinstance(buf, n.Expr) and isinstance(find(buf.ty), DType) \
                and not isinstance(node.slice, ast.Tuple):
            return self.line_element(buf, node.slice)  # a scalar is a line of 1
        if isinstance(buf, FragArray):  # accs[i]: one cmma fragment
            from .matrices import frag_item
            return frag_item(self, buf, node.slice)
        if not isinstance(buf, Buf):
            self.error("only tensors, arrays and shared memory can be indexed", node.value)
        if isinstance(node.slice, ast.Slice):  # x[a:b]: a view
            return self.view(buf, node.slice)
        return self.read(buf, self.buffer_index(buf, node.slice))

    def read(self, buf: Buf, index: n.Expr) -> n.Expr:
        """`buf[index]`: an element, or a line (a line of shared memory is built from
        its element reads: the IR has lines only in global buffers)."""
        if buf.is_kernel_array and buf.line > 1:
            elems = tuple(n.Index(ty=buf.ref.elem, buffer=buf.ref, loc=self.ctx.loc,
                                  index=self.shared_element(index, buf.line, k))
                          for k in range(buf.line))
            return n.MakeLine(ty=buf.value_type, elems=elems, loc=self.ctx.loc)
        return n.Index(ty=buf.value_type, buffer=buf.ref, index=index, loc=self.ctx.loc)

    def clamped_line(self, index: n.Expr, size: int) -> n.Expr:
        """Line `index` clamped, so that a huge line index cannot wrap around into the
        array when multiplied by the line size, where that would turn an out-of-range
        access into an in-range one: in a checked launch. (Unchecked, an index out of
        range is out of the kernel's contract either way, and in an unrolled loop the
        clamp kept shared-memory reads from taking constant offsets.)"""
        if not self.ctx.checked:
            return index
        ty, loc = index.ty, self.ctx.loc
        # the largest index both index types (u32, i32) hold
        top = n.Const(ty=ty, value=int_range(i32)[1] // size, loc=loc)
        return n.Binary(ty=ty, op="min", lhs=index, rhs=top, loc=loc)

    def shared_element(self, index: n.Expr, size: int, k: int) -> n.Expr:
        """The element index of element k of line `index` (clamped first, so that a
        huge line index cannot wrap around into the array). scalarize_lines knows this
        form: it reads a whole line of shared memory at once."""
        ty, loc = index.ty, self.ctx.loc
        out = n.Binary(ty=ty, op="mul", lhs=self.clamped_line(index, size),
                       rhs=n.Const(ty=ty, value=size, loc=loc), loc=loc)
        return n.Binary(ty=ty, op="add", lhs=out, rhs=n.Const(ty=ty, value=k, loc=loc),
                        loc=loc) if k else out

    # -- lines ------------------------------------------------------------------------
    def splat(self, e: n.Expr, line: LineType, what: str) -> n.Expr:
        """A scalar broadcast to every element of a line of type `line` (the IR writes
        a broadcast as a cast of the scalar to the line type)."""
        self.ctx.unifier.unify(e.ty, line.elem, self.ctx.loc, lambda a, b: (
            f"cannot broadcast {a} to a line of {b} ({what}): cast it, e.g. {b}(...)"))
        return n.Cast(ty=line, operand=e, loc=self.ctx.loc)

    def broadcast(self, exprs: list[n.Expr], what: str) -> list[n.Expr]:
        """When some operand is a line, the scalar operands are broadcast to its type
        (elementwise operations take a scalar on either side)."""
        line = next((t for t in (find(e.ty) for e in exprs) if isinstance(t, LineType)),
                    None)
        if line is None:
            return exprs
        return [e if isinstance(find(e.ty), LineType) else self.splat(e, line, what)
                for e in exprs]

    def line_element(self, line: n.Expr, index_node: ast.expr) -> n.Expr:
        """`v[k]`: element k of the line `v` (a constant k must be in range; a runtime
        k out of range gives 0)."""
        ty = find(line.ty)
        size = ty.size if isinstance(ty, LineType) else 1
        k = self.ct_int(self.expr(index_node))
        if k is not None and not 0 <= k < size:
            self.error(f"element {k} of a {ty.name}: a line of {size} has elements 0 "
                       f"to {size - 1}", index_node)
        index = self.index(index_node)
        if size == 1:  # a scalar (a line of 1) is its only element
            if k == 0:
                return line
            zero = n.Const(ty=ty, value=False if ty.is_bool else 0, loc=self.ctx.loc)
            hit = n.Compare(ty=bool_, op="eq", lhs=index, rhs=n.Const(
                ty=index.ty, value=0, loc=self.ctx.loc), loc=self.ctx.loc)
            return n.Select(ty=ty, cond=hit, if_true=line, if_false=zero, loc=self.ctx.loc)
        return n.Extract(ty=ty.elem, value=line, index=index, loc=self.ctx.loc)

    def make_line(self, node: ast.Call) -> n.Expr:
        """`Line(a, b, ...)`: a line of the arguments (one argument: that scalar)."""
        if node.keywords or not 1 <= len(node.args) <= 16:
            self.error("Line(...) takes 1 to 16 scalar elements: Line(a, b, c, d)", node)
        elems = [self.rvalue(a) for a in node.args]
        ty = elems[0].ty
        for e, a in zip(elems, node.args):
            if isinstance(find(e.ty), LineType):
                self.error("the elements of Line(...) are scalars, not lines", a)
            ty = self.ctx.unifier.unify(ty, e.ty, self.ctx.loc, mix_message("Line(...)"))
        if len(elems) == 1:
            return elems[0]
        line = LineType(resolve(ty), len(elems))  # literals alone take their default
        return n.MakeLine(ty=line, elems=tuple(elems), loc=self.ctx.loc)

    def line_with(self, line: n.Expr, index_node: ast.expr, value: n.Expr) -> n.Expr:
        """The line `line` with element `index` replaced by the scalar `value`."""
        ty = find(line.ty)
        if not isinstance(ty, LineType):
            return self.scalar_with(line, index_node, value)
        self.ctx.unifier.unify(value.ty, ty.elem, self.ctx.loc, lambda a, b: (
            f"cannot store {a} into an element of a line of {b}: cast it, e.g. {b}(...)"))
        k = self.ct_int(self.expr(index_node))
        if k is not None and not 0 <= k < ty.size:
            self.error(f"element {k} of a {ty.name}: a line of {ty.size} has elements 0 "
                       f"to {ty.size - 1}", index_node)
        index = self.index(index_node)
        elems = []
        for j in range(ty.size):
            old = n.Extract(ty=ty.elem, value=line, loc=self.ctx.loc,
                            index=n.Const(ty=u32, value=j, loc=self.ctx.loc))
            if k is not None:
                elems.append(value if j == k else old)
                continue
            hit = n.Compare(ty=bool_, op="eq", lhs=index, loc=self.ctx.loc,
                            rhs=n.Const(ty=index.ty, value=j, loc=self.ctx.loc))
            elems.append(n.Select(ty=ty.elem, cond=hit, if_true=value, if_false=old,
                                  loc=self.ctx.loc))
        return n.MakeLine(ty=ty, elems=tuple(elems), loc=self.ctx.loc)

    def scalar_with(self, scalar: n.Expr, index_node: ast.expr, value: n.Expr) -> n.Expr:
        """`s[k] = value` for a scalar `s`, a line of 1 (generic line code at line size
        1): `value` for k == 0; a runtime k out of range changes nothing."""
        self.ctx.unifier.unify(value.ty, scalar.ty, self.ctx.loc, lambda a, b: (
            f"cannot store {a} into an element of {b} (a line of 1): cast it, e.g. "
            f"{b}(...)"))
        k = self.ct_int(self.expr(index_node))
        if k is not None and k != 0:
            self.error(f"element {k} of a {describe(find(scalar.ty))}: a scalar is a line "
                       f"of 1, whose only element is 0", index_node)
        index = self.index(index_node)
        if k == 0:
            return value
        hit = n.Compare(ty=bool_, op="eq", lhs=index, loc=self.ctx.loc,
                        rhs=n.Const(ty=index.ty, value=0, loc=self.ctx.loc))
        return n.Select(ty=scalar.ty, cond=hit, if_true=value, if_false=scalar,
                        loc=self.ctx.loc)

    def line_size_of(self, value, node: ast.AST) -> Py:
        """`len(v)` / `v.size()`: the number of elements of a line value, a compile-time
        int (1 for a scalar: a line of 1)."""
        if not isinstance(value, n.Expr):
            self.error("len() takes a tensor, an array, shared memory or a line value", node)
        ty = find(value.ty)
        return Py(ty.size if isinstance(ty, LineType) else 1)

    def no_line(self, ty, what: str) -> None:
        """`what` does not take lines (checked once the type is known)."""
        self.ctx.unifier.require(ty, lambda t: not isinstance(t, LineType), self.ctx.loc,
                                 lambda t: f"{what} on lines ({t.name}) is not supported yet")

    # -- operators --------------------------------------------------------------------
    def e_BinOp(self, node: ast.BinOp):
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node,
                          node.left, node.right)

    def binop(self, op_node: ast.operator, lhs, rhs, node: ast.AST,
              lnode: ast.AST | None = None, rnode: ast.AST | None = None):
        op, sym = BINOPS[type(op_node)]
        if isinstance(lhs, Py) and isinstance(rhs, Py) and is_number(lhs.value) \
                and is_number(rhs.value):
            a, b = lhs.value, rhs.value
            if op == "div" and isinstance(a, int) and isinstance(b, int) \
                    and not isinstance(a, bool):
                self.error("'/' between integers: use '//' for integer division (or "
                           "write a float literal)", node)
            if _too_large(op, a, b):
                self.error(f"this compile-time value would have more than "
                           f"{MAX_COMPTIME_INT_BITS} bits", node)
            folded = _fold_binop(op, a, b)
            if folded is not None:
                return Py(folded)
        if op == "pow":
            return self.power(lhs, rhs, node)
        a = self.materialize(lhs, lnode or node)
        if op in ("shl", "shr"):
            b = self.materialize(rhs, rnode or node)
            la, lb = find(a.ty), find(b.ty)
            if isinstance(lb, LineType) and not isinstance(la, LineType):
                # the value broadcast to a line of its own type (amounts may differ)
                a = n.Cast(ty=LineType(resolve(a.ty), lb.size), operand=a, loc=self.ctx.loc)
            elif isinstance(lb, LineType) and la.size != lb.size:
                self.error(f"cannot mix {la.name} and {lb.name} in '{sym}'", node)
            elif isinstance(rhs, Py):  # a literal amount takes the (element) type
                self.ctx.unifier.unify(b.ty, elem_of(find(a.ty)), self.ctx.loc, mix_message(sym))
            for side in (a, b):
                self.ctx.unifier.require(side.ty, lambda t: t.is_int, self.ctx.loc,
                                         lambda t: f"'{sym}' needs integer operands, not {t.name}")
            return n.Binary(ty=a.ty, op=op, lhs=a, rhs=b, loc=self.ctx.loc)
        b = self.materialize(rhs, rnode or node)
        a, b = self.broadcast([a, b], f"in '{sym}'")
        ty = self.ctx.unifier.unify(a.ty, b.ty, self.ctx.loc, mix_message(sym))
        if op == "div":
            ty = self.ctx.unifier.require_float(ty, self.ctx.loc, lambda t: (
                f"'/' between integers ({t}): use '//' for integer division, or cast to a "
                f"float type, e.g. f32(...)"))
        elif op in ("bitand", "bitor", "bitxor"):
            self.ctx.unifier.require(ty, lambda t: t.is_int, self.ctx.loc, lambda t: (
                f"'{sym}' needs integer operands, not {t.name}"
                + (": use 'and'/'or' for bool" if t.is_bool else "")))
        else:
            self.ctx.unifier.require(ty, lambda t: not t.is_bool, self.ctx.loc, lambda t: (
                f"'{sym}' does not apply to bool: cast to a number first, e.g. u32(...)"))
        return n.Binary(ty=ty, op=op, lhs=a, rhs=b, loc=self.ctx.loc)

    def power(self, lhs, rhs, node: ast.AST):
        base = self.materialize(lhs, node)
        k = rhs.value if isinstance(rhs, Py) else None
        if isinstance(k, int) and not isinstance(k, bool) and 0 <= k <= MAX_POW_MULS:
            self.ctx.unifier.require(base.ty, lambda t: not t.is_bool, self.ctx.loc,
                                     lambda t: "'**' does not apply to bool")
            if k == 0:
                return n.Const(ty=base.ty, value=1, loc=self.ctx.loc)
            result = base
            for _ in range(k - 1):
                result = n.Binary(ty=base.ty, op="mul", lhs=result, rhs=base, loc=self.ctx.loc)
            return result
        exp = self.materialize(rhs, node)
        base, exp = self.broadcast([base, exp], "in '**'")
        ty = self.ctx.unifier.unify(base.ty, exp.ty, self.ctx.loc, mix_message("**"))
        ty = self.ctx.unifier.require_float(ty, self.ctx.loc, lambda t: (
            f"'**' on {t} needs a compile-time non-negative integer exponent (at most "
            f"{MAX_POW_MULS}); for a runtime exponent cast to a float type, e.g. f32(...)"))
        return n.Binary(ty=ty, op="pow", lhs=base, rhs=exp, loc=self.ctx.loc)

    def e_UnaryOp(self, node: ast.UnaryOp):
        v = self.expr(node.operand)
        op = type(node.op)
        if isinstance(v, Py) and is_number(v.value):
            x = v.value
            if op is ast.USub:
                return Py(-x)
            if op is ast.UAdd:
                return Py(+x)
            if op is ast.Not:
                return Py(not x)
            if isinstance(x, int):
                return Py(~x)
            self.error("'~' needs an integer operand", node)
        if op is ast.Not:
            cond = self.condition(v, node.operand, "'not'")
            return n.Unary(ty=bool_, op="not", operand=cond, loc=self.ctx.loc)
        e = self.materialize(v, node.operand)
        if op is ast.UAdd:
            return e
        if op is ast.USub:
            self.ctx.unifier.require(e.ty, lambda t: t.is_signed, self.ctx.loc, lambda t: (
                f"cannot negate a {t.name} value: cast it to a signed type first, e.g. "
                f"{'i64' if t.bits == 64 else 'i32'}(...)" if not t.is_bool else
                "cannot negate a bool: use 'not'"))
            return n.Unary(ty=e.ty, op="neg", operand=e, loc=self.ctx.loc)
        self.ctx.unifier.require(e.ty, lambda t: t.is_int, self.ctx.loc,
                                 lambda t: f"'~' needs an integer operand, not {t.name}"
                                 + (": use 'not' for bool" if t.is_bool else ""))
        return n.Unary(ty=e.ty, op="bitnot", operand=e, loc=self.ctx.loc)

    # -- conditions -------------------------------------------------------------------
    def truth(self, value: Py, node: ast.AST) -> bool:
        v = value.value
        if not (is_number(v) or isinstance(v, str)):
            self.error(f"{_describe_py(v)} cannot be used as a condition", node)
        return bool(v)

    def condition(self, value, node: ast.AST, what: str) -> n.Expr:
        """`value` as a runtime bool (a non-bool is an error suggesting a comparison)."""
        e = self.materialize(value, node)
        self.ctx.unifier.unify(e.ty, bool_, self.ctx.loc, lambda a, b: (
            f"{what} needs a bool, not {a}: use a comparison, e.g. x != 0"))
        return e

    def e_Compare(self, node: ast.Compare):
        values = [self.expr(node.left)] + [self.expr(c) for c in node.comparators]
        parts = []
        for op_node, a, b in zip(node.ops, values, values[1:]):
            r = self.compare(op_node, a, b, node)
            if isinstance(r, Py):
                if not r.value:
                    return Py(False)
                continue
            parts.append(r)
        if not parts:
            return Py(True)
        result = parts[0]
        if len(parts) > 1 and any(isinstance(p.ty, LineType) for p in parts):
            self.error("a chained comparison of lines is not supported: compare twice "
                       "and combine with select()", node)
        for p in parts[1:]:
            result = n.Logical(ty=bool_, op="and", lhs=result, rhs=p, loc=self.ctx.loc)
        return result

    def compare(self, op_node, a, b, node):
        op, sym = CMPOPS[type(op_node)]
        if isinstance(a, Py) and isinstance(b, Py):
            x, y = a.value, b.value
            if (is_number(x) and is_number(y)) or (isinstance(x, str) and isinstance(y, str)):
                return Py(_PY_CMP[op](x, y))
            if op in ("eq", "ne"):  # Python objects (e.g. a Comptime value and a global)
                try:
                    r = _PY_CMP[op](x, y)
                except Exception as exc:  # a user __eq__ that raises
                    self.error(f"comparing {_describe_py(x)} and {_describe_py(y)} with "
                               f"'{sym}' raised {type(exc).__name__}: {exc}", node)
                if not isinstance(r, (bool, np.bool_)):
                    self.error(f"comparing {_describe_py(x)} and {_describe_py(y)} with "
                               f"'{sym}' gives a {type(r).__name__}, not a bool", node)
                return Py(bool(r))
            self.error(f"cannot compare {x!r} and {y!r} with '{sym}'", node)
        lhs, rhs = self.materialize(a, node), self.materialize(b, node)
        lhs, rhs = self.broadcast([lhs, rhs], f"in '{sym}'")
        ty = self.ctx.unifier.unify(lhs.ty, rhs.ty, self.ctx.loc, lambda p, q: (
            f"cannot compare {p} and {q} with '{sym}': cast one side, e.g. "
            f"{next((t for t in (p, q) if ' ' not in t), 'f32')}(...)"))
        line = find(ty)
        if isinstance(line, LineType):  # elementwise: a line of bools
            return n.Compare(ty=LineType(bool_, line.size), op=op, lhs=lhs, rhs=rhs,
                             loc=self.ctx.loc)
        self.no_line(ty, f"'{sym}'")
        return n.Compare(ty=bool_, op=op, lhs=lhs, rhs=rhs, loc=self.ctx.loc)

    def e_IfExp(self, node: ast.IfExp):
        with self.ctx.banning_side_effects("a conditional expression"):
            cond = self.expr(node.test)
            if isinstance(cond, Py):
                return self.expr(node.body if self.truth(cond, node.test) else node.orelse)
            cond = self.condition(cond, node.test, "a conditional expression")
            a, b = self.rvalue(node.body), self.rvalue(node.orelse)
        return self.select(cond, a, b, "a conditional expression")

    def select(self, cond: n.Expr, a: n.Expr, b: n.Expr, what: str) -> n.Expr:
        a, b = self.broadcast([a, b], f"in {what}")
        mask = cond.ty
        if isinstance(mask, LineType):  # a line of bools chooses per element
            line = next((t for t in (find(a.ty), find(b.ty)) if not isinstance(t, TVar)),
                        None)
            if line is None:  # two literals: they take their default type now
                line = resolve(self.ctx.unifier.unify(a.ty, b.ty, self.ctx.loc, mix_message(what)))
            if not isinstance(line, LineType):  # two scalars: both broadcast
                line = LineType(line, mask.size)
                a, b = (self.splat(a, line, f"in {what}"),
                        self.splat(b, line, f"in {what}"))
            if line.size != mask.size:
                self.error(f"{what}: the condition is a line of {mask.size}, the values "
                           f"{line.name}")
        ty = self.ctx.unifier.unify(a.ty, b.ty, self.ctx.loc, lambda p, q: (
            f"the two sides of {what} have different types, {p} and {q}: cast one, e.g. "
            f"{next((t for t in (p, q) if ' ' not in t), 'f32')}(...)"))
        return n.Select(ty=ty, cond=cond, if_true=a, if_false=b, loc=self.ctx.loc)

    # -- types ------------------------------------------------------------------------
    def as_type(self, value, node: ast.AST):
        """A DType (or a device function's type variable) named by `value`."""
        from ..ir.types import Generic
        if isinstance(value, Py):  # bool, int, float: bool_, i32, f32
            value = Py(python_scalar_type(value.value))
        if isinstance(value, Py) and isinstance(value.value, DType):
            return value.value
        if isinstance(value, Py) and isinstance(value.value, Generic):
            return self.generic_type(value.value, self.ctx.loc)
        if isinstance(value, Py) and isinstance(value.value, MatrixElement):
            self.error(f"{value.value.name} is only the element type of a cmma fragment "
                       f"(cmma.Matrix(cmma.A, 16, 16, 8, {value.value.name}, ...)); "
                       f"use {value.value.storage.name} here", node)
        self.error("expected a dtype such as u32 or a placeholder such as Float", node)


def _describe_py(v) -> str:
    import types
    if isinstance(v, types.ModuleType):
        return f"the module {v.__name__!r}"
    name = getattr(v, "__name__", None)
    return repr(name) if name else f"the {type(v).__name__} value"

