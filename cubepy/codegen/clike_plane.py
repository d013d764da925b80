"""Plane (warp / SIMD-group) operations for the C-like targets.

CUDA: reductions and scans run over the coalesced group of the units that execute the
call (cooperative groups), so divergent code and terminated units do not contribute;
shuffles use `__shfl_*_sync(__activemask(), ...)`. Metal: the `simd_*` functions, which
act on the active lanes. A bool travels through shuffles as an int.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.ops import PlaneOp
from ..ir.types import DType
from ..targets import get_target
from .clike import PRIMARY

if TYPE_CHECKING:
    from .clike import CEmitter


_CG = "cooperative_groups"


def _spelling(em: "CEmitter", op: str) -> str:
    """The target's function for plane op `op` (ir/ops.py: __shfl_*_sync, simd_*)."""
    return get_target(em.d.name).spelling(PlaneOp(op))


def _combine(em: "CEmitter", op: str, ty: DType) -> str:
    """A device lambda combining two values for cooperative groups' reduce/scan."""
    t = em.d.type_name(ty)
    if op in ("min", "max"):
        body = em.d.minmax(em, op, "a", "b", ty)  # the non-NaN operand, as min()/max()
    else:
        sym = "*" if op == "prod" else "+"
        if ty.is_int and ty.is_signed:  # wrap through unsigned (no signed overflow in C)
            body = f"({t})((unsigned int)a {sym} (unsigned int)b)"  # (i32 only)
        else:
            body = f"a {sym} b"
    return f"[]({t} a, {t} b) {{ return {body}; }}"


def cuda_plane(em: "CEmitter", e: n.Plane) -> tuple[str, int]:
    v = em.expr(e.value)
    if e.op in ("all", "any"):
        return f"(__{e.op}_sync(__activemask(), {v}) != 0)", PRIMARY
    if e.arg is not None:
        fn = _spelling(em, e.op)
        arg = em.expr(e.arg)
        if e.ty.is_bool:
            return f"({fn}(__activemask(), (int)({v}), {arg}) != 0)", PRIMARY
        return f"{fn}(__activemask(), {v}, {arg})", PRIMARY
    em.prelude.include("cooperative_groups.h")
    if e.op in ("inclusive_sum", "exclusive_sum"):
        em.prelude.include("cooperative_groups/scan.h")
        name = f"cube_plane_{e.op}"
        em.helper(name, _SCAN.replace("{name}", name).replace(
            "{result}", _EXCLUSIVE if e.op == "exclusive_sum" else "return r;"))
        return f"{name}({v}, {_combine(em, 'sum', e.ty)})", PRIMARY
    em.prelude.include("cooperative_groups/reduce.h")
    return (f"{_CG}::reduce({_CG}::coalesced_threads(), {v}, {_combine(em, e.op, e.ty)})",
            PRIMARY)


# Inclusive scan over the coalesced group; the exclusive one takes the previous unit's
# inclusive result (the first unit gets 0).
_SCAN = """
template <typename T, typename Op>
{fn} T {name}(T v, Op op) {
    const cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    const T r = cooperative_groups::inclusive_scan(g, v, op);
    {result}
}"""
_EXCLUSIVE = """const T before = g.shfl_up(r, 1);
    return g.thread_rank() == 0 ? T(0) : before;"""


def metal_plane(em: "CEmitter", e: n.Plane) -> tuple[str, int]:
    v = em.expr(e.value)
    fn = f"metal::{_spelling(em, e.op)}"
    if e.arg is None:
        return f"{fn}({v})", PRIMARY
    if e.op == "broadcast" and not isinstance(e.arg, n.Const):
        fn = "metal::simd_shuffle"  # simd_broadcast wants a lane uniform over the group
    arg = f"ushort({em.expr(e.arg)})"
    if e.ty.is_bool:
        return f"({fn}(uint({v}), {arg}) != 0u)", PRIMARY
    return f"{fn}({v}, {arg})", PRIMARY
