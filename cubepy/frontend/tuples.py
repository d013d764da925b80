"""Tuples as values: `t = (a, b)`, `t[0]`, `x, y = t`, device functions that
`return a, b` (each item a result variable of its own), tuples passed to an
unannotated device-function parameter. A tuple exists only at compile time: it is a
`Tup` whose runtime items are copies made when the tuple was built (so `t = (a, b)`
keeps the values a and b had then, as in Python)."""
from __future__ import annotations

import ast

from ..ir import nodes as n
from .infer import TVar
from .values import Buf, Py, Tup

MAX_TUPLE = 64  # items of one tuple (each is a variable of its own)


class TupleMixin:
    """Builder methods for tuples."""

    def e_Tuple(self, node: ast.Tuple) -> Tup:
        if len(node.elts) > MAX_TUPLE:
            self.error(f"a tuple of more than {MAX_TUPLE} items", node)
        items = []
        for e in node.elts:
            with self.at(e):
                v = self.expr(e)
                if isinstance(v, Tup):
                    self.error("nested tuples are not supported in kernels", e)
                if isinstance(v, n.Expr) and not isinstance(v, n.Const):
                    v = self.snapshot(v)
            items.append(v)
        return Tup(tuple(items))

    def snapshot(self, e: n.Expr) -> n.Load:
        """A temporary holding `e` now (a later assignment of a variable read by `e`
        does not change the tuple)."""
        var = self.new_var("item", e.ty)
        self.use(var)
        self.emit(n.Assign(var=var, value=e, loc=self.ctx.loc))
        return n.Load(ty=var.ty, var=var, loc=self.ctx.loc)

    def tuple_item(self, tup: Tup, index_node: ast.expr):
        """`t[k]` with k known at compile time (negative counts from the end)."""
        k = self.ct_int(self.expr(index_node))
        size = len(tup.items)
        if k is None:
            self.error("a tuple is indexed by an integer known at compile time (t[0])",
                       index_node)
        if not -size <= k < size:
            self.error(f"index {k} is out of range for a tuple of {size} items",
                       index_node)
        item = tup.items[k]
        if isinstance(item, n.Expr):  # a fresh node at this use
            return n.Load(ty=item.ty, var=item.var, loc=self.ctx.loc) \
                if isinstance(item, n.Load) else item
        return item

    def bind_tuple(self, name: str, value: Tup, count: int, target: ast.AST) -> None:
        """`name = <tuple>`: the name denotes the tuple (assigned once, like a buffer)."""
        frame = self.ctx.frame
        if count != 1 or name in frame.scope:
            self.error(f"{name!r} names a tuple and can be assigned only once", target)
        frame.scope[name] = value
        frame.assigned.add(name)

    def bind_tuple_param(self, p, arg: Tup, a_node: ast.AST, parsed) -> Tup:
        """A tuple passed to a device function: an unannotated parameter takes it."""
        if p.elem is not None:
            self.error(f"parameter {p.name!r} of {parsed.name}() is {p.elem!r}, but a "
                       f"tuple of {len(arg.items)} values was passed: leave the "
                       f"parameter unannotated to take a tuple", a_node)
        if parsed.assign_counts.get(p.name):
            self.error(f"parameter {p.name!r} of {parsed.name}() takes a tuple and cannot "
                       f"be assigned in the function", a_node)
        return arg

    # -- results ----------------------------------------------------------------------
    def return_value(self, value_node: ast.expr) -> None:
        """`return x` or `return a, b` in a device function being inlined: assigns its
        result variable(s), made by the first return (every return gives as many values,
        of the same types)."""
        frame = self.ctx.frame
        fname = frame.parsed.name
        value = self.expr(value_node)
        declared = frame.ret_type
        if isinstance(value, Tup) or isinstance(declared, tuple):
            items = value.items if isinstance(value, Tup) else (value,)
            if isinstance(value, Tup) and not isinstance(declared, (tuple, TVar)):
                self.error(f"{fname}() is annotated to return one value, this returns "
                           f"{len(items)}: annotate it -> tuple[...]", value_node)
            if isinstance(declared, tuple) and len(declared) != len(items):
                self.error(f"{fname}() is annotated to return {len(declared)} values, "
                           f"this returns {len(items)}", value_node)
            if frame.ret_var is not None or (frame.ret_items is not None
                                             and len(frame.ret_items) != len(items)):
                had = len(frame.ret_items) if frame.ret_items is not None else 1
                self.error(f"{fname}() returns {had} value{'s' if had > 1 else ''} "
                           f"elsewhere, but {len(items)} here", value_node)
            if frame.ret_items is None:
                types = declared if isinstance(declared, tuple) else [TVar() for _ in items]
                frame.ret_items = tuple(self.result_var(f"{fname}_result_{k}", ty)
                                        for k, ty in enumerate(types))
            for var, item in zip(frame.ret_items, items):
                self.assign_result(var, item, value_node)
            return
        if frame.ret_items is not None:
            self.error(f"{fname}() returns {len(frame.ret_items)} values elsewhere, but "
                       f"one here", value_node)
        if frame.ret_var is None:
            frame.ret_var = self.result_var(f"{fname}_result", declared)
        self.assign_result(frame.ret_var, value, value_node)

    def result_var(self, base: str, ty) -> n.Var:
        var = self.new_var(base, ty if ty is not None else TVar())
        self.use(var)
        return var

    def assign_result(self, var: n.Var, value, value_node: ast.expr) -> None:
        frame = self.ctx.frame
        if isinstance(value, Buf):
            self.error(f"a @cube function cannot return a buffer ({value.ref.name!r})",
                       value_node)
        expr = self.materialize(value, value_node)
        self.ctx.unifier.unify(var.ty, expr.ty, self.ctx.loc, lambda a, b: (
            f"{frame.parsed.name}() returns {a}, but this returns {b}: cast it, "
            f"e.g. {a}(...)"))
        self.emit(n.Assign(var=var, value=expr, loc=self.ctx.loc))

    def call_result(self, frame) -> object:
        """What an inlined call gives: its result, a Tup of its results, or nothing."""
        if frame.ret_items is not None:
            return Tup(tuple(n.Load(ty=v.ty, var=v, loc=self.ctx.loc)
                             for v in frame.ret_items))
        if frame.ret_var is None:
            return Py(None)
        return n.Load(ty=frame.ret_var.ty, var=frame.ret_var, loc=self.ctx.loc)
