"""IR -> Python/numpy source for the cpu runtime.

The generated function runs every unit of a batch of cubes at once: each value is a
numpy scalar (uniform over the lanes) or an array with one entry per lane ("lane").
Control flow becomes lane masks (see cpu_ops: None = all lanes, False = none):

- `If` evaluates its condition, runs each branch under its mask, skips a branch whose
  mask is empty, and restores the mask afterwards (minus the lanes that left through
  terminate/break/continue inside it).
- `For`/`While` loop while any lane is still in the loop; `_lm<k>` holds the lanes in
  loop k (the condition, `break` and `terminate` remove lanes), `_ct<k>` those that
  continued in this iteration. With uniform bounds the masks stay scalars and this is
  a plain Python loop.
- Assignments under a partial mask use np.where; statements never touch other lanes.
- `sync_cube()` (and `sync_plane()`, `fence_cube()`, `fence_device()`) is a no-op, and
  that is exact for every race-free kernel: each statement
  completes for all lanes of a cube before the next starts, so every access before a
  barrier happens before every access after it, which is all a barrier guarantees (the
  passes keep barriers in uniform control flow, so every lane reaches it together).
"""
from __future__ import annotations

import functools
import re

import numpy as np

from ..abi import KernelABI
from ..ir import nodes as ir
from ..ir.dtype_facts import wrap
from ..ir.ops import LOWERED, BitOp, ops_of
from ..ir.scalar import round_float
from ..ir.types import FP8_DTYPES, DType
from ..targets import get_target
from ..runtime import cpu_atomics, cpu_bits, cpu_cmma, cpu_ops, cpu_plane, cpu_wgmma
from .compiled import Compiled, make_compiled
from ..runtime.cpu_program import CpuProgram, load_program  # noqa: F401  (re-exported)
from .names import comment_text
from .walker import StatementWalker


def _spellings(kind: str) -> dict[str, str]:
    """IR op name -> numpy spelling, for the ops of `kind` numpy has by name (the rest
    are written as code here or in cpu_ops)."""
    target = get_target("cpu")
    found = {}
    for op in ops_of(kind):
        spelling = target.spelling(op)
        if isinstance(spelling, str) and spelling != LOWERED:
            found[op.value] = spelling
    return found


_ARITH = _spellings("binary")  # add sub mul bitand bitor bitxor: Python operators
_CMP = _spellings("compare")
_MATH = _spellings("math")
_HOIST_EVERY = 24  # expression nesting depth at which subtrees go into temporaries
MAX_INDENT = 80  # block depth of the generated Python past which ifs run unguarded




ENTRY = "kernel_fn"


def generate_numpy(kernel: ir.Kernel, abi: KernelABI, checked: bool = True) -> Compiled:
    """The Python/numpy source of a specialised kernel (after passes), with the names it
    runs with. Accesses are always bounds-checked on cpu; an unchecked launch also
    refuses cmma tiles that CUDA's wmma could not access (misaligned offset or stride)."""
    gen = _Gen(kernel, abi, checked)
    source = gen.generate()
    return make_compiled("cpu", kernel, abi, source, ENTRY, namespace=gen.ns,
                         positions=frozenset(gen.builtins))




def compile_kernel(kernel: ir.Kernel, abi: KernelABI) -> CpuProgram:
    """Compiles a specialised kernel (after passes) into a Python function."""
    return load_program(generate_numpy(kernel, abi), kernel, abi)


compile_kernel.record = generate_numpy  # what codegen.generate calls for the cpu target


def _has(block: ir.Block, kinds: tuple, into_loops: bool) -> bool:
    """Whether `block` holds a statement of `kinds` (looking inside loops or not)."""
    for s in block.stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, ir.If):
            if _has(s.then, kinds, into_loops) or _has(s.orelse, kinds, into_loops):
                return True
        elif isinstance(s, (ir.For, ir.While)) and into_loops:
            if _has(s.body, kinds, into_loops):
                return True
    return False




class _Gen(StatementWalker):
    """The numpy code of one kernel. Statements go through the shared walker; control
    flow hooks (if, loops, break, continue, terminate) keep the lane masks."""

    def __init__(self, kernel: ir.Kernel, abi: KernelABI, checked: bool = True):
        super().__init__()
        self.kernel = kernel
        self.abi = abi
        self.checked = checked
        self.ns: dict = {"np": np, "_ops": cpu_ops, "_atomic": cpu_atomics.atomic,
                         "_mand": cpu_ops.mand, "_mandnot": cpu_ops.mandnot,
                         "_mor": cpu_ops.mor, "_where": cpu_ops.where,
                         "_select": cpu_ops.select, "_load": cpu_ops.load,
                         "_load_shared": cpu_ops.load_shared, "_store": cpu_ops.store,
                         "_store_shared": cpu_ops.store_shared, "_meta": cpu_ops.meta}
        self.consts: dict[tuple, str] = {}
        self.names: dict[str, str] = {}
        self.buf_names: dict[str, str] = {}
        self.used_py: set[str] = set()
        self.builtins: set[str] = set()
        self.loops: list[int] = []
        self.declared: set[str] = set()
        self.expr_depth = 0
        self.buffers = {b.name: i for i, b in enumerate(abi.buffers)}
        self.shared = {d.buffer.name: d for d in kernel.shared}
        self.shared.update({d.buffer.name: d for d in kernel.local_arrays})
        self.fields = {(f.kind, f.param): i for i, f in enumerate(abi.fields)}

    # -- output -----------------------------------------------------------------------
    def fresh(self) -> int:
        """The number of a new temporary (_mo<k>, _c<k>, _t<k>, ...)."""
        return self.temps.number()

    def generate(self) -> str:
        k = self.kernel
        self.line("_m = None")
        self.line("_alive = None")
        for name, i in self.buffers.items():
            self.line(f"{self.buf(name)} = _bufs[{i}]")
        for decl in k.shared:
            name = self.buf(decl.buffer.name)
            self.line(f"{name} = np.zeros(_B * {decl.size}, {self.storage(decl.buffer.elem)})")
            self.line(f"{name}_base = _cl * {decl.size}")
        for decl in k.local_arrays:
            # one row of `size` elements per lane (shape (lanes, size), flattened): the
            # shared-memory accessors serve it with each lane's row as its base
            name = self.buf(decl.buffer.name)
            self.line(f"{name} = np.zeros(_L * {decl.size}, {self.storage(decl.buffer.elem)})")
            self.line(f"{name}_base = np.arange(_L, dtype=np.int64) * {decl.size}")
        for i, f in enumerate(self.abi.fields):
            if f.kind == "scalar":
                p = k.param(f.param)
                self.line(f"{self.var(ir.Var(p.name, p.dtype))} = _F[{i}]")
                self.declared.add(p.name)
            elif f.kind != "cube_count":
                self.line(f"_M{i} = _F[{i}]")
        if k.matrices:
            self.declare_matrices(k)
        body_at = len(self.lines)
        self.walk(k.body)
        for name in sorted(self.builtins):
            self.lines.insert(body_at, f"    _bi_{name} = _bi[{name!r}]")
        head = "def kernel_fn(_L, _B, _bufs, _F, _bi, _cl):"
        return "\n".join([head] + self.lines + ["    return None", ""])

    # -- cmma (runtime/cpu_cmma.py) --------------------------------------------------
    def declare_matrices(self, k: ir.Kernel) -> None:
        """The planes of the batch and one Fragment per cmma declaration."""
        self.ns["_cmma"] = cpu_cmma
        self.builtins.add("unit_pos")
        self.line(f"_planes = _cmma.Planes(_bi['unit_pos'], _cl, _B, {k.units_per_cube})")
        if any(d.warpgroup for d in k.matrices):
            self.ns["_wg"] = cpu_wgmma
            self.line(f"_wgs = _wg.Warpgroups(_bi['unit_pos'], _cl, _B, {k.units_per_cube})")
        for d in k.matrices:
            if d.warpgroup:
                self.line(f"{self.frag_name(d)} = _wg.Accumulator(_wgs, {d.n}, {d.name!r})")
                continue
            self.line(f"{self.frag_name(d)} = _cmma.Fragment(_planes, {d.rows}, {d.cols}, "
                      f"{d.elem!r}, {d.count!r}, {d.name!r})")

    def frag_name(self, d: ir.MatrixDecl) -> str:
        return self.buf("frag " + d.name)  # a name space apart from buffers

    def frag(self, f: ir.Frag) -> str:
        """`<fragment>, <index>` arguments of a cpu_cmma call."""
        index = self.expr(f.index) if f.index is not None else "None"
        return f"{self.frag_name(f.matrix)}, {index}"

    def memory(self, buffer: ir.BufferRef) -> str:
        """`<buffer>, <shared size or None>` arguments of a cpu_cmma call."""
        name = self.buf(buffer.name)
        if buffer.space == "shared":
            return f"{name}, {self.shared[buffer.name].size}"
        return f"{name}, None"

    def where(self, s: ir.Stmt) -> str:
        if isinstance(s, ir.WarpgroupMma):
            return repr(f"cmma.wg_mma at line {s.loc.lineno}")
        if isinstance(s, ir.WarpgroupSync):
            return repr(f"cmma.wg_{s.op} at line {s.loc.lineno}")
        if isinstance(s, ir.MatrixScaleBy):
            return repr(f"cmma.scale_{s.axis} at line {s.loc.lineno}")
        return repr(f"cmma.{type(s).__name__[len('Matrix'):].lower()} at line {s.loc.lineno}")

    def groups(self, f: ir.Frag, s: ir.Stmt) -> str:
        """The groups a statement on fragment `f` runs over: planes, or warpgroups (whose
        accumulator must have no multiply running)."""
        if not f.matrix.warpgroup:
            return "_planes"
        self.line(f"_wg.ready(_wgs, {self.frag_name(f.matrix)}, _m, {self.where(s)})")
        return "_wgs"

    def stmt_matrixfill(self, s: ir.MatrixFill) -> None:
        groups = self.groups(s.frag, s)
        self.line(f"_cmma.fill({groups}, {self.frag(s.frag)}, {self.expr(s.value)}, _m, "
                  f"{self.where(s)})")

    def stmt_matrixscale(self, s: ir.MatrixScale) -> None:
        groups = self.groups(s.frag, s)
        self.line(f"_cmma.scale({groups}, {self.frag(s.frag)}, {self.expr(s.value)}, _m, "
                  f"{self.where(s)})")

    def stmt_matrixscaleby(self, s: ir.MatrixScaleBy) -> None:
        groups = self.groups(s.frag, s)
        self.line(f"_cmma.scale_by({groups}, {self.frag(s.frag)}, {self.memory(s.buffer)}, "
                  f"{self.expr(s.offset)}, {s.axis!r}, _m, {self.where(s)}, "
                  f"checked={self.checked})")

    def stmt_warpgroupmma(self, s: ir.WarpgroupMma) -> None:
        self.line(f"_wg.mma(_wgs, {self.frag_name(s.acc.matrix)}, {self.memory(s.a)}, "
                  f"{self.expr(s.a_offset)}, {s.a_rows}, {self.memory(s.b)}, "
                  f"{self.expr(s.b_offset)}, {s.b_rows}, {s.b_layout!r}, _m, "
                  f"{self.where(s)}{f', swizzle={s.swizzle}' if s.swizzle else ''}"
                  f"{self.fp8_operands(s)})")

    def fp8_operands(self, s: ir.WarpgroupMma) -> str:
        """The element types of 8-bit A and B (their shared arrays hold bits)."""
        if s.a.elem not in FP8_DTYPES:
            return ""
        return f", fp8=({s.a.elem.name!r}, {s.b.elem.name!r})"

    def stmt_warpgroupsync(self, s: ir.WarpgroupSync) -> None:
        self.line(f"_wg.sync(_wgs, {s.op!r}, {s.pending}, _m, {self.where(s)})")

    def stmt_matrixload(self, s: ir.MatrixLoad) -> None:
        layout = s.layout or s.frag.matrix.layout
        self.line(f"_cmma.load(_planes, {self.frag(s.frag)}, {self.memory(s.buffer)}, "
                  f"{self.expr(s.offset)}, {self.expr(s.stride)}, {layout!r}, _m, "
                  f"{self.where(s)}, aligned={not self.checked})")

    def stmt_matrixstore(self, s: ir.MatrixStore) -> None:
        groups = self.groups(s.frag, s)
        # (a warpgroup store is per unit on CUDA: no wmma alignment rule)
        aligned = not self.checked and not s.frag.matrix.warpgroup
        self.line(f"_cmma.store({groups}, {self.memory(s.buffer)}, {self.expr(s.offset)}, "
                  f"{self.frag(s.frag)}, {self.expr(s.stride)}, {s.layout!r}, _m, "
                  f"{self.where(s)}, aligned={aligned})")

    def stmt_matrixexecute(self, s: ir.MatrixExecute) -> None:
        frags = ", ".join(self.frag(f) for f in (s.a, s.b, s.c, s.d))
        self.line(f"_cmma.execute(_planes, {frags}, _m, {self.where(s)})")

    def stmt_matrixcast(self, s: ir.MatrixCast) -> None:
        self.line(f"_cmma.cast(_planes, {self.frag(s.src)}, {self.frag(s.dst)}, _m, "
                  f"{self.where(s)})")

    # -- names ------------------------------------------------------------------------
    def var(self, v: ir.Var) -> str:
        py = self.names.get(v.name)
        if py is None:
            base = "v_" + re.sub(r"\W", "_", v.name)
            py, n = base, 1
            while py in self.used_py:
                n += 1
                py = f"{base}_{n}"
            self.names[v.name] = py
            self.used_py.add(py)
        return py

    def buf(self, name: str) -> str:
        py = self.buf_names.get(name)
        if py is None:
            base = "b_" + re.sub(r"\W", "_", name)
            py, n = base, 1
            while py in self.used_py:
                n += 1
                py = f"{base}_{n}"
            self.buf_names[name] = py
            self.used_py.add(py)
        return py

    def dt(self, t: DType) -> str:
        """The numpy type of a value of type `t` (f32 for an 8-bit float, which the cpu
        runtime computes with as the f32 value it stands for)."""
        name = f"_dt_{t.name}"
        self.ns[name] = np.float32 if t in FP8_DTYPES else t.numpy.type
        return name

    def storage(self, t: DType) -> str:
        """The numpy type of an element of type `t` in memory (uint8 bits for fp8)."""
        if t not in FP8_DTYPES:
            return self.dt(t)
        self.ns["_u8"] = np.uint8
        return "_u8"

    def fp8(self, verb: str, t: DType) -> str:
        """The name of cubepy.fp8's `verb` ("decode", "encode", "round_to") for `t`."""
        name = f"_f8{verb}_{t.name}"
        if name not in self.ns:
            from .. import fp8
            self.ns[name] = functools.partial(getattr(fp8, verb), fmt=t.name)
        return name

    def const(self, t: DType, value) -> str:
        key = (t.name, repr(value))
        name = self.consts.get(key)
        if name is None:
            name = f"_k{len(self.consts)}"
            self.consts[key] = name
            if t.is_bool:
                self.ns[name] = np.bool_(bool(value))
            elif t.is_int:
                self.ns[name] = t.numpy.type(wrap(value, t))
            elif t in FP8_DTYPES:
                self.ns[name] = np.float32(round_float(value, t))
            else:
                self.ns[name] = t.numpy.type(float(value))
        return name

    # -- statements -------------------------------------------------------------------
    def walk(self, block: ir.Block) -> None:
        if all(isinstance(s, ir.Comment) for s in block.stmts):
            self.line("pass")  # a Python block needs a statement
        super().walk(block)

    def unsupported(self, s: ir.Stmt) -> None:
        raise NotImplementedError(f"cpu runtime: unsupported statement {type(s).__name__}")

    def assign(self, var: ir.Var, value: str, declare: bool) -> None:
        py = self.var(var)
        if declare or var.name not in self.declared:
            self.declared.add(var.name)
            self.line(f"{py} = {value}")
        else:
            self.line(f"{py} = _where(_m, {value}, {py})")

    def stmt_declare(self, s: ir.Declare) -> None:
        self.assign(s.var, self.const(s.var.ty, 0), True)

    def stmt_assign(self, s: ir.Assign) -> None:
        self.assign(s.var, self.expr(s.value), s.declare)

    def stmt_store(self, s: ir.Store) -> None:
        idx, val = self.expr(s.index), self.expr(s.value)
        if s.buffer.elem in FP8_DTYPES:  # the value is exact in fp8: its bits go to memory
            val = f"{self.fp8('encode', s.buffer.elem)}({val})"
        name = self.buf(s.buffer.name)
        if s.buffer.space in ("shared", "local"):
            size = self.shared[s.buffer.name].size
            self.line(f"_store_shared({name}, {size}, {name}_base, {idx}, {val}, _m, _L)")
        else:
            self.line(f"_store({name}, {idx}, {val}, _m, _L)")

    def stmt_atomicop(self, s: ir.AtomicOp) -> None:
        idx = self.expr(s.index)
        val = self.expr(s.value) if s.value is not None else "None"  # a load has none
        cmp = self.expr(s.compare) if s.compare is not None else "None"
        name = self.buf(s.buffer.name)
        extra = ""
        if s.buffer.space in ("shared", "local"):
            extra = f", {self.shared[s.buffer.name].size}, {name}_base"
        want = s.result is not None
        call = f"_atomic({s.op!r}, {name}, {idx}, {val}, {cmp}, _m, {want}, _L{extra})"
        if want:
            self.assign(s.result, call, False)
        else:
            self.line(call)

    def stmt_if(self, s: ir.If) -> None:
        k = self.fresh()
        self.line(f"_mo{k} = _m")
        self.line(f"_c{k} = {self.expr(s.cond)}")
        self.line(f"_m = _mand(_mo{k}, _c{k})")
        self.guarded(s.then)
        if s.orelse.stmts:
            self.line(f"_m = _mandnot(_mo{k}, _c{k})")
            self.guarded(s.orelse)
        self.line(f"_m = _mo{k}")
        self.restore_after(ir.Block(s.then.stmts + s.orelse.stmts))

    def guarded(self, block: ir.Block) -> None:
        """`block` under `if _m is not False:`, which skips it when no lane is active.
        Past MAX_INDENT levels (Python allows 100; an elif chain nests one per branch)
        the block runs unguarded: every effect is masked by _m, so that is only slower."""
        if self.depth >= MAX_INDENT:
            self.walk(block)
            return
        self.line("if _m is not False:")
        self.nested(block)

    def restore_after(self, block: ir.Block) -> None:
        """After a region: drop the lanes that left it through break/continue/terminate."""
        if self.loops and _has(block, (ir.Break, ir.Continue), into_loops=False):
            inner = self.loops[-1]
            self.line(f"_m = _mand(_m, _lm{inner})")
            if _has(block, (ir.Continue,), into_loops=False):
                self.line(f"_m = _mandnot(_m, _ct{inner})")
        if _has(block, (ir.Terminate,), into_loops=True):
            self.line("_m = _mand(_m, _alive)")

    def loop(self, k: int, cond, body: ir.Block, step: str | None) -> None:
        """`cond()` gives the condition's code; it runs inside the loop because it may
        emit temporaries that must be recomputed every iteration."""
        self.line(f"_lm{k} = _m")
        self.line("while True:")
        self.depth += 1
        self.line(f"_lm{k} = _mand(_lm{k}, {cond()})")
        self.line(f"if _lm{k} is False: break")
        self.line(f"_m = _lm{k}")
        if _has(body, (ir.Continue,), into_loops=False):
            self.line(f"_ct{k} = False")
        self.loops.append(k)
        self.walk(body)
        self.loops.pop()
        if step is not None:
            self.line(step)
        self.depth -= 1
        self.line(f"_m = _mo{k}")
        if _has(body, (ir.Terminate,), into_loops=True):
            self.line("_m = _mand(_m, _alive)")

    def stmt_for(self, s: ir.For) -> None:
        k = self.fresh()
        v = self.var(s.var)
        self.line(f"_mo{k} = _m")
        self.line(f"{v} = {self.expr(s.start)}")
        self.declared.add(s.var.name)
        self.line(f"_stop{k} = {self.expr(s.stop)}")
        self.line(f"_step{k} = {self.expr(s.step)}")
        if isinstance(s.step, ir.Const):
            cond = f"({v} < _stop{k})" if s.step.value > 0 else f"({v} > _stop{k})"
        else:
            # A runtime step: its sign picks the direction; a zero step runs no
            # iteration (as the WGSL target does) instead of looping forever.
            zero = self.const(s.step.ty, 0)
            cond = f"((_step{k} > {zero}) & ({v} < _stop{k}))"
            if s.step.ty.is_signed:
                cond = f"({cond} | ((_step{k} < {zero}) & ({v} > _stop{k})))"
        self.loop(k, lambda: cond, s.body, f"{v} = {v} + _step{k}")

    def stmt_while(self, s: ir.While) -> None:
        k = self.fresh()
        self.line(f"_mo{k} = _m")
        self.loop(k, lambda: self.expr(s.cond), s.body, None)

    def stmt_break(self, s: ir.Break) -> None:
        k = self.loops[-1]
        self.line(f"_lm{k} = _mandnot(_lm{k}, _m)")
        self.line("_m = False")

    def stmt_continue(self, s: ir.Continue) -> None:
        k = self.loops[-1]
        self.line(f"_ct{k} = _mor(_ct{k}, _m)")
        self.line("_m = False")

    def stmt_terminate(self, s: ir.Terminate) -> None:
        self.line("_alive = _mandnot(_alive, _m)")
        for k in self.loops:
            self.line(f"_lm{k} = _mandnot(_lm{k}, _m)")
        self.line("_m = False")

    def stmt_barrier(self, s: ir.Barrier) -> None:
        # barriers and fences: lanes run in lockstep (see module docstring)
        self.line(f"pass  # {s.op}()")

    def stmt_comment(self, s: ir.Comment) -> None:
        for line in s.text.splitlines() or [""]:
            self.line(f"# {comment_text(line)}")

    # -- expressions ------------------------------------------------------------------
    def expr(self, e: ir.Expr) -> str:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise NotImplementedError(f"cpu runtime: unsupported expression {type(e).__name__}")
        self.expr_depth += 1
        try:
            code = method(e)
        finally:
            self.expr_depth -= 1
        if self.expr_depth and self.expr_depth % _HOIST_EVERY == 0 and not code.isidentifier():
            # Deep trees (inlining, unrolling) would exceed Python's parser nesting
            # limit: evaluate this subtree first into a temporary (expressions are pure).
            tmp = f"_t{self.fresh()}"
            self.line(f"{tmp} = {code}")
            return tmp
        return code

    def e_Const(self, e: ir.Const) -> str:
        return self.const(e.ty, e.value)

    def e_Load(self, e: ir.Load) -> str:
        return self.var(e.var)

    def e_Builtin(self, e: ir.Builtin) -> str:
        self.builtins.add(e.name)
        return f"_bi_{e.name}"

    def e_Meta(self, e: ir.Meta) -> str:
        name = e.buffer.name
        if e.buffer.space in ("shared", "local"):
            size = self.shared[name].size
            return self.const(e.ty, size if e.kind in ("len", "buffer_len") else 1)
        i = self.fields.get((e.kind, name))
        if i is None:
            if e.kind == "buffer_len" and name in self.buffers:
                return f"{self.dt(e.ty)}({self.buf(name)}.shape[0])"
            raise NotImplementedError(f"cpu runtime: {e.kind} of {name} is not in the ABI")
        if e.kind in ("shape", "stride"):
            return f"_meta(_M{i}, {self.expr(e.dim)})"
        return f"_M{i}"

    def e_Index(self, e: ir.Index) -> str:
        name = self.buf(e.buffer.name)
        idx = self.expr(e.index)
        if e.buffer.space in ("shared", "local"):
            size = self.shared[e.buffer.name].size
            code = f"_load_shared({name}, {size}, {name}_base, {idx})"
        else:
            code = f"_load({name}, {idx})"
        if e.buffer.elem in FP8_DTYPES:  # bits in memory, f32 values in the kernel
            return f"{self.fp8('decode', e.buffer.elem)}({code})"
        return code

    def e_Unary(self, e: ir.Unary) -> str:
        a = self.expr(e.operand)
        if e.op == "neg":
            return f"(-{a})"
        if e.op == "not" or (e.op == "bitnot" and e.ty.is_bool):
            return f"np.logical_not({a})"
        if e.op == "bitnot":
            return f"(~{a})"
        if e.op == "abs":
            return a if e.ty.kind == "uint" or e.ty.is_bool else f"np.abs({a})"
        raise NotImplementedError(f"cpu runtime: unary {e.op}")

    def e_Binary(self, e: ir.Binary) -> str:
        a, b, t, op = self.expr(e.lhs), self.expr(e.rhs), e.ty, e.op
        if op in _ARITH:
            return f"({a} {_ARITH[op]} {b})"
        if t.is_float:
            table = {"div": f"({a} / {b})", "floordiv": f"_ops.ffloordiv({a}, {b})",
                     "mod": f"_ops.fmod({a}, {b})", "pow": f"np.power({a}, {b})",
                     "max": f"np.fmax({a}, {b})", "min": f"np.fmin({a}, {b})"}
        else:
            dt = self.dt(t)
            table = {"div": f"_ops.ifloordiv({a}, {b})",
                     "floordiv": f"_ops.ifloordiv({a}, {b})", "mod": f"_ops.imod({a}, {b})",
                     "pow": f"_ops.ipow({a}, {b}, np.dtype({dt}))",
                     "shl": f"_ops.shl({a}, {b}, {dt}, {t.bits})",
                     "shr": f"_ops.shr({a}, {b}, {dt}, {t.bits})",
                     "max": f"np.maximum({a}, {b})", "min": f"np.minimum({a}, {b})"}
        if op not in table:
            raise NotImplementedError(f"cpu runtime: binary {op} on {t}")
        return table[op]

    def e_Compare(self, e: ir.Compare) -> str:
        return f"({self.expr(e.lhs)} {_CMP[e.op]} {self.expr(e.rhs)})"

    def e_Logical(self, e: ir.Logical) -> str:
        # Both sides are pure and every access is bounds-checked, so evaluating the
        # right side for all lanes gives the short-circuit result.
        sym = "&" if e.op == "and" else "|"
        return f"({self.expr(e.lhs)} {sym} {self.expr(e.rhs)})"

    def e_Select(self, e: ir.Select) -> str:
        return (f"_select({self.expr(e.cond)}, {self.expr(e.if_true)}, "
                f"{self.expr(e.if_false)})")

    def e_Cast(self, e: ir.Cast) -> str:
        src, dst = e.operand.ty, e.ty
        a = self.expr(e.operand)
        if src is dst:
            return a
        if dst in FP8_DTYPES:  # rounded as CUDA's cast: nearest even, saturating
            return f"{self.fp8('round_to', dst)}({a})"
        if dst.is_bool:
            return f"({a} != {self.const(src, 0)})"
        if dst.is_int and src.is_float:
            return (f"_ops.f2i({a}, np.dtype({self.dt(dst)}), {dst.bits}, "
                    f"{dst.kind == 'int'})")
        return f"{a}.astype({self.dt(dst)})"

    def e_Plane(self, e: ir.Plane) -> str:
        # A plane operation is the whole value of an Assign (the verifier checks it), so
        # `_m` holds exactly the lanes that execute it.
        self.builtins.add("unit_pos")
        self.ns["_plane"] = cpu_plane.plane
        arg = self.expr(e.arg) if e.arg is not None else "None"
        return (f"_plane({e.op!r}, {self.expr(e.value)}, {arg}, _m, _bi_unit_pos, _cl, _B, "
                f"{self.kernel.units_per_cube})")

    def e_Bits(self, e: ir.Bits) -> str:
        # "_bits.popcount", ...: runtime/cpu_bits.py (the op table's numpy spelling)
        self.ns["_bits"] = cpu_bits
        fn = get_target("cpu").spelling(BitOp(e.op))
        args = [self.expr(a) for a in e.args]
        if e.op == "bitcast":
            args.append(self.dt(e.ty))
        return f"{fn}({', '.join(args)})"

    def e_Call(self, e: ir.Call) -> str:
        fn = _MATH.get(e.func)
        if fn is None:
            raise NotImplementedError(f"cpu runtime: math function {e.func}")
        return f"{fn}({', '.join(self.expr(a) for a in e.args)})"

