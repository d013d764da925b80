"""legalize_types: element types a target cannot represent are a CompileError at their
first use (WGSL: no f64, i64, u64, bf16; Metal: no f64; cpu: no bf16), and so are the
ops it does not claim (an atomic or plane op on a type it lacks, a math function with
no spelling). The facts are each Target record's `dtypes`, `replacements`, atomic and
plane tables and op spellings (cubepy/targets/); the built-in targets claim every op on
the portable set (i32/u32/f32); the frontend also accepts what only some targets have
(64-bit, f16 and bf16 atomics on CUDA and the cpu runtime), so WGSL, Metal and a test's
toy target meet the second kind of error here rather than inside their code generator."""
from __future__ import annotations

from typing import Callable, Iterator

from ... import errors
from ...targets import ALL_TYPE_NAMES, PORTABLE, Target, get_target
from .. import nodes as ir
from ..ops import (OPS, BinaryOp, BitOp, CompareOp, LogicalOp, MathFn, PlaneOp, SyncOp,
                   UnaryOp)
from ..types import DType
from ..visit import child_exprs, walk_exprs, walk_stmts


def _uses(kernel: ir.Kernel) -> Iterator[tuple[DType, ir.Loc, str]]:
    """(type, where, what) for every type the kernel mentions, in source order; a
    variable's declaration last (a variable first assigned inside a block is declared
    before it, at the block's line, which would point at the wrong line)."""
    declared = []
    for s in walk_stmts(kernel.body):
        var = getattr(s, "var", None) or getattr(s, "result", None)
        if isinstance(s, ir.Declare):
            declared.append((var.ty, s.loc, f"variable '{var.name}'"))
        elif var is not None:
            yield var.ty, s.loc, f"variable '{var.name}'"
        for top in child_exprs(s):
            for e in walk_exprs(top):
                loc = e.loc if e.loc.lineno > 0 else s.loc
                yield e.ty, loc, "this value"
        buf = getattr(s, "buffer", None)
        if buf is not None:
            yield buf.elem, s.loc, f"buffer '{buf.name}'"
    yield from declared
    for d in kernel.shared:
        yield d.buffer.elem, d.loc, f"shared memory '{d.buffer.name}'"
    for d in kernel.local_arrays:
        yield d.buffer.elem, d.loc, f"local array '{d.buffer.name}'"
    for p in kernel.params:
        yield p.dtype, kernel.loc, f"parameter '{p.name}'"


def legalize_types(target: str) -> Callable[[ir.Kernel], ir.Kernel]:
    """The pass rejecting the element types and ops `target` lacks."""
    record = get_target(target)
    all_types = record.dtypes >= ALL_TYPE_NAMES
    all_ops = _claims_everything(record)

    def legalize(kernel: ir.Kernel) -> ir.Kernel:
        if kernel.matrices:
            _check_matrices(kernel, record)
        if not all_types:
            for ty, loc, what in _uses(kernel):
                if ty.name not in record.dtypes:
                    advice = record.replacements.get(ty.name)
                    errors.compile_error(loc, f"{record.title} has no {ty.name}: {what} is "
                                              f"{ty.name}" + (f"; use {advice} instead"
                                                              if advice else ""))
        if not all_ops:
            _check_ops(kernel, record)
        return kernel

    legalize.__name__ = f"legalize_types_{target}"
    return legalize


def _claims_everything(t: Target) -> bool:
    """Whether `t` has every op, and every atomic and plane type the frontend allows."""
    return (all(t.supports_op(op) for op in OPS)
            and all(t.atomic_dtypes.get(op, frozenset()) >= types
                    for op, types in PORTABLE.atomic_dtypes_anywhere.items())
            and t.plane_dtypes >= PORTABLE.plane_dtypes_any)


def _check_matrices(kernel: ir.Kernel, t: Target) -> None:
    """A CompileError at the first cmma fragment or multiply `t` lacks (its
    `matrix_shapes`), naming the target and what it has."""
    for d in kernel.matrices:
        if d.warpgroup and not t.warpgroup_mma:
            errors.compile_error(d.loc, f"{t.title} has no warpgroup matrix multiply "
                                        f"(cmma.WarpgroupAccumulator, wg_mma): CUDA on "
                                        f"sm_90 (Hopper) and the cpu runtime have it")
        if d.warpgroup and kernel.units_per_cube % 128:
            errors.compile_error(d.loc, f"a warpgroup accumulator needs the cube's units in "
                                        f"whole warpgroups of 128 units; the cube has "
                                        f"{kernel.units_per_cube}")
    if not t.matrix_shapes:
        advice = t.op_advice.get("cmma")
        errors.compile_error(kernel.matrices[0].loc, f"{t.title} has no matrix units (cmma)"
                                                     + (f": {advice}" if advice else ""))
    have = "; ".join(f"{a} A/B into {c}: {', '.join(_shape(s) for s in sorted(shapes))}"
                     for (a, c), shapes in sorted(t.matrix_shapes.items()))
    for d in kernel.matrices:
        if d.warpgroup:
            continue
        if d.elem not in t.matrix_elems(d.ident, d.m, d.n, d.k):
            role = "accumulator" if d.ident == "accumulator" else d.ident.upper()
            errors.compile_error(d.loc, f"{t.title} has no {d.shape_text} {d.elem} {role} "
                                        f"fragment (it multiplies {have})")
    for s in walk_stmts(kernel.body):
        if isinstance(s, ir.MatrixExecute):
            a, c = s.a.matrix, s.c.matrix
            if (a.m, a.n, a.k) not in t.matrix_shapes.get((a.elem, c.elem), ()):
                errors.compile_error(s.loc, f"{t.title} has no {a.shape_text} multiply of "
                                            f"{a.elem} into {c.elem} (it multiplies {have})")


def _shape(s: tuple[int, int, int]) -> str:
    return "x".join(str(d) for d in s)


_EXPR_OPS = {ir.Binary: BinaryOp, ir.Compare: CompareOp, ir.Unary: UnaryOp,
             ir.Logical: LogicalOp}


def _check_ops(kernel: ir.Kernel, t: Target) -> None:
    """A CompileError at the first op `t` does not claim."""
    for s in walk_stmts(kernel.body):
        if isinstance(s, ir.Barrier) and not t.supports_op(SyncOp(s.op)):
            advice = t.op_advice.get(f"sync.{s.op}")
            errors.compile_error(s.loc, f"{t.title} has no {s.op}()"
                                        + (f": {advice}" if advice else ""))
        if isinstance(s, ir.AtomicOp):
            elem = s.buffer.elem.name
            has = t.atomic_dtypes.get(s.op, frozenset())
            if elem not in has:
                listed = ", ".join(sorted(has)) or "no element type"
                errors.compile_error(s.loc, f"{t.title} has no atomic_{s.op} on {elem} "
                                            f"(buffer '{s.buffer.name}'; it takes {listed})")
        for top in child_exprs(s):
            for e in walk_exprs(top):
                what = _unclaimed(e, t)
                if what is not None:
                    errors.compile_error(e.loc if e.loc.lineno > 0 else s.loc,
                                         f"{t.title} has no {what}")


def _unclaimed(e: ir.Expr, t: Target) -> str | None:
    """What `e` uses that `t` lacks, or None."""
    if isinstance(e, ir.Plane):
        if not t.supports_op(PlaneOp(e.op)):
            return f"plane_{e.op}"
        if e.ty.name not in t.plane_dtypes:
            return f"plane_{e.op} on {e.ty.name}"
    elif isinstance(e, ir.Call):
        if not t.supports_op(MathFn(e.func)):
            return f"math function {e.func}"
    elif isinstance(e, ir.Bits):
        if not t.supports_op(BitOp(e.op)):
            return f"{e.op}"
    elif type(e) in _EXPR_OPS and not t.supports_op(_EXPR_OPS[type(e)](e.op)):
        return f"operator {e.op}"
    return None
