"""Calls inside kernels: buffer methods, Python builtins, cubepy intrinsics, math
functions, casts, and inlining of @cube device functions."""
from __future__ import annotations

import ast
import os
from typing import Any

from ..errors import compile_error, how_to_bind
from ..ir import nodes as n
from ..ir.types import DType, Generic, bool_, dtype_from_name, f32, u32
from ..ir.types import LineType, elem_of
from ..ir.visit import walk_stmts
from ..lang import LineOf
from ..targets import PORTABLE
from .context import Frame
from .infer import TVar, describe, find
from .intrinsics import is_inlinable
from .values import INTRINSIC_IDS, PY_BUILTINS, PY_MATH, Buf, Py, is_number

_SIDE_EFFECTS = (n.Store, n.AtomicOp, n.Barrier, n.Terminate)
MAX_INLINE_DEPTH = 1000  # device-function calls nested in one kernel (docs/LANGUAGE.md)


def _plural(k: int) -> str:
    return f"{k} argument" + ("" if k == 1 else "s")


def _or_list(items) -> str:
    """"a, b or c"."""
    items = [str(x) for x in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _listed(names) -> tuple[DType, ...]:
    """The element types called `names`, in the order messages list them: integers,
    then floats widest first, then bool."""
    types = [dtype_from_name(x) for x in names]
    return tuple(sorted(types, key=lambda t: (t.is_bool, t.is_float,
                                              -t.bits if t.is_float else t.bits, t.name)))


class CallMixin:
    """Call building for Builder."""

    def arity(self, node: ast.Call, name: str, *counts: int) -> None:
        if len(node.args) not in counts:
            want = " or ".join(str(c) for c in counts)
            self.error(f"{name}() takes {want} argument{'s' if counts[-1] != 1 else ''}, "
                       f"got {len(node.args)}", node)

    def e_Call(self, node: ast.Call, want_value: bool = True):
        shared_name = self.ctx.take_shared_name()
        f = node.func
        if isinstance(f, ast.Attribute):
            base = self.expr(f.value)
            if isinstance(base, Buf):
                return self.method(base, f.attr, node)
            with self.at(f):
                func = self.e_Attribute_of(base, f)
        else:
            func = self.expr(f)
        if not isinstance(func, Py):
            self.error(f"{ast.unparse(f)} is not callable", f)
        obj = func.value
        key = id(obj)
        if key in PY_BUILTINS:
            return self.py_builtin(PY_BUILTINS[key], node)
        if key in PY_MATH:
            return self.math_call(PY_MATH[key], node)
        if key in INTRINSIC_IDS:
            kind, name = INTRINSIC_IDS[key]
            if kind == "math":
                return self.math_call(name, node)
            return self.intrinsic(name, node, want_value, shared_name)
        if isinstance(obj, (DType, Generic)):
            self.arity(node, repr(obj), 1)
            target = self.as_type(func, f)
            return self.cast_to(target, self.expr(node.args[0]), node.args[0])
        from ..lang import Line
        if obj is Line:
            return self.make_line(node)
        if is_inlinable(obj):
            return self.inline(obj, node, want_value)
        self.error(f"{ast.unparse(f)} cannot be called in a kernel", f)

    def e_Attribute_of(self, base, node: ast.Attribute):
        """Attribute of an already evaluated base (avoids evaluating it twice)."""
        if not isinstance(base, Py) or is_number(base.value) or isinstance(base.value, str):
            self.error(f"unknown attribute {node.attr!r}", node)
        try:
            value = getattr(base.value, node.attr)
        except AttributeError:
            self.error(f"{ast.unparse(node.value)} has no attribute {node.attr!r}", node)
        except Exception as exc:  # a property or module __getattr__ that fails
            self.error(f"reading {ast.unparse(node)} raised {type(exc).__name__}: {exc}",
                       node)
        return self.from_python(value, node)

    # -- buffer methods ---------------------------------------------------------------
    def method(self, buf: Buf, name: str, node: ast.Call):
        ref = buf.ref
        if name in ("shape", "stride"):
            self.arity(node, f"{ref.name}.{name}", 1)
            if buf.kind != "tensor":
                self.error(f"{ref.name}.{name}(d): only a Tensor has a shape and strides "
                           f"(an {'Array' if buf.kind == 'array' else 'shared memory'} has "
                           f"len())", node)
            with self.at(node.args[0]):
                d = self.rvalue(node.args[0])
                self.ctx.unifier.unify(d.ty, u32, self.ctx.loc, lambda a, b: (
                    f"the dimension of {name}() must be u32, not {a}: cast it, e.g. "
                    f"u32(...)"))
            return n.Meta(ty=u32, kind=name, buffer=ref, dim=d, loc=self.ctx.loc)
        if name in ("rank", "len", "buffer_len"):
            self.arity(node, f"{ref.name}.{name}", 0)
            if buf.kind == "shared":
                if name == "rank":
                    return n.Const(ty=u32, value=1, loc=self.ctx.loc)
                return n.Const(ty=u32, value=buf.size, loc=self.ctx.loc)
            if name == "rank" and buf.kind != "tensor":
                self.error(f"{ref.name}.rank(): an Array has no rank", node)
            return n.Meta(ty=u32, kind=name, buffer=ref, loc=self.ctx.loc)
        if name == "line_size":  # known at compile time: part of the specialisation
            self.arity(node, f"{ref.name}.line_size", 0)
            return Py(buf.line)
        self.error(f"unknown method {ref.name}.{name}(): buffers have shape(d), "
                   f"stride(d), rank(), len(), buffer_len(), line_size()", node.func)

    # -- Python builtins --------------------------------------------------------------
    def py_builtin(self, name: str, node: ast.Call):
        if name == "range":
            self.error("range() can only be used in a for loop: for i in range(n)", node)
        if name == "len":
            self.arity(node, "len", 1)
            buf = self.expr(node.args[0])
            if not isinstance(buf, Buf):
                self.error("len() takes a tensor, an array or shared memory", node.args[0])
            if buf.kind == "shared":
                return n.Const(ty=u32, value=buf.size, loc=self.ctx.loc)
            return n.Meta(ty=u32, kind="len", buffer=buf.ref, loc=self.ctx.loc)
        if name in ("int", "float", "bool"):
            self.arity(node, name, 1)
            v = self.expr(node.args[0])
            if isinstance(v, Py) and is_number(v.value):
                return Py({"int": int, "float": float, "bool": bool}[name](v.value))
            hint = {"int": "i32", "float": "f32", "bool": "x != 0"}[name]
            self.error(f"{name}() works only on compile-time values: use {hint}"
                       f"{'(...)' if name != 'bool' else ''} in a kernel", node)
        if name == "round":
            return self.math_call("round", node)
        if name in ("max", "min"):
            self.arity(node, name, 2)
            a, b = self.expr(node.args[0]), self.expr(node.args[1])
            if isinstance(a, Py) and isinstance(b, Py) and is_number(a.value) \
                    and is_number(b.value):
                return Py(max(a.value, b.value) if name == "max" else min(a.value, b.value))
            a, b = self.materialize(a, node.args[0]), self.materialize(b, node.args[1])
            a, b = self.broadcast([a, b], f"in {name}()")
            ty = self.ctx.unifier.unify(a.ty, b.ty, self.ctx.loc, lambda p, q: (
                f"{name}() of {p} and {q}: cast one, e.g. "
                f"{next((t for t in (p, q) if ' ' not in t), 'f32')}(...)"))
            self.ctx.unifier.require(ty, lambda t: not t.is_bool, self.ctx.loc,
                           lambda t: f"{name}() does not apply to bool")
            return n.Binary(ty=ty, op=name, lhs=a, rhs=b, loc=self.ctx.loc)
        # abs
        self.arity(node, "abs", 1)
        v = self.expr(node.args[0])
        if isinstance(v, Py) and is_number(v.value):
            return Py(abs(v.value))
        e = self.materialize(v, node.args[0])
        self.ctx.unifier.require(e.ty, lambda t: not t.is_bool, self.ctx.loc,
                       lambda t: "abs() does not apply to bool")
        return n.Unary(ty=e.ty, op="abs", operand=e, loc=self.ctx.loc)

    # -- math -------------------------------------------------------------------------
    def math_call(self, name: str, node: ast.Call):
        want = n.MATH_FUNCS[name]
        self.arity(node, name, want)
        args = [self.rvalue(a) for a in node.args]
        args = self.broadcast(args, f"in {name}()")
        ty = args[0].ty
        for a in args[1:]:
            ty = self.ctx.unifier.unify(ty, a.ty, self.ctx.loc, lambda p, q: (
                f"{name}() arguments mix {p} and {q}: cast one, e.g. "
                f"{next((t for t in (p, q) if ' ' not in t), 'f32')}(...)"))
        ty = self.ctx.unifier.require_float(ty, self.ctx.loc, lambda t: (
            f"{name}() needs float arguments, not {t}: cast it, e.g. f32(...)"))
        out = ty
        if name in ("isnan", "isinf"):
            line = find(ty)
            out = LineType(bool_, line.size) if isinstance(line, LineType) else bool_
            if not isinstance(line, LineType):  # a line only later: not supported
                self.no_line(ty, f"{name}() of a value typed after the call")
        return n.Call(ty=out, func=name, args=tuple(args), loc=self.ctx.loc)

    # -- casts ------------------------------------------------------------------------
    def generic_type(self, g: Generic, loc: n.Loc):
        t = self.ctx.frame.env.get(g.name)
        if t is None:
            t = self.ctx.spec.generic(g.name)
        if t is None:
            example = "f32" if f32 in g.bound else g.bound[0].name
            in_params = any(getattr(p.elem, "elem", p.elem) is g
                            for p in self.ctx.frame.parsed.params)
            compile_error(loc, f"{g.name} is not bound: pass "
                               f"{how_to_bind(f'{g.name}={example}')} (one of "
                               f"{', '.join(b.name for b in g.bound)})"
                               + ("" if in_params else
                                  ", or use it in a parameter annotation"))
        return t

    def cast_to(self, target, value, node: ast.AST | None = None) -> n.Expr:
        if isinstance(value, Py) and is_number(value.value) and isinstance(target, DType):
            from .finalize import cast_value
            return n.Const(ty=target, value=cast_value(value.value, target), loc=self.ctx.loc)
        e = self.materialize(value, node)
        line = find(e.ty)
        if isinstance(line, LineType) and isinstance(target, DType):
            target = LineType(target, line.size)  # f16(line): each element converted
        elif isinstance(target, LineType):
            if isinstance(line, LineType) and line.size != target.size:
                self.error(f"cannot cast {line.name} to {target.name}", node)
        else:
            self.no_line(e.ty, f"a cast to {describe(target)}")
        return n.Cast(ty=target, operand=e, loc=self.ctx.loc)

    # -- cubepy intrinsics ------------------------------------------------------------
    def intrinsic(self, name: str, node: ast.Call, want_value: bool, shared_name):
        if name == "terminate":
            self.arity(node, name, 0)
            self.no_side_effects(name, node)
            self.emit(n.Terminate(loc=self.ctx.loc))
            return Py(None)
        if name == "sync_cube":
            self.arity(node, name, 0)
            self.no_side_effects(name, node)
            self.emit(n.Barrier(loc=self.ctx.loc))
            return Py(None)
        if name == "select":
            self.arity(node, name, 3)
            c = self.expr(node.args[0])
            a, b = self.rvalue(node.args[1]), self.rvalue(node.args[2])
            if isinstance(c, Py):
                cond = n.Const(ty=bool_, value=self.truth(c, node.args[0]), loc=self.ctx.loc)
            elif isinstance(c, n.Expr) and isinstance(find(c.ty), LineType) \
                    and find(c.ty).is_bool:
                cond = c  # a line of bools: chooses per element
            else:
                cond = self.condition(c, node.args[0], "select()")
            return self.select(cond, a, b, "select()")
        if name == "SharedMemory":
            return self.shared_memory(node, shared_name)
        if name == "unroll":
            self.error("unroll() can only be used in a for loop: for i in "
                       "unroll(range(n))", node)
        if name.startswith("atomic_"):
            return self.atomic(name[len("atomic_"):], node, want_value)
        if name.startswith("plane_"):
            return self.plane(name[len("plane_"):], node, want_value)
        self.error(f"{name}() cannot be called here", node)

    def plane(self, op: str, node: ast.Call, want_value: bool):
        """`plane_<op>(value[, lane])`: evaluated once, as its own assignment, by the
        units that reach it (so never inside a short-circuit or conditional expression
        or a while condition, where only some of them would)."""
        name = f"plane_{op}"
        if op not in PORTABLE.plane_ops:
            self.error(f"{name}() is not a plane operation", node.func)
        takes_arg = n.PLANE_OPS[op]
        self.arity(node, name, 2 if takes_arg else 1)
        self.no_side_effects(name, node)
        with self.at(node.args[0]):
            value = self.rvalue(node.args[0])
            if op in ("all", "any"):
                self.ctx.unifier.unify(value.ty, bool_, self.ctx.loc, lambda a, b: (
                    f"{name}() takes a bool (a condition), not {a}: compare it, e.g. "
                    f"x != 0"))
            else:
                # bool only where the value is moved, not combined (broadcast, shuffles)
                allowed = tuple(t for t in _listed(PORTABLE.plane_dtypes)
                                if takes_arg or not t.is_bool)
                # a line: the operation runs per element
                self.ctx.unifier.require(value.ty, lambda t: elem_of(t) in allowed,
                                         self.ctx.loc, lambda t: (
                    f"{name}() takes {', '.join(a.name for a in allowed[:-1])} or "
                    f"{allowed[-1].name} values, not {t.name}"))
        arg = None
        if takes_arg:
            what = {"shuffle_xor": "mask", "shuffle_up": "delta",
                    "shuffle_down": "delta"}.get(op, "lane")
            with self.at(node.args[1]):
                arg = self.rvalue(node.args[1])
                self.ctx.unifier.unify(arg.ty, u32, self.ctx.loc, lambda a, b: (
                    f"the {what} of {name}() must be u32, not {a}: cast it, e.g. u32(...)"))
        result = self.new_var(name, value.ty)
        self.use(result)
        self.emit(n.Assign(var=result, value=n.Plane(ty=value.ty, op=op, value=value,
                                                     arg=arg, loc=self.ctx.loc), loc=self.ctx.loc))
        return n.Load(ty=value.ty, var=result, loc=self.ctx.loc)

    def no_side_effects(self, what: str, node: ast.AST) -> None:
        if self.ctx.side_effect_ban is not None:
            self.error(f"{what}() cannot be used inside {self.ctx.side_effect_ban}", node)

    def ct_int(self, value) -> int | None:
        if isinstance(value, Py) and isinstance(value.value, int) \
                and not isinstance(value.value, bool):
            return value.value
        if isinstance(value, n.Const) and isinstance(find(value.ty), DType) \
                and find(value.ty).is_int:
            return int(value.value)
        return None

    def shared_memory(self, node: ast.Call, target: str | None) -> Buf:
        if target is None:
            self.error("SharedMemory(...) must be assigned to a name: "
                       "buf = SharedMemory(f32, 256)", node)
        self.arity(node, "SharedMemory", 2, 3)
        kind = self.expr(node.args[0])
        line = 1
        if isinstance(kind, Py) and isinstance(kind.value, LineOf):  # lines of shared memory
            if len(node.args) != 3:
                self.error("SharedMemory(Line[T], size, line_size): the line size is the "
                           "third argument, e.g. x.line_size()", node)
            line = self.ct_int(self.expr(node.args[2]))
            if line is None or line not in PORTABLE.line_sizes:
                self.error(f"the line size of SharedMemory must be "
                           f"{_or_list(PORTABLE.line_sizes)}, known at compile time (e.g. "
                           f"x.line_size())", node.args[2])
            kind = Py(kind.value.elem)
        elif len(node.args) == 3:
            self.error("a line size needs a Line element type: SharedMemory(Line[T], size, "
                       "line_size)", node.args[2])
        ty = self.as_type(kind, node.args[0])
        if not isinstance(ty, DType):
            self.error("the element type of SharedMemory must be known here", node.args[0])
        size = self.ct_int(self.expr(node.args[1]))
        if size is None:
            self.error("the size of SharedMemory must be known at compile time (a literal, "
                       "a constant or a Comptime[int] parameter)", node.args[1])
        if size <= 0:
            self.error(f"the size of SharedMemory must be positive, not {size}", node.args[1])
        name = target if self.ctx.frame.is_kernel else self.ctx.names.fresh(target)
        ref = n.BufferRef(name, ty, "shared")
        self.ctx.shared.append(n.SharedDecl(ref, size * line, self.ctx.loc))
        return Buf(ref, "shared", size, line=line)

    def atomic(self, op: str, node: ast.Call, want_value: bool):
        name = f"atomic_{op}"
        self.arity(node, name, 4 if op == "compare_exchange" else 3)
        self.no_side_effects(name, node)
        buf = self.expr(node.args[0])
        if not isinstance(buf, Buf):
            self.error(f"{name}() takes a tensor, an array or shared memory first",
                       node.args[0])
        elem = buf.ref.elem
        if buf.line > 1:
            self.error(f"{name}() on a Line buffer ({buf.ref.name!r}) is not supported",
                       node.args[0])
        allowed = _listed(PORTABLE.atomic_dtypes.get(op, ()))
        if elem not in allowed:
            ints = [t.name for t in allowed if not t.is_float]
            floats = [t.name for t in allowed if t.is_float]
            self.error(f"{name}() needs {_or_list(ints)} elements"
                       f"{f' (or {_or_list(floats)})' if floats else ''}, but "
                       f"{buf.ref.name!r} holds {elem.name}", node.args[0])
        index = self.index(node.args[1])
        values = []
        for a in node.args[2:]:
            with self.at(a):
                v = self.rvalue(a)
                self.unify_elem(buf, v, f"use in {name}()")
            values.append(v)
        result = None
        if want_value:
            result = self.new_var("old", elem)
            self.use(result)
        compare = values[0] if op == "compare_exchange" else None
        self.emit(n.AtomicOp(op=op, buffer=buf.ref, index=index, value=values[-1],
                             compare=compare, result=result, loc=self.ctx.loc))
        if result is None:
            return Py(None)
        return n.Load(ty=elem, var=result, loc=self.ctx.loc)

    # -- for loops --------------------------------------------------------------------
    def range_bounds(self, it: ast.expr):
        """(start, stop, step, unroll) of `range(...)` or `unroll(range(...))`."""
        unroll = False
        func = self.expr(it.func) if isinstance(it, ast.Call) else None
        if isinstance(func, Py) and INTRINSIC_IDS.get(id(func.value)) == ("lang", "unroll"):
            self.arity(it, "unroll", 1)
            unroll, it = True, it.args[0]
            func = self.expr(it.func) if isinstance(it, ast.Call) else None
        if not (isinstance(func, Py) and PY_BUILTINS.get(id(func.value)) == "range"):
            self.error("a for loop iterates over range(...) or unroll(range(...))", it)
        self.arity(it, "range", 1, 2, 3)
        with self.at(it):
            values = [self.expr(a) for a in it.args]
            if len(values) == 1:
                values = [Py(0)] + values
            if len(values) == 2:
                values.append(Py(1))
            step_ct = self.ct_int(values[2])
            if step_ct == 0:
                self.error("range() step must not be zero", it.args[2])
            if isinstance(values[2], Py) and isinstance(values[2].value, float):
                self.error("range() takes integers", it.args[2])
            if unroll:
                for v, a in zip(values, it.args if len(it.args) == 3 else [None, *it.args]):
                    if self.ct_int(v) is None:
                        self.error("unroll(range(...)) needs bounds known at compile time "
                                   "(literals, constants or Comptime[int] parameters)",
                                   a if a is not None else it)
            exprs = [self.materialize(v, it) for v in values]
            ty = exprs[0].ty
            for e in exprs[1:]:
                ty = self.ctx.unifier.unify(ty, e.ty, self.ctx.loc, lambda p, q: (
                    f"range() bounds mix {p} and {q}: cast one, e.g. "
                    f"{next((t for t in (p, q) if ' ' not in t), 'u32')}(...)"))
            self.ctx.unifier.require(ty, lambda t: t.is_int, self.ctx.loc,
                           lambda t: f"range() takes integers, not {t.name}")
            if step_ct is not None and step_ct < 0:
                self.ctx.unifier.require(ty, lambda t: t.is_signed, self.ctx.loc, lambda t: (
                    f"a negative step needs a signed loop variable, but the bounds are "
                    f"{t.name}: cast them, e.g. i32(...)"))
        return exprs[0], exprs[1], exprs[2], unroll

    # -- device functions -------------------------------------------------------------
    def inline(self, cf, node: ast.Call, want_value: bool):
        if cf.is_kernel:
            self.error(f"{cf.__name__} is a kernel (@cube(launch=True)) and cannot be "
                       f"called from a @cube function", node)
        if cf in self.ctx.inline_stack or cf.fn is self.ctx.frame.parsed.fn:
            chain = " -> ".join([f.__name__ for f in self.ctx.inline_stack] + [cf.__name__])
            self.error(f"recursive call to {cf.__name__}() ({chain}): recursion is not "
                       f"supported in kernels", node)
        if len(self.ctx.inline_stack) >= MAX_INLINE_DEPTH:
            chain = " -> ".join(f.__name__ for f in self.ctx.inline_stack[:3])
            self.error(f"device functions nested more than {MAX_INLINE_DEPTH} calls deep "
                       f"({chain} -> ... -> {cf.__name__}), the compiler's limit", node)
        parsed = cf._parse()
        if len(node.args) != len(parsed.params):
            self.error(f"{parsed.name}() takes {_plural(len(parsed.params))}, got "
                       f"{len(node.args)}", node)
        args = [self.expr(a) for a in node.args]
        caller = self.ctx.frame
        frame = Frame(parsed, dict(caller.env), base_depth=len(self.ctx.blocks))
        mark = len(self.ctx.blocks[-1])
        self.emit(n.Comment(text=f"inlined {parsed.name}() from "
                                 f"{os.path.basename(parsed.filename)}:{parsed.loc.lineno}",
                            loc=self.ctx.loc))
        env_local: dict[str, Any] = {}
        for p, a, a_node in zip(parsed.params, args, node.args):
            with self.at(a_node):
                frame.scope[p.name] = self.bind_param(p, a, a_node, env_local, parsed)
            frame.assigned.add(p.name)
            if p.kind == "comptime":
                frame.comptime_names.add(p.name)
        frame.env.update(env_local)
        if parsed.returns_value:
            if isinstance(parsed.returns, DType):
                rty = parsed.returns
            elif isinstance(parsed.returns, Generic):
                rty = frame.env.get(parsed.returns.name) or self.generic_type(parsed.returns,
                                                                             self.ctx.loc)
            else:
                rty = TVar()
            frame.ret_var = self.new_var(f"{parsed.name}_result", rty)
            self.use(frame.ret_var)
        if parsed.early_return:
            frame.ret_flag = self.new_var(f"{parsed.name}_done", bool_)
            self.use(frame.ret_flag)
            # reset on every call: the call may sit in a loop
            loc = self.ctx.loc
            self.emit(n.Assign(var=frame.ret_flag, value=n.Const(ty=bool_, value=False, loc=loc),
                               loc=loc))
        self.ctx.inline_stack.append(cf)
        self.ctx.frame = frame
        try:
            self.body(parsed.tree.body)
        finally:
            self.ctx.frame = caller
            self.ctx.inline_stack.pop()
        if self.ctx.side_effect_ban is not None:
            for s in walk_stmts(n.Block(tuple(self.ctx.blocks[-1][mark:]))):
                if isinstance(s, _SIDE_EFFECTS):
                    self.error(f"{parsed.name}() has side effects (stores, atomics, barriers "
                               f"or terminate) and cannot be called inside "
                               f"{self.ctx.side_effect_ban}", node)
        if frame.ret_var is None:
            return Py(None)
        return n.Load(ty=frame.ret_var.ty, var=frame.ret_var, loc=self.ctx.loc)

    def bind_param(self, p, arg, a_node: ast.AST, env: dict, parsed):
        """The binding of one argument of an inlined call: buffers by reference,
        comptime values as they are, scalars by value (a fresh variable)."""
        loc = self.ctx.loc
        if p.kind in ("tensor", "array"):
            if not isinstance(arg, Buf):
                self.error(f"parameter {p.name!r} of {parsed.name}() is a "
                           f"{p.kind.capitalize()}: pass a buffer", a_node)
            if arg.kind == "array" and p.kind == "tensor":
                self.error(f"parameter {p.name!r} of {parsed.name}() is a Tensor, but "
                           f"{arg.ref.name!r} is an Array", a_node)
            elem = p.elem
            if isinstance(elem, LineOf):  # the buffer keeps its own line size
                elem = elem.elem
            if isinstance(elem, Generic):
                bound = env.get(elem.name)
                if bound is None:
                    if not elem.accepts(arg.ref.elem):
                        self.error(f"{arg.ref.name!r} holds {arg.ref.elem.name}, which is "
                                   f"not a valid {elem.name}", a_node)
                    env[elem.name] = arg.ref.elem
                elif find(bound) is not arg.ref.elem:
                    self.ctx.unifier.unify(bound, arg.ref.elem, loc, lambda a, b: (
                        f"{elem.name} is {a} here, but {arg.ref.name!r} holds {b}"))
            elif elem is not None and not isinstance(elem, Generic) and elem is not arg.ref.elem:
                self.error(f"parameter {p.name!r} of {parsed.name}() expects {elem!r} "
                           f"elements, but {arg.ref.name!r} holds {arg.ref.elem.name}", a_node)
            return arg
        if p.kind == "comptime":
            if not isinstance(arg, Py):
                self.error(f"parameter {p.name!r} of {parsed.name}() is Comptime: pass a "
                           f"value known at compile time", a_node)
            return arg
        if isinstance(arg, Buf):
            self.error(f"parameter {p.name!r} of {parsed.name}() is a scalar, but a buffer "
                       f"was passed", a_node)
        e = self.materialize(arg, a_node)
        elem = p.elem
        if isinstance(elem, DType):
            self.ctx.unifier.unify(e.ty, elem, loc, lambda a, b: (
                f"parameter {p.name!r} of {parsed.name}() is {b}, got {a}: cast it, "
                f"e.g. {b}(...)"))
        elif isinstance(elem, Generic):
            bound = env.get(elem.name)
            if bound is None:
                env[elem.name] = e.ty  # a line binds it too: the function runs per line
                self.ctx.unifier.require(e.ty, lambda t: elem.accepts(elem_of(t)), loc, lambda t: (
                    f"{elem.name} cannot be {t.name} (expected one of "
                    f"{', '.join(b.name for b in elem.bound)})"))
            else:
                self.ctx.unifier.unify(bound, e.ty, loc, lambda a, b: (
                    f"{elem.name} is {a} in this call, but {p.name!r} gets {b}"))
        elif isinstance(elem, LineOf):  # Line[T]: a line (or a scalar) of T elements
            got = elem_of(find(e.ty))
            inner = env.get(elem.elem.name, elem.elem) if isinstance(elem.elem, Generic) \
                else elem.elem
            if isinstance(inner, Generic):  # binds the placeholder to the element type
                if not isinstance(got, DType) or not inner.accepts(got):
                    self.error(f"parameter {p.name!r} of {parsed.name}() is "
                               f"Line[{inner.name}], got {describe(e.ty)}", a_node)
                env[inner.name] = got
            elif got is not find(inner):
                self.error(f"parameter {p.name!r} of {parsed.name}() takes elements of "
                           f"{describe(inner)}, got {describe(e.ty)}", a_node)
        # by value: a fresh variable, unless the argument cannot change meanwhile
        if parsed.assign_counts.get(p.name) is None and _stable(e):
            return e
        var = self.new_var(p.name, e.ty)
        self.use(var)
        self.emit(n.Assign(var=var, value=e, loc=loc))
        return var


def _stable(e: n.Expr) -> bool:
    """True when `e` reads no memory (so it can be substituted for a parameter: the
    callee cannot assign the caller's variables)."""
    from ..ir.visit import walk_exprs
    return not any(isinstance(x, n.Index) for x in walk_exprs(e))
