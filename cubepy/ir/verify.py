"""The IR verifier: checks the invariants of docs/ARCHITECTURE.md on a kernel.

A failure is a compiler bug (the frontend or a pass built bad IR), so it raises
IRVerifyError, never the user-facing CompileError.
"""
from __future__ import annotations

from . import nodes as ir
from .dtype_facts import fits
from .ops import OPS, MathFn, PlaneOp
from .printer import bits_type, call_type, print_expr
from .types import DType, LineType, bool_, i32, u32


class IRVerifyError(Exception):
    """The IR breaks one of its invariants (a compiler bug)."""


def verify(kernel: ir.Kernel) -> None:
    """Raises IRVerifyError when `kernel` is not well-formed IR; returns None otherwise."""
    _Verifier(kernel).run()


_SHIFTS = ("shl", "shr")
_MATH = {op.value: op for op in MathFn}
_PLANE = {op.value: op for op in PlaneOp}


class _Verifier:
    def __init__(self, kernel: ir.Kernel):
        self.kernel = kernel
        self.buffers: dict[str, ir.BufferRef] = {}
        self.scopes: list[dict[str, ir.Var]] = [{}]
        self.declared: set[str] = set()
        self.loop_vars: set[str] = set()
        self.loop_depth = 0
        self.line_sizes = {p.name: p.line_size for p in kernel.params}

    def fail(self, node, msg: str):
        loc = getattr(node, "loc", ir.NO_LOC)
        raise IRVerifyError(f"{self.kernel.name} at {loc}: {msg}")

    # -- kernel and scopes -------------------------------------------------------------
    def run(self) -> None:
        k = self.kernel
        if len(k.cube_dim) != 3 or any(not isinstance(d, int) or d < 1 for d in k.cube_dim):
            self.fail(k, f"bad cube_dim {k.cube_dim}")
        for p in k.params:
            if p.name in self.buffers or p.name in self.declared:
                self.fail(k, f"parameter {p.name} declared twice")
            if p.kind == "scalar":
                self.declare(ir.Var(p.name, p.dtype), k)
            elif p.kind in ("tensor", "array"):
                self.buffers[p.name] = p.buffer
            else:
                self.fail(k, f"parameter {p.name} has unknown kind {p.kind!r}")
        for decls, space, what in ((k.shared, "shared", "shared memory"),
                                   (k.local_arrays, "local", "local array")):
            for d in decls:
                if d.buffer.space != space or d.size < 1:
                    self.fail(d, f"bad {what} declaration {d.buffer.name}[{d.size}]")
                if d.buffer.name in self.buffers:
                    self.fail(d, f"buffer {d.buffer.name} declared twice")
                self.buffers[d.buffer.name] = d.buffer
        self.matrices: dict[str, ir.MatrixDecl] = {}
        for d in k.matrices:
            self.matrix_decl(d)
        self.block(k.body)

    def declare(self, var: ir.Var, node) -> None:
        if var.name in self.declared:
            self.fail(node, f"variable {var.name} declared twice")
        if not isinstance(var.ty, (DType, LineType)):
            self.fail(node, f"variable {var.name} has no concrete type")
        self.declared.add(var.name)
        self.scopes[-1][var.name] = var

    def lookup(self, var: ir.Var, node) -> None:
        for scope in reversed(self.scopes):
            if var.name in scope:
                if scope[var.name] != var:
                    self.fail(node, f"variable {var.name} used as {var.ty}, declared "
                                    f"{scope[var.name].ty}")
                return
        where = "out of scope" if var.name in self.declared else "before its declaration"
        self.fail(node, f"variable {var.name} used {where}")

    def block(self, block: ir.Block, bind: ir.Var | None = None) -> None:
        self.scopes.append({})
        if bind is not None:
            self.scopes[-1][bind.name] = bind
        for s in block.stmts:
            self.stmt(s)
        self.scopes.pop()

    def buffer(self, buf: ir.BufferRef, node) -> None:
        known = self.buffers.get(buf.name)
        if known is None:
            self.fail(node, f"unknown buffer {buf.name}")
        if known != buf:
            self.fail(node, f"buffer {buf.name} used as {buf.elem}/{buf.space}, declared "
                            f"{known.elem}/{known.space}")

    def value_type(self, buf: ir.BufferRef):
        """The type of `buf[i]`: a LineType for a parameter with a line size > 1."""
        size = self.line_sizes.get(buf.name, 1) if buf.space == "global" else 1
        return LineType(buf.elem, size) if size > 1 else buf.elem

    def index(self, e: ir.Expr, node) -> None:
        self.expr(e)
        if not e.ty.is_int or isinstance(e.ty, LineType):
            self.fail(node, f"index {print_expr(e)} has type {e.ty}, not an integer")

    def same(self, e: ir.Expr, ty: DType, node, what: str) -> None:
        if e.ty is not ty:
            self.fail(node, f"{what} {print_expr(e)} has type {e.ty}, expected {ty}")

    # -- statements --------------------------------------------------------------------
    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Declare):
            self.declare(s.var, s)
        elif isinstance(s, ir.Assign):
            self.plane_ok = s.value  # a plane operation may only be a whole value
            self.expr(s.value)
            if s.declare:
                self.declare(s.var, s)
            else:
                self.written(s.var, s)
            self.same(s.value, s.var.ty, s, f"value assigned to {s.var.name}")
        elif isinstance(s, (ir.Store, ir.AtomicOp)):
            self.buffer(s.buffer, s)
            self.index(s.index, s)
            if s.value is not None:  # an atomic load has none (checked in atomic())
                self.expr(s.value)
                self.same(s.value, self.value_type(s.buffer), s,
                          f"value stored to {s.buffer.name}")
            if isinstance(s, ir.AtomicOp):  # on a line buffer: elementwise (lines.py)
                self.atomic(s)
        elif isinstance(s, ir.MATRIX_STMTS):
            self.matrix_stmt(s)
        elif isinstance(s, (ir.LoadLine, ir.StoreLine)):
            self.line_access(s)
        elif isinstance(s, ir.If):
            self.cond(s.cond, s)
            self.block(s.then)
            self.block(s.orelse)
        elif isinstance(s, ir.While):
            self.cond(s.cond, s)
            self.loop_body(s.body)
        elif isinstance(s, ir.For):
            for e in (s.start, s.stop, s.step):
                self.expr(e)
                self.same(e, s.var.ty, s, f"bound of the loop over {s.var.name}")
            if not s.var.ty.is_int:
                self.fail(s, f"loop variable {s.var.name} is {s.var.ty}, not an integer")
            if isinstance(s.step, ir.Const) and s.step.value == 0:
                self.fail(s, "loop step is zero")
            if s.var.name in self.declared:
                self.fail(s, f"variable {s.var.name} declared twice")
            self.declared.add(s.var.name)
            self.loop_vars.add(s.var.name)
            self.loop_body(s.body, s.var)
            self.loop_vars.discard(s.var.name)
        elif isinstance(s, (ir.Break, ir.Continue)):
            if self.loop_depth == 0:
                self.fail(s, f"{type(s).__name__.lower()} outside a loop")
        elif isinstance(s, ir.Comment):
            if not isinstance(s.text, str):
                self.fail(s, "comment text is not a string")
        elif isinstance(s, ir.Barrier):
            if s.op not in ir.SYNC_OPS:
                self.fail(s, f"unknown barrier {s.op!r}")
        elif isinstance(s, ir.AsyncCopy):
            self.async_copy(s)
        elif isinstance(s, ir.AsyncWait):
            if not isinstance(s.pending, int) or s.pending < 0:
                self.fail(s, f"async wait for {s.pending!r} pending groups")
        elif not isinstance(s, (ir.Terminate, ir.AsyncCommit)):
            self.fail(s, f"unknown statement {type(s).__name__}")

    def line_access(self, s: ir.LoadLine | ir.StoreLine) -> None:
        """A whole-line access: a parameter or shared buffer of scalars (after
        scalarize_lines), a line of 2, 4 or 8 elements of the buffer's type."""
        self.buffer(s.buffer, s)
        self.index(s.line, s)
        if s.buffer.space == "local" or self.line_sizes.get(s.buffer.name, 1) != 1 \
                and s.buffer.space == "global":
            self.fail(s, f"a whole-line access of {s.buffer.name} needs a parameter or "
                         f"shared buffer of scalars")
        items = s.parts if isinstance(s, ir.LoadLine) else s.values
        if len(items) not in (2, 4, 8):
            self.fail(s, f"a whole-line access of {len(items)} elements (2, 4 or 8)")
        for item in items:
            if isinstance(item, ir.Var):
                self.written(item, s)
                ty, what = item.ty, f"variable {item.name}"
            else:
                self.expr(item)
                ty, what = item.ty, f"value {print_expr(item)}"
            if ty is not s.buffer.elem:
                self.fail(s, f"{what} has type {ty}, expected {s.buffer.elem}")

    def async_copy(self, s: ir.AsyncCopy) -> None:
        """A copy of one item of 4, 8 or 16 bytes from a global buffer (of that line size
        before scalarize_lines, of scalars after) into shared memory of the same type."""
        self.buffer(s.dst, s)
        self.buffer(s.src, s)
        self.index(s.dst_line, s)
        self.index(s.src_line, s)
        if s.dst.space != "shared" or s.src.space != "global":
            self.fail(s, f"an async copy from {s.src.name} ({s.src.space}) to {s.dst.name} "
                         f"({s.dst.space}): it copies global to shared memory")
        if s.dst.elem is not s.src.elem:
            self.fail(s, f"an async copy from {s.src.elem} to {s.dst.elem}")
        if s.size * s.dst.elem.itemsize not in (4, 8, 16):
            self.fail(s, f"an async copy of {s.size} {s.dst.elem} (4, 8 or 16 bytes)")
        if self.line_sizes.get(s.src.name, 1) not in (1, s.size):
            self.fail(s, f"an async copy of {s.size} elements from {s.src.name}, of lines "
                         f"of {self.line_sizes[s.src.name]}")

    def loop_body(self, body: ir.Block, var: ir.Var | None = None) -> None:
        self.loop_depth += 1
        self.block(body, var)
        self.loop_depth -= 1

    def written(self, var: ir.Var, node) -> None:
        self.lookup(var, node)
        if var.name in self.loop_vars:
            self.fail(node, f"loop variable {var.name} is assigned in its loop")

    def cond(self, e: ir.Expr, node) -> None:
        self.expr(e)
        self.same(e, bool_, node, "condition")

    # -- matrix units --------------------------------------------------------------------
    def matrix_decl(self, d: ir.MatrixDecl) -> None:
        if d.name in self.matrices:
            self.fail(d, f"matrix {d.name} declared twice")
        if d.ident not in ir.MATRIX_IDENTS or d.elem not in ir.MATRIX_ELEMS:
            self.fail(d, f"matrix {d.name}: unknown kind {d.ident!r} or element {d.elem!r}")
        if min(d.m, d.n, d.k) < 1 or (d.count is not None and d.count < 1):
            self.fail(d, f"matrix {d.name}: bad shape {d.shape_text} or count {d.count}")
        if d.warpgroup and (d.m, d.k, d.elem, d.count) != (
                ir.WARPGROUP_M, ir.WARPGROUP_K, "f32", None) or \
                d.warpgroup and d.n not in ir.WARPGROUP_N:
            self.fail(d, f"matrix {d.name}: a warpgroup accumulator of {d.shape_text} "
                         f"{d.elem}")
        if (d.layout is None) != (d.ident in ("accumulator", "warpgroup")) or \
                (d.layout is not None and d.layout not in ir.MATRIX_LAYOUTS):
            self.fail(d, f"matrix {d.name}: layout {d.layout!r} for {d.ident}")
        if d.elem == "tf32" and d.ident == "accumulator":
            self.fail(d, f"matrix {d.name}: a tf32 accumulator")
        self.matrices[d.name] = d

    def frag(self, f: ir.Frag, node, *idents: str) -> ir.MatrixDecl:
        if not isinstance(f, ir.Frag):
            self.fail(node, f"{f!r} is not a fragment")
        d = self.matrices.get(f.matrix.name)
        if d is None or d != f.matrix:
            self.fail(node, f"unknown matrix {f.matrix.name}")
        if (f.index is None) != (d.count is None):
            self.fail(node, f"matrix {d.name} {'needs' if f.index is None else 'takes no'} "
                            f"index")
        if f.index is not None:
            self.index(f.index, node)
        if f.ty is not d.storage:
            self.fail(node, f"fragment {d.name} typed {f.ty}, stores {d.storage}")
        if idents and d.ident not in idents:
            self.fail(node, f"matrix {d.name} is {d.ident}, expected {' or '.join(idents)}")
        return d

    def warpgroup_stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.WarpgroupSync):
            if s.op not in ir.WARPGROUP_SYNC_OPS or s.pending < 0 or \
                    (s.op != "wait" and s.pending):
                self.fail(s, f"bad warpgroup sync {s.op} {s.pending}")
            return
        self.frag(s.acc, s, "warpgroup")
        for buf, offset, rows in ((s.a, s.a_offset, s.a_rows), (s.b, s.b_offset, s.b_rows)):
            self.buffer(buf, s)
            if buf.space != "shared" \
                    or buf.elem.name not in ir.WARPGROUP_ELEMS + ir.WARPGROUP_FP8 \
                    or self.line_sizes.get(buf.name, 1) > 1:
                self.fail(s, f"wg_mma reads {buf.name}: it reads f16/bf16/fp8 shared memory")
            self.index(offset, s)
            if rows < 8 or rows % 8:
                self.fail(s, f"wg_mma: a tile of {rows} rows (a multiple of 8)")
        fp8 = s.a.elem.name in ir.WARPGROUP_FP8
        if (s.a.elem is not s.b.elem and not (fp8 and s.b.elem.name in ir.WARPGROUP_FP8)) \
                or s.b_layout not in ir.MATRIX_LAYOUTS \
                or (fp8 and s.b_layout != "col_major"):
            self.fail(s, "wg_mma: A and B of different types, or a bad layout")
        if s.swizzle not in ir.WARPGROUP_SWIZZLES:
            self.fail(s, f"wg_mma: swizzle {s.swizzle} (0 or 128)")

    def matrix_stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, (ir.WarpgroupMma, ir.WarpgroupSync)):
            self.warpgroup_stmt(s)
        elif isinstance(s, ir.MatrixFill):
            d = self.frag(s.frag, s)  # (a warpgroup accumulator too)
            self.expr(s.value)
            self.same(s.value, d.storage, s, "fill value")
        elif isinstance(s, ir.MatrixScaleBy):
            d = self.frag(s.frag, s, "warpgroup")
            self.buffer(s.buffer, s)
            self.index(s.offset, s)
            if s.axis not in ir.MATRIX_SCALE_AXES or s.buffer.space == "local" \
                    or s.buffer.elem is not d.storage:
                self.fail(s, f"scale_{s.axis} of {d.name} by buffer {s.buffer.name}")
        elif isinstance(s, ir.MatrixScale):
            d = self.frag(s.frag, s, "accumulator", "warpgroup")
            self.expr(s.value)
            self.same(s.value, d.storage, s, "scale factor")
        elif isinstance(s, (ir.MatrixLoad, ir.MatrixStore)):
            store = isinstance(s, ir.MatrixStore)
            acc = store or s.layout is not None
            d = self.frag(s.frag, s, *(("accumulator",) if acc else ("a", "b"))
                          + (("warpgroup",) if store else ()))
            self.buffer(s.buffer, s)
            # a warpgroup accumulator's store converts to the buffer's type, and its
            # units store their own elements: into a Line buffer too (offset and stride
            # in elements), where wmma's fragment stores need a plain one
            converts = d.warpgroup and s.buffer.elem.name in ("f32", "f16", "bf16") \
                and s.layout == "row_major"
            if s.buffer.space == "local" or (s.buffer.elem is not d.storage and not converts) \
                    or (self.line_sizes.get(s.buffer.name, 1) > 1 and not d.warpgroup):
                self.fail(s, f"matrix {d.name} with buffer {s.buffer.name}")
            self.index(s.offset, s)
            self.index(s.stride, s)
            if acc and s.layout not in ir.MATRIX_LAYOUTS:
                self.fail(s, f"bad layout {s.layout!r}")
        elif isinstance(s, ir.MatrixExecute):
            a = self.frag(s.a, s, "a")
            b = self.frag(s.b, s, "b")
            c = self.frag(s.c, s, "accumulator")
            d = self.frag(s.d, s, "accumulator")
            if len({(x.m, x.n, x.k) for x in (a, b, c, d)}) != 1 or a.elem != b.elem \
                    or c.elem != d.elem:
                self.fail(s, "cmma execute of fragments of different shapes or types")
        else:
            src = self.frag(s.src, s, "accumulator")
            dst = self.frag(s.dst, s, "accumulator")
            if (src.m, src.n, src.k) != (dst.m, dst.n, dst.k):
                self.fail(s, "cmma cast between shapes")

    def atomic(self, s: ir.AtomicOp) -> None:
        if s.op not in ir.ATOMIC_OPS:
            self.fail(s, f"unknown atomic operation {s.op!r}")
        if s.buffer.elem.is_bool:
            self.fail(s, f"atomic {s.op} on a bool buffer")
        if s.buffer.space == "local":
            self.fail(s, f"atomic {s.op} on the local array {s.buffer.name}")
        if (s.value is None) != (s.op == "load"):
            self.fail(s, f"atomic {s.op}: value {'missing' if s.value is None else 'not allowed'}")
        if s.op == "store" and s.result is not None:
            self.fail(s, "atomic store gives no value")
        if (s.compare is not None) != (s.op == "compare_exchange"):
            self.fail(s, f"atomic {s.op}: compare value "
                         f"{'missing' if s.compare is None else 'not allowed'}")
        value_type = self.value_type(s.buffer)
        if s.compare is not None:
            self.expr(s.compare)
            self.same(s.compare, value_type, s, "compare value")
        if s.result is not None:
            self.written(s.result, s)
            if s.result.ty != value_type:
                self.fail(s, f"atomic result {s.result.name} is {s.result.ty}, buffer "
                             f"holds {value_type}")

    # -- expressions -------------------------------------------------------------------
    def expr(self, e: ir.Expr) -> None:
        if not isinstance(e, ir.Expr):
            self.fail(None, f"{e!r} is not an expression")
        if not isinstance(e.ty, (DType, LineType)):
            self.fail(e, f"{type(e).__name__} has no concrete type ({e.ty!r})")
        method = getattr(self, "e_" + type(e).__name__.lower(), None)
        if method is None:
            self.fail(e, f"unknown expression {type(e).__name__}")
        method(e)

    def e_frag(self, e: ir.Frag) -> None:
        self.fail(e, f"the fragment {e.matrix.name} used as a value")

    def e_const(self, e: ir.Const) -> None:
        v, ty = e.value, e.ty
        if ty.is_bool:
            ok = isinstance(v, bool)
        elif ty.is_int:
            ok = isinstance(v, int) and not isinstance(v, bool) and fits(v, ty)
        else:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not ok:
            self.fail(e, f"constant {v!r} does not fit {ty}")

    def e_load(self, e: ir.Load) -> None:
        self.lookup(e.var, e)
        self.same(e, e.var.ty, e, f"read of {e.var.name}")

    def e_builtin(self, e: ir.Builtin) -> None:
        if e.name not in ir.BUILTINS:
            self.fail(e, f"unknown builtin {e.name!r}")
        self.same(e, u32, e, "builtin")

    def e_meta(self, e: ir.Meta) -> None:
        self.buffer(e.buffer, e)
        if e.kind not in ir.META_KINDS:
            self.fail(e, f"unknown metadata {e.kind!r}")
        self.same(e, u32, e, "metadata")
        if (e.dim is not None) != (e.kind in ("shape", "stride")):
            self.fail(e, f"{e.kind} {'needs' if e.dim is None else 'takes no'} dimension")
        if e.dim is not None:
            self.index(e.dim, e)
        if e.buffer.space != "global" and e.kind not in ("len", "buffer_len"):
            self.fail(e, f"{e.kind} of shared memory {e.buffer.name}")

    def e_index(self, e: ir.Index) -> None:
        self.buffer(e.buffer, e)
        self.index(e.index, e)
        self.same(e, self.value_type(e.buffer), e, f"read of {e.buffer.name}")

    def e_unary(self, e: ir.Unary) -> None:
        self.expr(e.operand)
        if e.op not in ir.UNARY_OPS:
            self.fail(e, f"unknown unary operator {e.op!r}")
        if e.op == "not":
            self.same(e.operand, bool_, e, "operand of not")
        elif e.op == "bitnot" and not (e.ty.is_int or e.ty.is_bool):
            self.fail(e, f"bitnot of {e.ty}")
        self.same(e.operand, e.ty, e, f"operand of {e.op}")

    def e_binary(self, e: ir.Binary) -> None:
        self.expr(e.lhs)
        self.expr(e.rhs)
        if e.op not in ir.BINARY_OPS:
            self.fail(e, f"unknown binary operator {e.op!r}")
        self.same(e.lhs, e.ty, e, f"left operand of {e.op}")
        if e.op in _SHIFTS:
            if not (e.ty.is_int and e.rhs.ty.is_int):
                self.fail(e, f"{e.op} needs integers, got {e.ty} and {e.rhs.ty}")
        else:
            self.same(e.rhs, e.ty, e, f"right operand of {e.op}")
        if e.op.startswith("bit") and e.ty.is_float:
            self.fail(e, f"{e.op} of {e.ty}")
        if e.ty.is_bool and e.op not in ("bitand", "bitor", "bitxor", "max", "min"):
            self.fail(e, f"{e.op} of bools")

    def e_compare(self, e: ir.Compare) -> None:
        self.expr(e.lhs)
        self.expr(e.rhs)
        if e.op not in ir.COMPARE_OPS:
            self.fail(e, f"unknown comparison {e.op!r}")
        self.same(e.rhs, e.lhs.ty, e, f"right operand of {e.op}")
        lhs = e.lhs.ty  # lines compare elementwise into a line of bools
        self.same(e, LineType(bool_, lhs.size) if isinstance(lhs, LineType) else bool_, e,
                  "comparison")

    def e_logical(self, e: ir.Logical) -> None:
        self.expr(e.lhs)
        self.expr(e.rhs)
        if e.op not in ir.LOGICAL_OPS:
            self.fail(e, f"unknown logical operator {e.op!r}")
        for side in (e.lhs, e.rhs, e):
            self.same(side, bool_, e, f"operand of {e.op}")

    def e_select(self, e: ir.Select) -> None:
        for side in (e.cond, e.if_true, e.if_false):
            self.expr(side)
        mask = e.cond.ty  # a line of bools chooses per element
        self.same(e.cond, LineType(bool_, e.ty.size) if isinstance(mask, LineType)
                  and isinstance(e.ty, LineType) else bool_, e, "select condition")
        self.same(e.if_true, e.ty, e, "select value")
        self.same(e.if_false, e.ty, e, "select value")

    def e_makeline(self, e: ir.MakeLine) -> None:
        for a in e.elems:
            self.expr(a)
        if not isinstance(e.ty, LineType) or e.ty.size != len(e.elems):
            self.fail(e, f"a line of {len(e.elems)} elements typed {e.ty}")
        for a in e.elems:
            self.same(a, e.ty.elem, e, "line element")

    def e_extract(self, e: ir.Extract) -> None:
        self.expr(e.value)
        self.index(e.index, e)
        line = e.value.ty
        if not isinstance(line, LineType):
            self.fail(e, f"extract from {line}, not a line")
        self.same(e, line.elem, e, "extracted element")

    def e_cast(self, e: ir.Cast) -> None:
        self.expr(e.operand)
        src = e.operand.ty
        if isinstance(src, LineType) and (not isinstance(e.ty, LineType)
                                          or src.size != e.ty.size):
            self.fail(e, f"cast of {src} to {e.ty}")  # a broadcast takes a scalar

    def e_plane(self, e: ir.Plane) -> None:
        if getattr(self, "plane_ok", None) is not e:
            self.fail(e, f"plane.{e.op} must be the whole value of an assignment")
        self.plane_ok = None
        self.expr(e.value)
        if e.op not in _PLANE:
            self.fail(e, f"unknown plane operation {e.op!r}")
        wants_arg = OPS[_PLANE[e.op]].takes_lane
        if wants_arg != (e.arg is not None):
            self.fail(e, f"plane.{e.op} {'needs' if wants_arg else 'takes no'} lane argument")
        if e.arg is not None:
            self.expr(e.arg)
            self.same(e.arg, u32, e, f"lane argument of plane.{e.op}")
        if e.op in ("ballot", "elect"):
            self.plane_vote(e)
            return
        self.same(e, e.value.ty, e, f"result of plane.{e.op}")
        if (e.op in ("all", "any")) != e.ty.is_bool and not wants_arg:
            self.fail(e, f"plane.{e.op} of {e.ty}")

    def e_bits(self, e: ir.Bits) -> None:
        for a in e.args:
            self.expr(a)
        if e.op not in ir.BIT_OPS:
            self.fail(e, f"unknown bit function {e.op!r}")
        arity = ir.BIT_OPS[e.op]
        if len(e.args) != arity:
            self.fail(e, f"bits.{e.op} takes {arity} operands, got {len(e.args)}")
        first = e.args[0].ty
        if e.op == "bitcast":
            if first.bits != e.ty.bits or first.is_bool or e.ty.is_bool \
                    or isinstance(first, LineType) != isinstance(e.ty, LineType) \
                    or getattr(first, "size", 1) != getattr(e.ty, "size", 1):
                self.fail(e, f"bitcast of {first} to {e.ty}: not the same size")
            return
        if not first.is_int:
            self.fail(e, f"bits.{e.op} of {first}, not an integer")
        for a in e.args[1:]:
            self.same(a, first, e, f"operand of bits.{e.op}")
        self.same(e, bits_type(e.op, [a.ty for a in e.args]), e, f"result of bits.{e.op}")

    def plane_vote(self, e: ir.Plane) -> None:
        """ballot: a bool in, one u32 word (a constant 0..3) of the lane mask out; elect:
        the constant true in, a bool out."""
        self.same(e.value, bool_, e, f"value of plane.{e.op}")
        if e.op == "elect":
            self.same(e, bool_, e, "result of plane.elect")
            if not (isinstance(e.value, ir.Const) and e.value.value is True):
                self.fail(e, "plane.elect takes the constant true")
            return
        self.same(e, u32, e, "result of plane.ballot")
        if not (isinstance(e.arg, ir.Const) and 0 <= int(e.arg.value) < 4):
            self.fail(e, "the word of plane.ballot must be a constant 0..3")

    def e_call(self, e: ir.Call) -> None:
        for a in e.args:
            self.expr(a)
        if e.func not in _MATH:
            self.fail(e, f"unknown math function {e.func!r}")
        arity = OPS[_MATH[e.func]].arity
        if len(e.args) != arity:
            self.fail(e, f"{e.func} takes {arity} arguments, got {len(e.args)}")
        for k, a in enumerate(e.args[1:], 1):
            want = i32 if e.func == "ldexp" and k == 1 else e.args[0].ty
            self.same(a, want, e, f"argument of {e.func}")
        self.same(e, call_type(e.func, [a.ty for a in e.args]), e, f"result of {e.func}")
