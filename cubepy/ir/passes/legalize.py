"""legalize_types: element types a target cannot represent are a CompileError at their
first use (WGSL: no f64, i64, u64, bf16; Metal: no f64; cpu: no bf16). The facts are
each Target record's `dtypes` and `replacements` (cubepy/targets/)."""
from __future__ import annotations

from typing import Callable, Iterator

from ... import errors
from ...targets import ALL_TYPE_NAMES, get_target
from .. import nodes as ir
from ..types import DType
from ..visit import child_exprs, walk_exprs, walk_stmts


def _uses(kernel: ir.Kernel) -> Iterator[tuple[DType, ir.Loc, str]]:
    """(type, where, what) for every type the kernel mentions, in source order."""
    for s in walk_stmts(kernel.body):
        var = getattr(s, "var", None) or getattr(s, "result", None)
        if var is not None:
            yield var.ty, s.loc, f"variable '{var.name}'"
        for top in child_exprs(s):
            for e in walk_exprs(top):
                loc = e.loc if e.loc.lineno > 0 else s.loc
                yield e.ty, loc, "this value"
        buf = getattr(s, "buffer", None)
        if buf is not None:
            yield buf.elem, s.loc, f"buffer '{buf.name}'"
    for d in kernel.shared:
        yield d.buffer.elem, d.loc, f"shared memory '{d.buffer.name}'"
    for p in kernel.params:
        yield p.dtype, kernel.loc, f"parameter '{p.name}'"


def legalize_types(target: str) -> Callable[[ir.Kernel], ir.Kernel]:
    """The pass rejecting the element types `target` lacks."""
    record = get_target(target)

    def legalize(kernel: ir.Kernel) -> ir.Kernel:
        if record.dtypes >= ALL_TYPE_NAMES:
            return kernel
        for ty, loc, what in _uses(kernel):
            if ty.name not in record.dtypes:
                advice = record.replacements.get(ty.name)
                errors.compile_error(loc, f"{record.title} has no {ty.name}: {what} is "
                                          f"{ty.name}" + (f"; use {advice} instead"
                                                          if advice else ""))
        return kernel

    legalize.__name__ = f"legalize_types_{target}"
    return legalize
