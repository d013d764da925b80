"""The WGSL code generator: `emit_wgsl(kernel, abi, checked)` -> one compute shader.

Layout of the shader (the wgpu runtime relies on it):
- buffers at `@group(0) @binding(i)` in `abi.buffers` order, `read` unless written or
  used atomically; bool elements travel as u32, atomics as `atomic<i32|u32>`, f32
  atomics as `atomic<u32>` holding the bits;
- the info struct `cube_info_t` (fields in ABI order) at `@binding(abi.info_binding)`;
- shared memory as module-scope `var<workgroup>` arrays;
- the entry point is always `main`, with `@workgroup_size` = the kernel's cube dim.

The runtime may fold a large cube count into a 2-D/3-D dispatch: `main` rebuilds the
logical cube index from `workgroup_id`/`num_workgroups`, returns when it is beyond the
logical count (uniform for the whole workgroup, so barriers stay valid) and derives the
logical CUBE_POS_X/Y/Z from it. Only the positions a kernel uses are computed. A 1-D
grid (num_workgroups y and z of 1) is never folded and is the logical count itself, so
only a 2-D/3-D grid reads the count from the info struct.

A buffer or shared array whose lines are read or written whole is an array of vectors
(`array<vec4<f32>>`), each line one access; 8 f16 lines are one `vec4<u32>` when no
element store could split a word between units (wgsl_lines.py).

Statements keep the user's names (mangled, see names.py) and are preceded by a
`// <line>: <python source>` comment. Expressions are in wgsl_expr.py, buffer accesses
in wgsl_memory.py and wgsl_lines.py, helper functions in wgsl_prelude.py.
"""
from __future__ import annotations

from ..abi import KernelABI
from ..errors import compile_error
from ..ir import nodes as n
from ..ir.passes.needs import has_line_accesses
from ..ir.visit import child_exprs, walk_all_exprs, walk_stmts
from .compiled import Compiled, kernel_features, make_compiled
from .names import Namer, comment_text, field_name, numbered
from .reserved import WGSL_HELPER_LOCALS
from .skeleton import render
from .wgsl_barriers import storage_barriers
from .walker import INDENT, BracedWalker
from .wgsl_expr import ExprEmitter, literal, wgsl_type
from .wgsl_memory import (HELPER_KINDS, BufferView, atomic_helper, load_helper, read_slot,
                          storage_kind, store_helper, write_slot)
from .wgsl_prelude import PreludeBuilder

TARGET = "wgsl"
ENTRY_POINT = "main"


_ENTRY_PARAMS = {
    "cube_local": "@builtin(local_invocation_id) cube_local: vec3<u32>",
    "cube_unit": "@builtin(local_invocation_index) cube_unit: u32",
    "cube_group": "@builtin(workgroup_id) cube_group: vec3<u32>",
    "cube_groups": "@builtin(num_workgroups) cube_groups: vec3<u32>",
    "cube_plane_dim": "@builtin(subgroup_size) cube_plane_dim: u32",
    "cube_plane_lane": "@builtin(subgroup_invocation_id) cube_plane_lane: u32",
}
_ATOMIC_TYPES = ("i32", "u32", "f32")


def _vector_widths(kernel: n.Kernel) -> dict[tuple[str, str], int]:
    """wgsl_lines.vector_widths, for a kernel with whole-line accesses; {} (every buffer
    an array of scalars) for the others, which thus leave wgsl_lines and the line-access
    pass it uses unimported."""
    if not has_line_accesses(kernel):
        return {}
    from .wgsl_lines import vector_widths
    return vector_widths(kernel)


def _element_slot(em: "_WgslEmitter", view: BufferView, index: n.Expr) -> str | None:
    from .wgsl_lines import element_slot  # (only vector views, from wgsl_lines, get here)
    return element_slot(em, view, index)


def emit_wgsl(kernel: n.Kernel, abi: KernelABI, checked: bool) -> str:
    """WGSL source for a specialised, legalised kernel with launch ABI `abi`."""
    return generate_wgsl(kernel, abi, checked).source


def generate_wgsl(kernel: n.Kernel, abi: KernelABI, checked: bool) -> Compiled:
    """The WGSL of a specialised kernel (see emit_wgsl) with the device features it needs
    and a `render(promote)` that declares the bindings in `promote` read_write (for
    launches binding one buffer to a read-only and a written parameter)."""
    return _WgslEmitter(kernel, abi, checked).compiled()


emit_wgsl.record = generate_wgsl  # what codegen.generate calls for this target


class _WgslEmitter(BracedWalker):
    def __init__(self, kernel: n.Kernel, abi: KernelABI, checked: bool):
        super().__init__()
        self.kernel = kernel
        self.abi = abi
        self.checked = checked
        self.names = Namer("wgsl")
        self.prelude = PreludeBuilder()
        self.positions: set[str] = set()
        self.loop_count = 0
        self.buffers = self._buffer_views()
        self.assign_counts = self._count_assignments()
        self.declared: set[str] = set()
        # the barriers needing storageBarrier() in every launch, and those needing it
        # only when a read-only parameter shares a written buffer (the alias variant),
        # whose line numbers in self.lines are kept
        self.storage_barriers, self.alias_only = storage_barriers(kernel)
        self.alias_barrier_lines: list[int] = []
        self.expr = ExprEmitter(self.prelude, self.var_name, self._position, self._meta,
                                self._read)

    # -- setup ------------------------------------------------------------------------
    def _buffer_views(self) -> dict[tuple[str, str], BufferView]:
        # Every buffer is named before any accessor helper, so a helper never takes a
        # buffer's name (helpers are numbered instead). Buffers live at module scope:
        # they avoid the helpers' locals, which would hide them inside the helpers.
        names = {("global", b.name): self.names.get(("buf", "global", b.name), b.name,
                                                    WGSL_HELPER_LOCALS)
                 for b in self.abi.buffers}
        names.update({("shared", s.buffer.name): self.names.get(
            ("buf", "shared", s.buffer.name), s.buffer.name, WGSL_HELPER_LOCALS)
            for s in self.kernel.shared})
        names.update({("local", d.buffer.name): self.names.get(
            ("buf", "local", d.buffer.name), d.buffer.name, WGSL_HELPER_LOCALS)
            for d in self.kernel.local_arrays})
        views = {}
        widths = _vector_widths(self.kernel)
        for b in self.abi.buffers:
            elem = wgsl_type(b.dtype, self.kernel.loc)
            name = names[("global", b.name)]
            bound_field = self.abi.field("buffer_len", b.name)
            bound = (f"info.{field_name(self.abi, TARGET, 'buffer_len', b.name)}"
                     if bound_field else "0u")
            views[("global", b.name)] = BufferView(name, elem, storage_kind(b.dtype, b.atomic),
                                                   bound, self._helper_stem(name),
                                                   widths.get(("global", b.name), 1))
        shared_atomic = {s.buffer.name for s in walk_stmts(self.kernel.body)
                         if isinstance(s, n.AtomicOp) and s.buffer.space == "shared"}
        for s in self.kernel.shared:
            elem = wgsl_type(s.buffer.elem, s.loc)
            name = names[("shared", s.buffer.name)]
            atomic = s.buffer.name in shared_atomic
            kind = storage_kind(s.buffer.elem, atomic)
            if kind == "bool":
                kind = "plain"  # workgroup memory may hold bool
            width = widths.get(("shared", s.buffer.name), 1)
            views[("shared", s.buffer.name)] = BufferView(name, elem, kind, f"{s.size}u",
                                                          self._helper_stem(name), width)
        for d in self.kernel.local_arrays:
            # var<private>: one array per invocation, at module scope so that the
            # checked accessor helpers can reach it (a function's var could not be)
            name = names[("local", d.buffer.name)]
            views[("local", d.buffer.name)] = BufferView(
                name, wgsl_type(d.buffer.elem, d.loc), "plain", f"{d.size}u",
                self._helper_stem(name))
        return views

    def _helper_stem(self, buffer_name: str) -> str:
        """The suffix of a buffer's accessor helpers (`cube_load_<stem>`, ...): the
        buffer's name, numbered if one of those helper names is already given out. The
        helper names are claimed, so no user name declared later can take them."""
        stem, i = buffer_name, 1
        while any(self.names.is_taken(f"cube_{kind}_{stem}") for kind in HELPER_KINDS):
            stem, i = numbered(buffer_name, i), i + 1
        for kind in HELPER_KINDS:
            self.names.claim(f"cube_{kind}_{stem}")
        return stem

    def _count_assignments(self) -> dict[str, int]:
        """How often each variable is written; a variable written once is a `let`."""
        counts: dict[str, int] = {}
        for s in walk_stmts(self.kernel.body):
            if isinstance(s, n.Assign):
                counts[s.var.name] = counts.get(s.var.name, 0) + (1 if s.declare else 2)
            elif isinstance(s, (n.Declare, n.For)):
                counts[s.var.name] = counts.get(s.var.name, 0) + 2
            elif isinstance(s, n.AtomicOp) and s.result is not None:
                counts[s.result.name] = counts.get(s.result.name, 0) + 2
        return counts

    def view(self, buf: n.BufferRef) -> BufferView:
        """How the shader stores `buf`."""
        view = self.buffers.get((buf.space, buf.name))
        if view is None:
            raise AssertionError(f"buffer {buf.name!r} is missing from the launch ABI")
        return view


    def fresh(self, stem: str) -> str:
        """A new generator temporary (cube_ names never collide with user names)."""
        return self.temps.counter(f"cube_{stem}")

    # -- callbacks for expressions ------------------------------------------------------
    def var_name(self, var: n.Var) -> str:
        """The WGSL name of a variable."""
        return self.names.get(("var", var.name), var.name)


    def _position(self, name: str, loc: n.Loc) -> str:
        if name not in _POSITIONS:
            compile_error(loc, f"the position builtin {name!r} is not available in WGSL")
        self.positions.add(name)
        return _POSITIONS[name][0].format(dx=self.kernel.cube_dim[0],
                                          dy=self.kernel.cube_dim[1],
                                          dz=self.kernel.cube_dim[2],
                                          d=self.kernel.units_per_cube)

    def _meta(self, e: n.Meta) -> str:
        f = self.abi.field(e.kind, e.buffer.name)
        if f is None:
            raise AssertionError(f"info field {e.kind} of {e.buffer.name!r} is missing")
        access = f"info.{field_name(self.abi, TARGET, e.kind, e.buffer.name)}"
        if e.kind in ("shape", "stride"):
            if e.dim is None:
                compile_error(e.loc, f"{e.kind}() needs a dimension")
            if isinstance(e.dim, n.Const) and not 0 <= int(e.dim.value) < f.count:
                compile_error(e.loc, f"{e.kind}({e.dim.value}): tensors have at most "
                                     f"{f.count} dimensions")
            if not self.checked or isinstance(e.dim, n.Const):
                return f"{access}[{self.expr(e.dim, True)}]"
            # Checked: a dimension past the array reads 0 (entries past the rank are 0).
            # select() evaluates both values, so the read itself stays in the array: the
            # module has no bounds checks of naga's (runtime/wgpu_modules.py).
            dim = self.expr(e.dim, True)
            return f"select(0u, {access}[min({dim}, {f.count - 1}u)], {dim} < {f.count}u)"
        return access

    def index(self, idx: n.Expr) -> str:
        """An index as u32 (negative signed indices become huge: out of range)."""
        if isinstance(idx, n.Const) and idx.ty.is_int and 0 <= int(idx.value) < 2**32:
            return f"{int(idx.value)}u"
        if idx.ty.name == "u32":
            return self.expr(idx, True)
        if idx.ty.is_int:
            return f"u32({self.expr(idx, True)})"
        compile_error(idx.loc, f"an index must be an integer, not {idx.ty.name}")

    def _read(self, e: n.Index) -> str:
        view = self.view(e.buffer)
        if self.checked:
            return f"{load_helper(self.prelude, view)}({self.index(e.index)})"
        if view.width > 1:
            slot = _element_slot(self, view, e.index)
            if slot is not None:
                return slot
        return read_slot(view, self.expr(e.index, True))

    # -- statements (walking, comments, if/while/break/continue/terminate: walker.py) --
    def declare(self, var: n.Var, value: str | None, loc: n.Loc) -> None:
        t = wgsl_type(var.ty, loc)
        name = self.var_name(var)
        self.declared.add(var.name)
        if value is None:
            self.line(f"var {name}: {t};")
        elif self.assign_counts.get(var.name, 0) <= 1:
            self.line(f"let {name}: {t} = {value};")
        else:
            self.line(f"var {name}: {t} = {value};")

    def before(self, s: n.Stmt) -> None:
        super().before(s)
        if s.loc.lineno > 0:
            self.expr.loc = s.loc

    def condition(self, e: n.Expr) -> str:
        return self.expr(e, True)

    def unsupported(self, s: n.Stmt) -> None:
        compile_error(s.loc, f"the wgsl target cannot emit {type(s).__name__} statements")

    def stmt_declare(self, s: n.Declare) -> None:
        self.declare(s.var, None, s.loc)

    def stmt_assign(self, s: n.Assign) -> None:
        value = self.expr(s.value, True)
        if s.declare or s.var.name not in self.declared:
            self.declare(s.var, value, s.loc)
        else:
            self.line(f"{self.var_name(s.var)} = {value};")

    def stmt_store(self, s: n.Store) -> None:
        view = self.view(s.buffer)
        value = self.expr(s.value, True)
        if self.checked:
            self.line(f"{store_helper(self.prelude, view)}({self.index(s.index)}, {value});")
        elif (view.width > 1 and not view.f16_words
              and (slot := _element_slot(self, view, s.index)) is not None):
            self.line(f"{slot} = {value};")
        else:
            self.line(write_slot(view, self.expr(s.index, True), value))

    def stmt_loadline(self, s: n.LoadLine) -> None:
        from .wgsl_lines import load_line
        load_line(self, s)

    def stmt_storeline(self, s: n.StoreLine) -> None:
        from .wgsl_lines import store_line
        store_line(self, s)

    def stmt_atomicop(self, s: n.AtomicOp) -> None:
        view = self.view(s.buffer)
        elem = s.buffer.elem.name
        if elem not in _ATOMIC_TYPES or (elem == "f32" and s.op in ("and", "or", "xor")):
            compile_error(s.loc, f"atomic {s.op} is not available on {elem} in WGSL "
                                 f"(atomics take i32 or u32; f32 supports add, sub, min, "
                                 f"max, exchange and compare_exchange)")
        fn = atomic_helper(self.prelude, view, s.op, self.checked)
        args = [self.index(s.index)]
        if s.op == "compare_exchange":
            if s.compare is None:
                compile_error(s.loc, "atomic_compare_exchange needs an expected value")
            args.append(self.expr(s.compare, True))
        if s.value is not None:  # an atomic load has none
            args.append(self.expr(s.value, True))
        call = f"{fn}({', '.join(args)})"
        if s.result is None:
            self.line(f"{call};")
        elif s.result.name in self.declared:
            self.line(f"{self.var_name(s.result)} = {call};")
        else:
            self.declare(s.result, call, s.loc)

    def _stable(self, e: n.Expr) -> bool:
        """Whether `e` keeps its value while a loop runs (no memory, no reassigned var)."""
        if isinstance(e, n.Index):
            return False
        if isinstance(e, n.Load) and self.assign_counts.get(e.var.name, 0) > 1:
            return False
        return all(self._stable(c) for c in child_exprs(e))

    def _hoist(self, e: n.Expr, what: str) -> str:
        """A loop bound evaluated once, before the loop (as Python's range does)."""
        if self._stable(e):
            return self.expr(e)
        name = f"cube_{what}{self.loop_count}"
        self.line(f"let {name}: {wgsl_type(e.ty, e.loc)} = {self.expr(e, True)};")
        return name

    def stmt_for(self, s: n.For) -> None:
        t = wgsl_type(s.var.ty, s.loc)
        self.loop_count = self.temps.number()
        name = self.var_name(s.var)
        self.declared.add(s.var.name)
        start = self.expr(s.start, True)
        stop = self._hoist(s.stop, "end")
        if isinstance(s.step, n.Const):
            step_value = s.step.value
            if step_value == 0:
                compile_error(s.loc, "range() step must not be zero")
            cond = f"{name} < {stop}" if step_value > 0 else f"{name} > {stop}"
            if step_value < 0:
                step_text = literal(-step_value, s.step.ty, s.loc)
                update = f"{name} -= {step_text}"
            else:
                update = f"{name} += {literal(step_value, s.step.ty, s.loc)}"
        else:
            step = self._hoist(s.step, "step")
            zero = literal(0, s.step.ty, s.loc)
            if s.step.ty.is_signed:
                cond = (f"({step} > {zero} && {name} < {stop}) || "
                        f"({step} < {zero} && {name} > {stop})")
            else:
                cond = f"{step} > {zero} && {name} < {stop}"
            update = f"{name} += {step}"
        self.line(f"for (var {name}: {t} = {start}; {cond}; {update}) {{")
        self.nested(s.body)
        self.line("}")

    def stmt_barrier(self, s: n.Barrier) -> None:
        if s.op == "sync_plane":
            self.line("subgroupBarrier();")
            return
        # fence_cube: WGSL has no standalone fence; both barriers order this unit's
        # storage and workgroup memory for its workgroup (uniform control flow only)
        if s.op == "fence_cube" or id(s) in self.storage_barriers:
            self.line("storageBarrier();")
        elif id(s) in self.alias_only:
            self.alias_barrier_lines.append(len(self.lines))
        self.line("workgroupBarrier();")

    # -- entry preamble and module ------------------------------------------------------
    def _preamble(self) -> tuple[list[str], list[str]]:
        """(entry parameters, lines computing the logical positions and scalar locals)."""
        count = self.abi.field("cube_count")
        lines: list[str] = []
        params = ["cube_local", "cube_group", "cube_groups"]
        needed = set()
        for name in self.positions:
            needed |= _closure(name)
        if count is not None:
            needed |= {"cube_linear", "cube_count"}  # the fold guard always runs
        if needed & {"cube_unit"}:
            params.insert(1, "cube_unit")
        if "cube_plane_dim" in needed:
            params.append("cube_plane_dim")
        if "cube_plane_lane" in needed:
            params.append("cube_plane_lane")
        if needed & {"cube_linear", "cube_count"}:
            lines.append("// the logical cube (a large cube count may arrive folded into "
                         "more dimensions)")
            lines.append("let cube_linear: u32 = cube_group.x + cube_groups.x * "
                         "(cube_group.y + cube_groups.y * cube_group.z);")
            if count is not None:
                # A 1-D grid is the logical count itself: no read of the info struct
                # before the kernel's first access (on the H200, 0.2-0.35 us of a
                # 15 us row softmax). A fold always spans y or z.
                c = f"info.{field_name(self.abi, TARGET, 'cube_count')}"
                lines.append("var cube_count: vec3<u32> = cube_groups;")
                lines.append("if (cube_groups.y * cube_groups.z > 1u) {")
                lines.append(f"{INDENT}cube_count = vec3<u32>({c}[0], {c}[1], {c}[2]);")
                lines.append(f"{INDENT}if (cube_linear >= cube_count.x * cube_count.y * "
                             "cube_count.z) { return; }")
                lines.append("}")
            else:
                lines.append("let cube_count: vec3<u32> = cube_groups;")
        dims = self.kernel.cube_dim
        for name in _LET_ORDER:
            if name in needed:
                expr = _LETS[name].format(dx=dims[0], dy=dims[1], dz=dims[2])
                expr = expr.replace(" * 1u", "")  # a unit-sized axis: keep it readable
                lines.append(f"let {name}: u32 = {expr};")
        for p in self.kernel.params:
            if p.kind != "scalar":
                continue
            f = self.abi.field("scalar", p.name)
            if f is None:
                raise AssertionError(f"scalar parameter {p.name!r} is missing from the ABI")
            value = f"info.{field_name(self.abi, TARGET, 'scalar', p.name)}"
            if p.dtype.is_bool:
                value = f"{value} != 0u"
            var = n.Var(p.name, p.dtype)
            self.declare_into(lines, var, value)
        return [_ENTRY_PARAMS[p] for p in params], lines

    def declare_into(self, lines: list[str], var: n.Var, value: str) -> None:
        saved, self.lines, depth = self.lines, lines, self.depth
        self.depth = 0
        self.declare(var, value, self.kernel.loc)
        self.lines, self.depth = saved, depth

    def _uses_f16(self) -> bool:
        k = self.kernel
        types = {p.dtype for p in k.params} | {s.buffer.elem for s in k.shared}
        types |= {d.buffer.elem for d in k.local_arrays}
        types |= {e.ty for e in walk_all_exprs(k.body)}
        types |= {s.var.ty for s in walk_stmts(k.body) if hasattr(s, "var")}
        return any(t.name == "f16" for t in types)

    def compiled(self) -> Compiled:
        """Walks the kernel once; the record re-renders only the skeleton."""
        context = self.context()
        uses_subgroups = bool(self.positions & {"plane_dim", "unit_pos_plane"}) or any(
            isinstance(e, n.Plane) for e in walk_all_exprs(self.kernel.body))
        features = kernel_features(self.kernel) - {"subgroups", "f16"}
        features |= {"f16"} if context["enable_f16"] else set()
        features |= {"subgroups"} if uses_subgroups else set()
        if any(isinstance(s, n.Barrier) and s.op == "sync_plane"
               for s in walk_stmts(self.kernel.body)):
            features |= {"subgroup_barrier"}

        def render_promoted(promote: frozenset[int]) -> str:
            buffers = [dict(b, access="read_write") if b["binding"] in promote else b
                       for b in context["buffers"]]
            return render("wgsl.j2", **dict(context, buffers=buffers,
                                            body=self._body(alias=True)))
        return make_compiled(TARGET, self.kernel, self.abi, render("wgsl.j2", **context),
                             "main", frozenset(features), bool_bytes=4,
                             render=render_promoted)

    def context(self) -> dict:
        """Walks the kernel; the wgsl.j2 skeleton's context."""
        k = self.kernel
        for p in k.params:
            wgsl_type(p.dtype, k.loc)
        # Scalar parameters are declared by the entry: name them and mark them declared.
        for p in k.params:
            if p.kind == "scalar":
                self.var_name(n.Var(p.name, p.dtype))
                self.declared.add(p.name)
        self.walk(k.body)
        self.preamble = self._preamble()
        entry_params, _ = self.preamble
        buffers = [{"binding": i, "name": self.buffers[("global", b.name)].name,
                    "access": "read" if b.read_only else "read_write",
                    "store_type": self.buffers[("global", b.name)].store_type}
                   for i, b in enumerate(self.abi.buffers)]
        info_fields = [{"name": field_name(self.abi, TARGET, f.kind, f.param),
                        "type": _field_type(f)} for f in self.abi.fields]
        shared = [{"name": view.name, "size": s.size // view.width,
                   "store_type": view.store_type}
                  for s in k.shared for view in [self.buffers[("shared", s.buffer.name)]]]
        local_arrays = [{"name": self.buffers[("local", d.buffer.name)].name, "size": d.size,
                         "store_type": self.buffers[("local", d.buffer.name)].store_type}
                        for d in k.local_arrays]
        return dict(
            enable_f16=self._uses_f16(), kernel_name=comment_text(k.name),
            checked=self.checked,
            buffers=buffers, info_fields=info_fields, info_binding=self.abi.info_binding,
            shared=shared, local_arrays=local_arrays, prelude=self.prelude.text(),
            cube_dim=k.cube_dim,
            entry_params=entry_params, body=self._body(alias=False))

    def _body(self, alias: bool) -> str:
        """The entry's body; `alias`: with the storage barriers the alias variant needs."""
        lines = list(self.lines)
        if alias:
            for at in reversed(self.alias_barrier_lines):
                indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
                lines.insert(at, indent + "storageBarrier();")
        return "\n".join([INDENT + line for line in self.preamble[1]] + lines)


def _field_type(f) -> str:
    t = wgsl_type(f.dtype)
    return f"array<{t}, {f.count}>" if f.count > 1 else t


# Position builtin -> (WGSL expression, lets it needs). Lets are computed at entry.
_POSITIONS = {
    "unit_pos_x": ("cube_local.x", ()), "unit_pos_y": ("cube_local.y", ()),
    "unit_pos_z": ("cube_local.z", ()), "unit_pos": ("cube_unit", ("cube_unit",)),
    "cube_pos": ("cube_linear", ("cube_linear",)),
    "cube_pos_x": ("cube_pos_x", ("cube_pos_x",)),
    "cube_pos_y": ("cube_pos_y", ("cube_pos_y",)),
    "cube_pos_z": ("cube_pos_z", ("cube_pos_z",)),
    "cube_dim_x": ("{dx}u", ()), "cube_dim_y": ("{dy}u", ()), "cube_dim_z": ("{dz}u", ()),
    "cube_dim": ("{d}u", ()),
    "cube_count_x": ("cube_count.x", ("cube_count",)),
    "cube_count_y": ("cube_count.y", ("cube_count",)),
    "cube_count_z": ("cube_count.z", ("cube_count",)),
    "cube_count": ("cube_count_total", ("cube_count_total",)),
    "absolute_pos_x": ("absolute_pos_x", ("absolute_pos_x",)),
    "absolute_pos_y": ("absolute_pos_y", ("absolute_pos_y",)),
    "absolute_pos_z": ("absolute_pos_z", ("absolute_pos_z",)),
    "absolute_pos": ("absolute_pos", ("absolute_pos",)),
    "plane_dim": ("cube_plane_dim", ("cube_plane_dim",)),
    "unit_pos_plane": ("cube_plane_lane", ("cube_plane_lane",)),
}
# Entry lets, in dependency order, with what each depends on.
_LETS = {
    "cube_pos_x": "cube_linear % cube_count.x",
    "cube_pos_y": "(cube_linear / cube_count.x) % cube_count.y",
    "cube_pos_z": "cube_linear / (cube_count.x * cube_count.y)",
    "cube_count_total": "cube_count.x * cube_count.y * cube_count.z",
    "absolute_pos_x": "cube_pos_x * {dx}u + cube_local.x",
    "absolute_pos_y": "cube_pos_y * {dy}u + cube_local.y",
    "absolute_pos_z": "cube_pos_z * {dz}u + cube_local.z",
    "absolute_pos": ("absolute_pos_x + absolute_pos_y * (cube_count.x * {dx}u) + "
                     "absolute_pos_z * (cube_count.x * {dx}u * cube_count.y * {dy}u)"),
}
_LET_ORDER = tuple(_LETS)
_DEPS = {
    "cube_pos_x": {"cube_linear", "cube_count"}, "cube_pos_y": {"cube_linear", "cube_count"},
    "cube_pos_z": {"cube_linear", "cube_count"}, "cube_count_total": {"cube_count"},
    "absolute_pos_x": {"cube_pos_x"}, "absolute_pos_y": {"cube_pos_y"},
    "absolute_pos_z": {"cube_pos_z"},
    "absolute_pos": {"absolute_pos_x", "absolute_pos_y", "absolute_pos_z", "cube_count"},
}


def _closure(builtin: str) -> set[str]:
    """Every entry value a position builtin needs, transitively."""
    todo = list(_POSITIONS[builtin][1])
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_DEPS.get(name, ()))
    return seen
