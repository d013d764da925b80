"""The uses an 8-bit float (e4m3, e5m2) may have: it is a storage type. A kernel loads
it from a buffer or shared memory, stores it, keeps it in a variable, selects between
two of them, moves lines of them whole or takes their elements, and converts it to and
from other types; anything else (arithmetic, a comparison, a math, plane or bit
function, the cast of a whole line) is a CompileError at the use, which says to convert
first. CUDA's `__nv_fp8_e4m3` has no arithmetic either, and a conversion names the
rounding point (each value is rounded once, where it is cast).

Imported by the builder only for a kernel in which some value has an fp8 type."""
from __future__ import annotations

from ..errors import compile_error
from ..ir import nodes as n
from ..ir.types import FP8_DTYPES, LineType
from ..ir.visit import child_exprs, walk_exprs, walk_stmts

# Expressions an fp8 value may be, or be an operand of.
_ALLOWED = (n.Const, n.Load, n.Index, n.Select, n.Cast, n.Extract, n.MakeLine)
_WHAT = {n.Unary: "arithmetic", n.Binary: "arithmetic", n.Compare: "a comparison",
         n.Call: "a math function", n.Bits: "a bit function", n.Plane: "a plane operation"}


def _fp8(ty) -> bool:
    return ty in FP8_DTYPES or (isinstance(ty, LineType) and ty.elem in FP8_DTYPES)


def _fp8_name(ty) -> str:
    return ty.elem.name if isinstance(ty, LineType) else ty.name


def check_fp8_uses(kernel: n.Kernel) -> None:
    """Raises a CompileError at the first use of an fp8 value that is not a load, a
    store, a variable, a select, a line's element or a conversion of one value."""
    for stmt in walk_stmts(kernel.body):  # (atomics refuse fp8 buffers when built)
        for top in child_exprs(stmt):
            for e in walk_exprs(top):
                _check_expr(e, stmt.loc)


def _check_expr(e: n.Expr, stmt_loc: n.Loc) -> None:
    loc = e.loc if e.loc.lineno > 0 else stmt_loc
    if isinstance(e, _ALLOWED):
        if isinstance(e, n.Cast) and (isinstance(e.ty, LineType)
                                      or isinstance(e.operand.ty, LineType)) \
                and (_fp8(e.ty) or _fp8(e.operand.ty)):
            _line_error(loc, _fp8_name(e.ty if _fp8(e.ty) else e.operand.ty))
        return
    typed = [x.ty for x in (e, *child_exprs(e)) if _fp8(x.ty)]
    if typed:
        name = _fp8_name(typed[0])
        what = _WHAT.get(type(e), "this operation")
        compile_error(loc, f"{name} is an 8-bit storage type: it is loaded, stored, "
                           f"selected and converted, but {what} does not take it; convert "
                           f"it first, e.g. f32(x)")


def _line_error(loc: n.Loc, name: str) -> None:
    compile_error(loc, f"a Line of {name} converts element by element: convert each "
                       f"element (f32(v[i])), or load lines of f16/f32")
