"""uniform_barriers: every sync_cube() must be reached by all units of the cube.

WGSL requires workgroupBarrier in uniform control flow (and naga does not check it); CUDA
and Metal deadlock or misbehave otherwise. Two steps, in kernels that hold a Barrier:

1. An early Terminate becomes a flag: `cube_active = true` at entry, Terminate ->
   `cube_active = false` (plus `break` inside a loop without barriers, which the unit
   would have left anyway), and statements that could observe the difference (memory
   accesses, loops) after a possibly-terminating statement are wrapped in
   `if cube_active { ... }`. Barriers, and statements holding a barrier or a
   break/continue of an enclosing loop, stay outside the guards: every unit keeps
   walking the same control flow, so terminated units still arrive at each barrier.
2. A uniformity analysis: a value is non-uniform when it depends on UNIT_POS*,
   ABSOLUTE_POS*, UNIT_POS_PLANE, a memory read, a plane operation, an atomic result, or
   a variable assigned a non-uniform value or under non-uniform control (to a fixpoint).
   A barrier under a non-uniform if/while/for, or a non-uniform break/continue in a loop
   holding a barrier, is a CompileError at the user's line.
"""
from __future__ import annotations

import dataclasses

from ... import errors
from .. import nodes as ir
from ..batched_dataclass import dataclass  # (frozen classes, cheap to create)
from ..names import NameTable
from ..types import bool_
from ..visit import child_exprs, walk_exprs
from .needs import holds_barrier
from .rewrite import all_var_names, contains, escaping_jump

ACTIVE = "cube_active"
NON_UNIFORM_BUILTINS = frozenset({
    "absolute_pos", "absolute_pos_x", "absolute_pos_y", "absolute_pos_z", "unit_pos",
    "unit_pos_x", "unit_pos_y", "unit_pos_z", "unit_pos_plane"})
_LOOPS = (ir.For, ir.While)


def uniform_barriers(kernel: ir.Kernel, syncs: frozenset[str] = frozenset({"sync_cube"}),
                     title: str = "the target") -> ir.Kernel:
    """Guards early terminates and checks that every barrier is uniform (see module doc).
    `syncs`: the Barrier ops the target needs in uniform control flow (its
    `uniform_syncs`, `title` its name for messages); the others (sync_plane, the fences of
    CUDA and Metal) may be anywhere. The pipeline runs it only on a kernel with a barrier
    in `syncs` (passes/needs.py)."""
    if contains(kernel.body, ir.Terminate):
        kernel = _Guard(kernel, syncs).run()
    _Uniformity(kernel, syncs, title).check()
    return kernel


# ----------------------------------------------------------------------------- guarding

class _Guard:
    def __init__(self, kernel: ir.Kernel, syncs: frozenset[str]):
        self.kernel = kernel
        self.syncs = syncs
        name = NameTable(all_var_names(kernel), style="append_").fresh(ACTIVE)
        self.active = ir.Var(name, bool_)

    def run(self) -> ir.Kernel:
        init = ir.Assign(var=self.active, value=ir.Const(ty=bool_, value=True), declare=True,
                         loc=self.kernel.loc)
        body = self.region(self.kernel.body, None, False)
        return dataclasses.replace(self.kernel, body=ir.Block((init,) + body.stmts))

    def load(self, loc: ir.Loc) -> ir.Expr:
        return ir.Load(ty=bool_, var=self.active, loc=loc)

    def region(self, block: ir.Block, loop: str | None, guarded: bool) -> ir.Block:
        """Rewrites one block. `loop`: None outside loops, "plain" in a loop without
        barriers, "barrier" in a loop holding one. `guarded`: the unit may already be
        inactive on entry."""
        out: list[ir.Stmt] = []
        pending: list[ir.Stmt] = []

        def flush() -> None:
            if pending:
                loc = pending[0].loc
                out.append(ir.If(cond=self.load(loc), then=ir.Block(tuple(pending)), loc=loc))
                pending.clear()

        for s in block.stmts:
            if isinstance(s, ir.Terminate):
                off = ir.Assign(var=self.active, value=ir.Const(ty=bool_, value=False,
                                                                loc=s.loc), loc=s.loc)
                flush()
                out.append(off)
                if loop == "plain":
                    out.append(ir.Break(loc=s.loc))
                guarded = True
                continue
            terminates = contains(s, ir.Terminate)
            if holds_barrier(s, self.syncs) or escaping_jump(s) is not None:
                flush()
                out.append(self.structural(s, loop, guarded))
            else:
                inner = self.plain(s, loop)
                if guarded and _observable(s):
                    if isinstance(inner, ir.Assign) and inner.declare:
                        # Declare outside the guard: later statements still see it.
                        out.append(ir.Declare(var=inner.var, loc=inner.loc))
                        inner = dataclasses.replace(inner, declare=False)
                    pending.append(inner)
                else:
                    flush()
                    out.append(inner)
            if terminates:
                if loop == "plain" and isinstance(s, _LOOPS):
                    flush()
                    out.append(ir.If(cond=ir.Unary(ty=bool_, op="not",
                                                   operand=self.load(s.loc), loc=s.loc),
                                     then=ir.Block((ir.Break(loc=s.loc),)), loc=s.loc))
                guarded = True
        flush()
        return ir.Block(tuple(out))

    def structural(self, s: ir.Stmt, loop: str | None, guarded: bool) -> ir.Stmt:
        """A statement every unit must run (it holds a barrier or a jump out)."""
        if isinstance(s, ir.If):
            return dataclasses.replace(s, then=self.region(s.then, loop, guarded),
                                       orelse=self.region(s.orelse, loop, guarded))
        if isinstance(s, _LOOPS):
            return dataclasses.replace(s, body=self.region(s.body, "barrier", guarded))
        return s

    def plain(self, s: ir.Stmt, loop: str | None) -> ir.Stmt:
        """A statement without barriers: only active units need to run it."""
        if isinstance(s, ir.If):
            return dataclasses.replace(s, then=self.region(s.then, loop, False),
                                       orelse=self.region(s.orelse, loop, False))
        if isinstance(s, _LOOPS):
            return dataclasses.replace(s, body=self.region(s.body, "plain", False))
        return s


def _observable(s: ir.Stmt) -> bool:
    """Whether running `s` in an inactive unit could be seen (memory, or a loop whose
    length may depend on values the guard kept stale). Plain assignments are not: they
    run everywhere, so uniform variables stay uniform."""
    if isinstance(s, (ir.Store, ir.AtomicOp, ir.For, ir.While, ir.LoadLine, ir.StoreLine,
                      *ir.MATRIX_STMTS, *ir.ASYNC_STMTS)):
        return True  # (a cmma statement: a terminated unit must not take part either)
    for e in child_exprs(s):
        # A plane operation is observable too: a terminated unit must not contribute.
        if any(isinstance(x, (ir.Index, ir.Plane)) for x in walk_exprs(e)):
            return True
    if isinstance(s, ir.If):
        return any(_observable(x) for b in (s.then, s.orelse) for x in b.stmts)
    return False


# ----------------------------------------------------------------------------- analysis

@dataclass(frozen=True)
class _Ctx:
    """Why control flow at this point differs between units."""

    reason: str
    stmt: ir.Stmt


class _Uniformity:
    def __init__(self, kernel: ir.Kernel, syncs: frozenset[str], title: str):
        self.kernel = kernel
        self.syncs = syncs
        self.title = title
        self.nonuniform: dict[str, str] = {}
        self.changed = False
        self.checking = False

    def check(self) -> None:
        while True:
            self.changed = False
            self.block(self.kernel.body, None, None)
            if not self.changed:
                break
        self.checking = True
        self.block(self.kernel.body, None, None)

    # -- reasons -----------------------------------------------------------------------
    def reason(self, e: ir.Expr) -> str | None:
        """Why `e` may differ between units (None when it is uniform)."""
        for x in walk_exprs(e):
            if isinstance(x, ir.Builtin) and x.name in NON_UNIFORM_BUILTINS:
                return x.name.upper()
            if isinstance(x, ir.Index):
                kind = {"shared": "shared memory",
                        "local": "a local array"}.get(x.buffer.space, "memory")
                return f"a read of {kind} ({x.buffer.name}[...])"
            if isinstance(x, ir.Plane):  # each plane may see different units and values
                return f"a plane operation (plane_{x.op})"
            if isinstance(x, ir.Load) and x.var.name in self.nonuniform:
                return self.nonuniform[x.var.name]
        return None

    def mark(self, var: ir.Var, why: str) -> None:
        if var.name not in self.nonuniform:
            self.nonuniform[var.name] = why
            self.changed = True

    def var_reason(self, var: ir.Var, why: str) -> str:
        if var.name.startswith(ACTIVE):
            return f"whether the unit called terminate() earlier, which depends on {why}"
        return f"'{var.name}', which depends on {why}"

    # -- walk --------------------------------------------------------------------------
    def block(self, block: ir.Block, ctx: _Ctx | None, loop: tuple | None) -> None:
        """`loop`: the innermost loop around `block` and the context it was entered in."""
        for s in block.stmts:
            self.stmt(s, ctx, loop)

    def stmt(self, s: ir.Stmt, ctx: _Ctx | None, loop: tuple | None) -> None:
        if isinstance(s, ir.Assign):
            why = ctx.reason if ctx else self.reason(s.value)
            if why:
                self.mark(s.var, self.var_reason(s.var, why))
        elif isinstance(s, ir.AtomicOp) and s.result is not None:
            self.mark(s.result, f"'{s.result.name}', an atomic result")
        elif isinstance(s, ir.LoadLine):
            why = ctx.reason if ctx else f"a read of memory ({s.buffer.name}[...])"
            for v in s.parts:
                self.mark(v, self.var_reason(v, why))
        elif isinstance(s, ir.If):
            why = self.reason(s.cond)
            inner = ctx or (_Ctx(why, s) if why else None)
            self.block(s.then, inner, loop)
            self.block(s.orelse, inner, loop)
        elif isinstance(s, _LOOPS):
            self.loop(s, ctx)
        elif isinstance(s, ir.Barrier) and self.checking and ctx is not None \
                and s.op in self.syncs:
            self.barrier_error(s, ctx)
        elif isinstance(s, (ir.Break, ir.Continue)) and self.checking and loop is not None \
                and ctx is not None and ctx is not loop[1] and ctx.stmt is not loop[0] \
                and holds_barrier(loop[0], self.syncs):
            word = "break" if isinstance(s, ir.Break) else "continue"
            errors.compile_error(s.loc, f"{word} under a condition that depends on "
                                        f"{ctx.reason} (line {ctx.stmt.loc.lineno}) inside a "
                                        f"loop that calls sync_cube(): every unit of the cube "
                                        f"must run the same iterations; make the condition "
                                        f"the same for every unit")

    def loop_ctx_reason(self, s: ir.Stmt) -> str | None:
        if isinstance(s, ir.While):
            return self.reason(s.cond)
        return next((r for r in map(self.reason, (s.start, s.stop, s.step)) if r), None)

    def loop(self, s: ir.Stmt, ctx: _Ctx | None) -> None:
        why = self.loop_ctx_reason(s)
        if why is None and ctx is None and not holds_barrier(s, self.syncs):
            why = self.jump_reason(s.body, None)  # (in a barrier loop: an error below)
        inner = ctx or (_Ctx(why, s) if why else None)
        if isinstance(s, ir.For) and inner is not None:
            self.mark(s.var, self.var_reason(s.var, inner.reason))
        self.block(s.body, inner, (s, ctx))

    def jump_reason(self, block: ir.Block, why: str | None) -> str | None:
        """Why some unit may leave this loop (or skip to its next iteration) early."""
        for s in block.stmts:
            if isinstance(s, (ir.Break, ir.Continue)) and why:
                return why
            if isinstance(s, ir.If):
                inner = why or self.reason(s.cond)
                for b in (s.then, s.orelse):
                    found = self.jump_reason(b, inner)
                    if found:
                        return found
        return None

    def barrier_error(self, s: ir.Barrier, ctx: _Ctx) -> None:
        line = ctx.stmt.loc.lineno
        if isinstance(ctx.stmt, ir.If):
            where = f"an if whose condition depends on {ctx.reason}"
        elif self.loop_ctx_reason(ctx.stmt) is None:
            where = f"a loop that some units leave early, depending on {ctx.reason}"
        elif isinstance(ctx.stmt, ir.For):
            where = f"a for loop whose bounds depend on {ctx.reason}"
        else:
            where = f"a while loop whose condition depends on {ctx.reason}"
        why = "" if s.op == "sync_cube" else \
            f" ({self.title} writes it as a workgroup barrier, which must be uniform)"
        errors.compile_error(
            s.loc, f"{s.op}() must be reached by every unit of the cube{why}, but it is "
                   f"inside {where} (line {line}); move {s.op}() out of it or make the "
                   f"condition the same for every unit")
