"""Calls inside kernels: buffer methods, casts, for-loop ranges and inlining of @cube
device functions; calls of intrinsics, math functions and Python builtins go to their
handlers in intrinsics.py."""
from __future__ import annotations

import ast
import os
from typing import Any

from ..errors import compile_error, how_to_bind
from ..ir import nodes as n
from ..ir.types import DType, Generic, bool_, f32, u32
from ..ir.types import LineType, elem_of
from ..ir.visit import reads_memory, walk_stmts
from ..lang import BufferAnnotation, LineOf
from .context import Frame
from .infer import TVar, describe, find
from .inlinable import is_inlinable
from .intrinsics import CallSite, handler_for
from .values import (CALLABLE_NAMES, Buf, FragArray, FragVal, Py, Rec, Tup, is_number,
                     short_name)

_SIDE_EFFECTS = (n.Store, n.AtomicOp, n.Barrier, n.Terminate, *n.MATRIX_STMTS)
MAX_INLINE_DEPTH = 1000  # device-function calls nested in one kernel (docs/LANGUAGE.md)


def _plural(k: int) -> str:
    return f"{k} argument" + ("" if k == 1 else "s")


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
            if isinstance(base, n.Expr) and f.attr == "size":  # CubeCL's line.size()
                self.arity(node, "size", 0)
                return self.line_size_of(base, f.value)
            with self.at(f):
                func = self.e_Attribute_of(base, f)
        else:
            func = self.expr(f)
        if not isinstance(func, Py):
            self.error(f"{ast.unparse(f)} is not callable", f)
        obj = func.value
        key = CALLABLE_NAMES.get(id(obj))
        if key is not None:
            handler = handler_for(key)
            if handler is None:
                self.error(f"{short_name(key)}() cannot be called here", node)
            return handler(self, node, CallSite(short_name(key), want_value, shared_name))
        if isinstance(obj, (DType, Generic)):
            self.arity(node, repr(obj), 1)
            target = self.as_type(func, f)
            return self.cast_to(target, self.expr(node.args[0]), node.args[0])
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
        if name in ("shape", "stride") and (buf.kind == "shared" or buf.start is not None):
            self.arity(node, f"{ref.name}.{name}", 1)
            return self.shape_query(buf, name, node.args[0], node)
        if name in ("rank", "len", "buffer_len") and (buf.kind == "shared"
                                                      or buf.start is not None):
            self.arity(node, f"{ref.name}.{name}", 0)
            return self.meta_of_view(buf, name)
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
            if buf.is_kernel_array:
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

    def no_side_effects(self, what: str, node: ast.AST) -> None:
        if self.ctx.side_effect_ban is not None:
            self.error(f"{what}() cannot be used inside {self.ctx.side_effect_ban}", node)
        if self.ctx.divergent is not None and what.startswith(("plane_", "sync_", "cmma.")):
            self.error(f"{what}() cannot be used inside {self.ctx.divergent}", node)

    def ct_int(self, value) -> int | None:
        if isinstance(value, Py) and isinstance(value.value, int) \
                and not isinstance(value.value, bool):
            return value.value
        if isinstance(value, n.Const) and isinstance(find(value.ty), DType) \
                and find(value.ty).is_int:
            return int(value.value)
        return None

    # -- for loops --------------------------------------------------------------------
    def range_bounds(self, it: ast.expr, ct: list | None = None):
        """(start, stop, step, unroll) of `range(...)` or `unroll(range(...))`; `ct`, when
        given, receives the three bounds as Python ints (None where not known at compile
        time)."""
        unroll = False
        func = self.expr(it.func) if isinstance(it, ast.Call) else None
        if isinstance(func, Py) and CALLABLE_NAMES.get(id(func.value)) == "unroll":
            self.arity(it, "unroll", 1)
            unroll, it = True, it.args[0]
            func = self.expr(it.func) if isinstance(it, ast.Call) else None
        is_range = isinstance(func, Py) and CALLABLE_NAMES.get(id(func.value)) == "builtins.range"
        if not is_range:
            self.error("a for loop iterates over range(...), unroll(range(...)), or "
                       "enumerate(...)/zip(...) of them", it)
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
        if ct is not None:
            ct.extend(self.ct_int(v) for v in values)
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
        if parsed.returns_value:  # the result variables are made by the first return
            frame.ret_type = self.return_type(parsed.returns, frame)
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
        return self.call_result(frame)

    def return_type(self, ann, frame: Frame):
        """The type a device function's return annotation gives its result (a tuple of
        types for `-> tuple[...]`; a type variable where there is none)."""
        if isinstance(ann, tuple):
            return tuple(self.return_type(a, frame) for a in ann)
        if isinstance(ann, DType):
            return ann
        if isinstance(ann, Generic):
            return frame.env.get(ann.name) or self.generic_type(ann, self.ctx.loc)
        return TVar()

    def bind_param(self, p, arg, a_node: ast.AST, env: dict, parsed):
        """The binding of one argument of an inlined call: buffers by reference,
        comptime values as they are, scalars by value (a fresh variable)."""
        loc = self.ctx.loc
        if p.kind == "struct" or (isinstance(arg, Rec) and p.elem is None):
            return self.bind_struct(p, arg, a_node, env, parsed)
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
        if isinstance(arg, Tup):
            return self.bind_tuple_param(p, arg, a_node, parsed)
        if isinstance(arg, (FragVal, FragArray)):  # by reference, as buffers
            if p.elem is not None:
                self.error(f"parameter {p.name!r} of {parsed.name}() is annotated "
                           f"{p.elem!r}, but a cmma fragment was passed: leave a "
                           f"fragment parameter unannotated", a_node)
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
        # by value: a fresh variable, unless the argument cannot change meanwhile (it
        # reads no memory, and the callee cannot assign the caller's variables)
        if parsed.assign_counts.get(p.name) is None and not reads_memory(e):
            return e
        var = self.new_var(p.name, e.ty)
        self.use(var)
        self.emit(n.Assign(var=var, value=e, loc=loc))
        return var

    def bind_struct(self, p, arg, a_node: ast.AST, env: dict, parsed) -> Rec:
        """A struct argument, by reference (its fields are read-only); a parameter
        annotated with the struct's class binds the placeholders of its fields."""
        if not isinstance(arg, Rec) or (p.kind == "struct" and arg.cls is not p.elem):
            want = p.elem.__name__ if p.kind == "struct" else "a value"
            got = f"the struct {arg.cls.__name__}" if isinstance(arg, Rec) else "another value"
            self.error(f"parameter {p.name!r} of {parsed.name}() is {want}, got {got}",
                       a_node)
        if p.kind == "struct":
            self.bind_struct_generics(arg, a_node, env)
        return arg

    def bind_struct_generics(self, rec: Rec, a_node: ast.AST, env: dict) -> None:
        """Placeholder fields (`scale: Float`) bind the placeholder to the field's type."""
        from ..records import struct_fields
        for name, ann in struct_fields(rec.cls):
            value = rec.get(name)
            if isinstance(value, Rec):
                self.bind_struct_generics(value, a_node, env)
            else:
                g = ann.elem if isinstance(ann, BufferAnnotation) else ann
                if isinstance(g, LineOf):
                    g = g.elem
                if not isinstance(g, Generic):
                    continue
                ty = value.ref.elem if isinstance(value, Buf) else value.ty
                bound = env.get(g.name)
                if bound is None:
                    env[g.name] = ty
                else:
                    self.ctx.unifier.unify(bound, ty, self.ctx.loc, lambda a, b: (
                        f"{g.name} is {a} in this call, but {rec.path}.{name} is {b}"))
