"""Plane (warp / SIMD-group) operations for the C-like targets.

CUDA: reductions and scans run over the coalesced group of the units that execute the
call (cooperative groups), so divergent code and terminated units do not contribute;
shuffles use `__shfl_*_sync(__activemask(), ...)`. Metal: the `simd_*` functions, which
act on the active lanes. A bool travels through shuffles as an int.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.types import DType
from .clike import PRIMARY

if TYPE_CHECKING:
    from .clike import CEmitter


_CG = "cooperative_groups"
_CUDA_SHUFFLE = {"broadcast": "__shfl_sync", "shuffle": "__shfl_sync",
                 "shuffle_xor": "__shfl_xor_sync", "shuffle_up": "__shfl_up_sync",
                 "shuffle_down": "__shfl_down_sync"}
_METAL = {"sum": "simd_sum", "prod": "simd_product", "min": "simd_min", "max": "simd_max",
          "all": "simd_all", "any": "simd_any", "inclusive_sum": "simd_prefix_inclusive_sum",
          "exclusive_sum": "simd_prefix_exclusive_sum", "broadcast": "simd_broadcast",
          "shuffle": "simd_shuffle", "shuffle_xor": "simd_shuffle_xor",
          "shuffle_up": "simd_shuffle_up", "shuffle_down": "simd_shuffle_down"}


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
        fn = _CUDA_SHUFFLE[e.op]
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
    fn = f"metal::{_METAL[e.op]}"
    if e.arg is None:
        return f"{fn}({v})", PRIMARY
    if e.op == "broadcast" and not isinstance(e.arg, n.Const):
        fn = "metal::simd_shuffle"  # simd_broadcast wants a lane uniform over the group
    arg = f"ushort({em.expr(e.arg)})"
    if e.ty.is_bool:
        return f"({fn}(uint({v}), {arg}) != 0u)", PRIMARY
    return f"{fn}({v}, {arg})", PRIMARY
