"""Per-specialisation IR building: ParsedFunction + Specialization -> ir.Kernel.

One pass over the ast builds IR whose types may still be type variables (infer.py);
finalize.py then rebuilds it with concrete types. Statements live here, expressions in
exprs.py, calls (builtins, intrinsics, casts, inlining) in calls.py.

Declarations follow Python scoping (a variable lives for the whole function): a
variable first assigned directly in the kernel's top-level block is declared by that
assignment; any other variable gets a `Declare` in the top-level block just before the
top-level statement holding its first use.
"""
from __future__ import annotations

import ast
import dataclasses
from contextlib import contextmanager

from ..errors import compile_error, how_to_bind
from ..ir import nodes as n
from ..ir.types import DType, Generic, LineType, bool_, u32
from ..ir.visit import reads_memory
from ..lang import LineOf
from ..spec import Specialization
from .calls import CallMixin
from .pyforms import PyFormsMixin
from .tuples import TupleMixin
from .context import FrontendContext
from .exprs import ExprMixin
from .indexing import IndexMixin, ShapeOf
from .finalize import const_value, finalize_kernel
from .infer import TVar, find
from .parse import ParsedFunction, make_loc
from .values import Buf, Dead, FragArray, FragVal, Py, Rec, Tup, is_number


class Builder(ExprMixin, CallMixin, PyFormsMixin, TupleMixin, IndexMixin):
    """Builds one kernel for one specialisation. Never mutates the ast."""

    def __init__(self, parsed: ParsedFunction, spec: Specialization, checked: bool = True):
        self.ctx = FrontendContext.for_kernel(parsed, spec)
        self.ctx.checked = checked

    # -- locations and errors ---------------------------------------------------------
    @contextmanager
    def at(self, node: ast.AST):
        """Sets the location every IR node built inside takes."""
        ctx = self.ctx
        saved = ctx.loc
        ctx.loc = make_loc(ctx.frame.parsed.filename, node)
        try:
            yield
        finally:
            ctx.loc = saved

    def error(self, msg: str, node: ast.AST | None = None):
        ctx = self.ctx
        loc = make_loc(ctx.frame.parsed.filename, node) if node is not None else ctx.loc
        compile_error(loc, msg)

    # -- names ------------------------------------------------------------------------
    def new_var(self, base: str, ty, rename: bool = True) -> n.Var:
        return n.Var(self.ctx.names.fresh(base) if rename else base, ty)

    def local(self, name: str) -> n.Var:
        """The variable `name` of the current function, created on first sight."""
        b = self.ctx.frame.scope.get(name)
        if isinstance(b, n.Var):
            return b
        var = n.Var(name if self.ctx.frame.is_kernel else self.ctx.names.fresh(name), TVar())
        self.ctx.frame.scope[name] = var
        return var

    def use(self, var: n.Var) -> None:
        """Makes sure `var` is declared before the current top-level statement."""
        if id(var) not in self.ctx.declared:
            self.ctx.declared.add(id(var))
            self.ctx.pending.append(var)

    # -- statement emission -----------------------------------------------------------
    def emit(self, stmt: n.Stmt) -> None:
        self.ctx.blocks[-1].append(stmt)

    def block(self, stmts: list[ast.stmt], loop: bool = False) -> n.Block:
        self.ctx.blocks.append([])
        if loop:
            self.ctx.frame.loop_depth += 1
        try:
            self.body(stmts)
        finally:
            if loop:
                self.ctx.frame.loop_depth -= 1
            out = self.ctx.blocks.pop()
        return n.Block(tuple(out))

    def body(self, stmts: list[ast.stmt]) -> None:
        frame = self.ctx.frame
        at_top = len(self.ctx.blocks) == 1 and frame.is_kernel
        for i, s in enumerate(stmts):
            if at_top:
                mark = len(self.ctx.blocks[0])
                self.stmt(s)
                if self.ctx.pending:
                    loc = make_loc(frame.parsed.filename, s)
                    self.ctx.blocks[0][mark:mark] = [n.Declare(var=v, loc=loc)
                                                 for v in self.ctx.pending]
                    self.ctx.pending.clear()
            else:
                self.stmt(s)
            if (frame.ret_flag is not None and id(s) in frame.parsed.returns_inside
                    and i + 1 < len(stmts)):
                if isinstance(s, ast.Return):
                    return  # the rest is unreachable
                # the rest of the block runs only if the function has not returned
                with self.at(s):
                    cond = n.Unary(ty=bool_, op="not", loc=self.ctx.loc,
                                   operand=n.Load(ty=bool_, var=frame.ret_flag, loc=self.ctx.loc))
                    rest = self.block(stmts[i + 1:])
                    self.emit(n.If(cond=cond, then=rest, loc=self.ctx.loc))
                return

    def stmt(self, node: ast.stmt) -> None:
        handler = getattr(self, "s_" + type(node).__name__, None)
        if handler is None:  # the whitelist runs at parse time; this is a safety net
            self.error(f"unsupported statement: {type(node).__name__}", node)
        with self.at(node):
            handler(node)

    # -- statements -------------------------------------------------------------------
    def s_Pass(self, node: ast.Pass) -> None:
        pass

    def s_Expr(self, node: ast.Expr) -> None:
        v = node.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return  # docstring
        if not isinstance(v, ast.Call):
            self.error("this expression has no effect", v)
        with self.at(v):
            self.e_Call(v, want_value=False)

    def s_Assign(self, node: ast.Assign) -> None:
        value_node = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            return self.assign_tuple(node.targets[0], value_node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(value_node, ast.Call):
            with self.ctx.naming_shared(node.targets[0].id):
                value = self.expr(value_node)
        else:
            value = self.expr(value_node)
        for target in node.targets:
            self.assign_to(target, value, node)

    def s_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name) or node.value is None:
            self.error("an annotated assignment needs a name and a value: x: u32 = 0", node)
        ann = self.expr(node.annotation)
        ty = self.as_type(ann, node.annotation)
        value = self.expr(node.value)
        if isinstance(value, Py) and is_number(value.value):
            if isinstance(ty, DType) and not isinstance(value.value, bool):
                # a literal takes the declared type: out of range is an error, not a wrap
                loc = make_loc(self.ctx.frame.parsed.filename, node.value)
                value = n.Const(ty=ty, value=const_value(value.value, ty, loc), loc=loc)
            else:
                value = self.cast_to(ty, value)
        expr = self.materialize(value, node.value)
        self.ctx.unifier.unify(expr.ty, ty, self.ctx.loc, lambda a, b: f"cannot assign {a} to "
                     f"{node.target.id!r} declared {b}: cast it, e.g. {b}(...)")
        self.assign_to(node.target, expr, node)

    def assign_tuple(self, target: ast.Tuple, value_node: ast.expr) -> None:
        if not isinstance(value_node, ast.Tuple):
            made = self.subscripted(value_node)  # (t.shape comes back as a ShapeOf)
            if isinstance(made, ShapeOf):  # rows, cols = t.shape
                made = self.unpacked_shape(made, len(target.elts), value_node)
            if isinstance(made, Tup) and len(made.items) == len(target.elts):
                for t, v in zip(target.elts, made.items):
                    self.assign_to(t, v, t)
                return
            count = f"{len(made.items)} values" if isinstance(made, Tup) else "one value"
            self.error(f"cannot unpack {count} into {len(target.elts)} names", value_node)
        if len(value_node.elts) != len(target.elts):
            self.error("tuple assignment needs a tuple of the same length on the right "
                       "(a, b = b, a)", value_node)
        values = []
        for e in value_node.elts:  # every right side first, into temporaries
            v = self.expr(e)
            if isinstance(v, n.Expr) and not isinstance(v, n.Const):
                tmp = self.new_var("tmp", v.ty)
                self.use(tmp)
                self.emit(n.Assign(var=tmp, value=v, loc=self.ctx.loc))
                v = n.Load(ty=v.ty, var=tmp, loc=self.ctx.loc)
            values.append(v)
        for t, v in zip(target.elts, values):
            self.assign_to(t, v, t)

    def assign_to(self, target: ast.expr, value, node: ast.AST) -> None:
        frame = self.ctx.frame
        if isinstance(target, ast.Subscript):
            value_node = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else target
            return self.store(target, value, value_node)
        if not isinstance(target, ast.Name):
            self.error("only names and t[i] can be assigned", target)
        name = target.id
        self.check_assignable(name, target)
        count = frame.parsed.assign_counts.get(name, 0)
        if isinstance(value, Tup):
            return self.bind_tuple(name, value, count, target)
        if isinstance(value, Buf):
            if count != 1:
                self.error(f"{name!r} names a buffer and can be assigned only once", target)
            frame.scope[name] = value
            frame.assigned.add(name)
            return
        if isinstance(value, (FragVal, FragArray)):  # a cmma fragment: named, not copied
            if name in frame.scope:
                self.error(f"cannot rebind {name!r} to a cmma fragment: it already names "
                           f"something else", target)
            frame.scope[name] = value
            frame.assigned.add(name)
            return
        if isinstance(value, Rec):  # another name for a struct (its fields are read-only)
            if count != 1:
                self.error(f"{name!r} names a struct and can be assigned only once", target)
            frame.scope[name] = value
            frame.assigned.add(name)
            return
        if isinstance(value, Py) and count == 1 and frame.loop_depth == 0 \
                and len(self.ctx.blocks) == frame.base_depth \
                and name in frame.parsed.top_assigned \
                and name not in frame.scope:
            frame.scope[name] = value  # a compile-time constant
            frame.assigned.add(name)
            return
        expr = self.materialize(value, node.value if hasattr(node, "value") else target)
        var = self.local(name)
        self.ctx.unifier.unify(var.ty, expr.ty, self.ctx.loc, lambda a, b: (
            f"cannot assign {b} to {name!r}, which holds {a}: cast it, e.g. {a}(...)"))
        frame.assigned.add(name)
        declare = False
        if id(var) not in self.ctx.declared and len(self.ctx.blocks) == 1 and frame.is_kernel:
            self.ctx.declared.add(id(var))
            declare = True
        else:
            self.use(var)
        self.emit(n.Assign(var=var, value=expr, declare=declare, loc=self.ctx.loc))

    def check_assignable(self, name: str, target: ast.AST) -> None:
        frame = self.ctx.frame
        b = frame.scope.get(name)
        if name in frame.loop_vars:
            self.error(f"cannot assign to the loop variable {name!r}", target)
        if isinstance(b, Buf) and not b.is_kernel_array:
            self.error(f"cannot rebind the {b.kind.capitalize()} parameter {name!r}", target)
        if isinstance(b, Rec):
            self.error(f"cannot rebind the struct {name!r} ({b.cls.__name__})", target)
        if isinstance(b, (FragVal, FragArray)):
            self.error(f"cannot assign to the cmma fragment {name!r}: fragments are not "
                       f"values; change one with cmma.fill, cmma.load or cmma.execute, or "
                       f"convert it with cmma.cast into a new name", target)
        if name in frame.comptime_names:
            self.error(f"cannot assign to the comptime parameter {name!r}", target)
        if isinstance(b, Py):
            self.error(f"{name!r} is a compile-time constant and cannot be reassigned",
                       target)
        if isinstance(b, Dead):
            self.error(f"{name!r} is a loop variable and cannot be reused after its loop",
                       target)

    def store(self, target: ast.Subscript, value, value_node: ast.AST) -> None:
        buf = self.expr(target.value)
        if isinstance(buf, n.Expr):  # a line value, or a scalar (a line of 1)
            return self.store_element(target, buf, self.materialize(value, value_node))
        if isinstance(buf, FragArray):
            self.error(f"cannot assign to an element of the cmma fragments "
                       f"{buf.decl.name!r}: fragments are not values (use cmma.fill, "
                       f"cmma.load or cmma.execute)", target)
        if not isinstance(buf, Buf):
            self.error("only tensors, arrays and shared memory can be indexed", target.value)
        index = self.buffer_index(buf, target.slice)
        expr = self.materialize(value, value_node)  # a literal's errors point at it
        expr = self.unify_elem(buf, expr, "store")
        self.write(buf, index, expr)

    def write(self, buf: Buf, index: n.Expr, value: n.Expr) -> None:
        """`buf[index] = value`; a line of a local or shared array is stored element by
        element (shared: as one line where the target has vector stores), from a
        temporary holding the whole line (computed before any element is stored), at an
        index that the element stores cannot change."""
        if not (buf.is_kernel_array and buf.line > 1):
            self.emit(n.Store(buffer=buf.ref, index=index, value=value, loc=self.ctx.loc))
            return
        value = self.once(value, "line")
        # The index goes into a temporary only when it reads memory, which the element
        # stores could change. Else it stays an expression: an unrolled `acc[2 * i]`'s
        # folds to a constant, where a temporary's clamp (scalarize_lines) kept a local
        # array's indices from folding.
        if reads_memory(index):
            index = self.once(index, "line_index")
        if buf.ref.space == "shared":  # one access where the target has vector stores
            elems = tuple(n.Extract(ty=buf.ref.elem, value=value, loc=self.ctx.loc,
                                    index=n.Const(ty=u32, value=k, loc=self.ctx.loc))
                          for k in range(buf.line))
            self.emit(n.StoreLine(buffer=buf.ref, line=self.clamped_line(index, buf.line),
                                  values=elems, loc=self.ctx.loc))
            return
        for k in range(buf.line):
            elem = n.Extract(ty=buf.ref.elem, value=value, loc=self.ctx.loc,
                             index=n.Const(ty=u32, value=k, loc=self.ctx.loc))
            self.emit(n.Store(buffer=buf.ref, index=self.shared_element(index, buf.line, k),
                              value=elem, loc=self.ctx.loc))

    def once(self, e: n.Expr, base: str) -> n.Expr:
        """`e` itself when it is a variable or a constant, else a temporary holding it."""
        if isinstance(e, (n.Load, n.Const)):
            return e
        var = self.new_var(base, e.ty)
        self.use(var)
        self.emit(n.Assign(var=var, value=e, loc=self.ctx.loc))
        return n.Load(ty=var.ty, var=var, loc=self.ctx.loc)

    def store_element(self, target: ast.Subscript, line: n.Expr, value: n.Expr) -> None:
        """`v[k] = value` for a line variable `v`: v becomes a line with element k
        replaced (for a scalar, a line of 1: `v[0] = value` is `v = value`)."""
        if not isinstance(target.value, ast.Name):
            self.error("only an element of a line variable can be assigned (v[k] = x)",
                       target)
        self.assign_to(target.value, self.line_with(line, target.slice, value), target)

    def unify_elem(self, buf: Buf, expr: n.Expr, what: str) -> n.Expr:
        """`expr` as a value of `buf[i]`'s type (a scalar stored into a line buffer is
        broadcast to every element of the line)."""
        elem = buf.ref.elem
        got = find(expr.ty)
        if isinstance(got, LineType) and buf.line == 1:
            self.error(f"cannot {what} a line ({got.name}) into {buf.ref.name!r}, whose "
                       f"elements are single {elem.name}: {what} one element (v[k]), or "
                       f"make {buf.ref.name!r} a Line buffer of the same line size")
        if buf.line > 1 and not isinstance(got, LineType):
            expr = self.splat(expr, buf.value_type, f"in a {what}")
        self.ctx.unifier.unify(expr.ty, buf.value_type, self.ctx.loc, lambda a, b: (
            f"cannot {what} {a} into {buf.ref.name!r}, whose elements are {b}: cast it, "
            f"e.g. {elem.name}(...)"))
        return expr

    def s_AugAssign(self, node: ast.AugAssign) -> None:
        target = node.target
        if isinstance(target, ast.Subscript):
            buf = self.expr(target.value)
            if isinstance(buf, n.Expr):  # a line value, or a scalar (a line of 1)
                cur = self.line_element(buf, target.slice)
                new = self.materialize(self.binop(node.op, cur, self.expr(node.value), node))
                return self.store_element(target, buf, new)
            if not isinstance(buf, Buf):
                self.error("only tensors, arrays and shared memory can be indexed",
                           target.value)
            index = self.buffer_index(buf, target.slice)  # built once: the target is
            # evaluated once
            cur = self.read(buf, index)
            new = self.binop(node.op, cur, self.expr(node.value), node)
            new = self.unify_elem(buf, new, "store")
            self.write(buf, index, new)
            return
        if not isinstance(target, ast.Name):
            self.error("only names and t[i] can be assigned", target)
        self.check_assignable(target.id, target)
        cur = self.expr(target)
        if not isinstance(cur, n.Load):
            self.error(f"{target.id!r} is not a variable", target)
        new = self.binop(node.op, cur, self.expr(node.value), node)
        var = cur.var
        self.ctx.unifier.unify(var.ty, new.ty, self.ctx.loc, lambda a, b: (
            f"cannot assign {b} to {target.id!r}, which holds {a}: cast it, e.g. {a}(...)"))
        self.emit(n.Assign(var=var, value=new, loc=self.ctx.loc))

    def s_If(self, node: ast.If) -> None:
        cond = self.expr(node.test)
        if isinstance(cond, Py):  # resolved at compile time: the dead branch is not built
            self.body(node.body if self.truth(cond, node.test) else node.orelse)
            return
        cond = self.condition(cond, node.test, "an if condition")
        then = self.block(node.body)
        orelse = self.block(node.orelse)
        self.emit(n.If(cond=cond, then=then, orelse=orelse, loc=self.ctx.loc))

    def s_While(self, node: ast.While) -> None:
        if node.orelse:
            return self.loop_else(node, self.s_While)
        self.ctx.blocks.append([])
        try:
            with self.ctx.banning_side_effects("a while condition"):
                cond = self.expr(node.test)
        finally:
            pre = self.ctx.blocks.pop()
        if isinstance(cond, Py):
            if not self.truth(cond, node.test):
                return
            cond = n.Const(ty=bool_, value=True, loc=self.ctx.loc)
        cond = self.condition(cond, node.test, "a while condition")
        if pre:  # the condition needs statements: evaluate them on every iteration
            stop = n.If(cond=n.Unary(ty=bool_, op="not", operand=cond, loc=self.ctx.loc),
                        then=n.Block((n.Break(loc=self.ctx.loc),)), loc=self.ctx.loc)
            body = self.block(node.body, loop=True)
            body = n.Block((*pre, stop, *body.stmts))
            cond = n.Const(ty=bool_, value=True, loc=self.ctx.loc)
        else:
            body = self.block(node.body, loop=True)
        self.emit(n.While(cond=cond, body=body, loc=self.ctx.loc))

    def s_For(self, node: ast.For) -> None:
        if node.orelse:
            return self.loop_else(node, self.s_For)
        if self.for_enumerate_zip(node):
            return
        frame = self.ctx.frame
        if not isinstance(node.target, ast.Name):
            self.error("the loop variable must be a single name", node.target)
        name = node.target.id
        if isinstance(frame.scope.get(name), (n.Var, Py, Buf)):
            self.error(f"{name!r} is already a variable: use another name for the loop "
                       f"variable", node.target)
        if name in frame.loop_vars:
            self.error(f"the loop variable {name!r} is already used by an enclosing loop",
                       node.target)
        start, stop, step, unroll = self.range_bounds(node.iter)
        if frame.is_kernel and name not in self.ctx.used_loop_names:
            var = n.Var(name, start.ty)
        else:
            var = self.new_var(name, start.ty)
        self.ctx.used_loop_names.add(name)
        self.ctx.declared.add(id(var))
        frame.scope[name] = var
        frame.loop_vars.add(name)
        frame.assigned.add(name)
        try:
            body = self.block(node.body, loop=True)
        finally:
            frame.loop_vars.discard(name)
            frame.scope[name] = Dead(name)
        self.emit(n.For(var=var, start=start, stop=stop, step=step, body=body,
                        unroll=unroll, loc=self.ctx.loc))

    def s_Break(self, node: ast.Break) -> None:
        if self.ctx.frame.loop_depth == 0:
            self.error("'break' outside a loop", node)
        self.flag_break()
        self.emit(n.Break(loc=self.ctx.loc))

    def s_Continue(self, node: ast.Continue) -> None:
        if self.ctx.frame.loop_depth == 0:
            self.error("'continue' outside a loop", node)
        self.emit(n.Continue(loc=self.ctx.loc))

    def s_Return(self, node: ast.Return) -> None:
        frame = self.ctx.frame
        if frame.is_kernel:
            if node.value is not None:
                self.error("a kernel cannot return a value: store the result in an output "
                           "tensor (a bare return ends the unit)", node.value)
            self.emit(n.Terminate(loc=self.ctx.loc))
            return
        if frame.loop_depth > 0:
            self.error("return inside a loop is not supported in a @cube device function: "
                       "use a variable and break", node)
        if node.value is not None:
            self.return_value(node.value)
        if frame.ret_flag is not None:
            loc = self.ctx.loc
            self.emit(n.Assign(var=frame.ret_flag, value=n.Const(ty=bool_, value=True, loc=loc),
                               loc=loc))

    # -- the kernel -------------------------------------------------------------------
    def param_type(self, elem, loc: n.Loc, what: str) -> DType:
        if isinstance(elem, LineOf):
            elem = elem.elem
        if isinstance(elem, Generic):
            return self.generic_type(elem, loc)
        return elem

    def kernel(self) -> n.Kernel:
        parsed, frame = self.ctx.frame.parsed, self.ctx.frame
        params = []
        members: dict[str, object] = {}  # struct field path (cfg.scale) -> its value
        for name in (*(p.ir_name for p in parsed.params), *parsed.arg_names,
                     *parsed.assign_counts, *parsed.for_targets):
            self.ctx.names.reserve(name)  # fresh names never shadow the user's
        for p in parsed.params:
            if p.kind == "comptime":
                if not self.ctx.spec.has_comptime(p.name) and p.symbol is not None:
                    bind = how_to_bind(p.name + "=...")
                    if bind.endswith("source()/ir()"):  # a dotted name is no keyword
                        bind = f'**{{"{p.name}": ...}} to source()/ir()'
                    compile_error(p.loc, f"the Comptime field {p.name!r} is not bound: "
                                         f"launch with the struct, or pass {bind}")
                if not self.ctx.spec.has_comptime(p.name):
                    compile_error(p.loc, f"the comptime parameter {p.name!r} is not bound: "
                                         f"pass {how_to_bind(p.name + '=...', True)}")
                value = Py(self.ctx.spec.comptime_value(p.name))
                if p.symbol is not None:  # a Comptime field of a struct parameter
                    members[p.name] = value
                    continue
                frame.scope[p.name] = value
                frame.comptime_names.add(p.name)
                continue
            dtype = self.param_type(p.elem, p.loc, f"parameter {p.name!r}")
            line = 1
            if isinstance(p.elem, LineOf):
                if p.kind == "scalar":
                    compile_error(p.loc, f"parameter {p.name!r}: a scalar parameter cannot "
                                         f"be a Line (lines come from Tensor[Line[T]] or "
                                         f"Array[Line[T]] parameters)")
                line = self.ctx.spec.line_size(p.name)
            params.append(n.Param(p.ir_name, p.kind, dtype, line,
                                  aligned=line == 1 or self.ctx.spec.aligned(p.name)))
            if p.kind == "scalar":
                value = n.Var(p.ir_name, dtype)
                self.ctx.declared.add(id(value))
            else:
                value = Buf(n.BufferRef(p.ir_name, dtype, "global"), p.kind, line=line)
            if p.symbol is not None:  # a field of a struct parameter
                members[p.name] = value
                continue
            frame.scope[p.name] = value
            frame.assigned.add(p.name)
        for name, cls in parsed.structs.items():
            frame.scope[name] = _record(cls, name, members)
            frame.assigned.add(name)
        self.body(parsed.tree.body)
        if self.ctx.spec.shared_mem is not None and self.ctx.dynamic_shared is None:
            compile_error(parsed.loc, f"shared_mem={self.ctx.spec.shared_mem} sizes a "
                                      f"DynamicSharedMemory, but {parsed.name} declares none")
        params = [dataclasses.replace(p, rank=self.ctx.index_ranks[p.name][0])
                  if p.name in self.ctx.index_ranks else p for p in params]
        body = n.Block(tuple(self.ctx.blocks[0]))
        self.ctx.unifier.run_checks()
        body, saw_fp8 = finalize_kernel(body)
        kernel = n.Kernel(parsed.name, tuple(params), tuple(self.ctx.shared), body,
                          self.ctx.spec.cube_dim, parsed.loc,
                          local_arrays=tuple(self.ctx.local_arrays),
                          matrices=tuple(self.ctx.matrices), checked=self.ctx.checked)
        if saw_fp8:  # (8-bit floats are storage types: most kernels have none)
            from .fp8_uses import check_fp8_uses
            check_fp8_uses(kernel)
        return kernel


def _record(cls: type, path: str, members: dict) -> Rec:
    """The struct value of parameter `path` from its fields' parameters."""
    from ..records import is_struct, struct_fields
    return Rec(cls, path, tuple(
        (name, _record(ann, f"{path}.{name}", members) if is_struct(ann)
         else members[f"{path}.{name}"]) for name, ann in struct_fields(cls)))


def build_kernel(parsed: ParsedFunction, spec: Specialization,
                 checked: bool = True) -> n.Kernel:
    """Builds the typed IR of a kernel for one specialisation (raises CompileError).
    `checked` (a bounds-checked launch) adds the per-dimension and per-view index checks
    (frontend/indexing.py); the buffer-length checks are the code generators'."""
    return Builder(parsed, spec, checked).kernel()
