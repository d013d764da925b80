"""Plane (warp / SIMD-group) operations for the C-like targets.

CUDA: reductions and scans run over the coalesced group of the units that execute the
call (cooperative groups), so divergent code and terminated units do not contribute;
shuffles and ballot use `__shfl_*_sync` / `__ballot_sync(__activemask(), ...)`, elect is
rank 0 of the coalesced group. Metal: the `simd_*` functions, which act on the active
lanes (a ballot is a 64-bit simd_vote). A bool travels through shuffles as an int.
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
            u = "unsigned long long" if ty.bits == 64 else "unsigned int"
            body = f"({t})(({u})a {sym} ({u})b)"
        else:
            body = f"a {sym} b"
    return f"[]({t} a, {t} b) {{ return {body}; }}"


def cuda_plane(em: "CEmitter", e: n.Plane) -> tuple[str, int]:
    v = em.expr(e.value)
    if e.op == "ballot":  # a warp has 32 lanes: word 0 holds them all
        if int(e.arg.value) != 0:
            return "0u", PRIMARY
        return f"__ballot_sync(__activemask(), {v})", PRIMARY
    if e.op == "elect":  # rank 0 of the coalesced group is its lowest active lane
        em.prelude.include("cooperative_groups.h")
        return f"({_CG}::coalesced_threads().thread_rank() == 0)", PRIMARY
    if e.op in ("all", "any"):
        return f"(__{e.op}_sync(__activemask(), {v}) != 0)", PRIMARY
    if e.arg is not None:
        fn = _spelling(em, e.op)
        arg = em.expr(e.arg)
        if e.ty.is_bool:
            return f"({fn}(__activemask(), (int)({v}), {arg}) != 0)", PRIMARY
        return f"{fn}(__activemask(), {v}, {arg})", PRIMARY
    em.prelude.include("cooperative_groups.h")
    if e.op in _SCANS:
        em.prelude.include("cooperative_groups/scan.h")
        name = f"cube_plane_{e.op}"
        combine, identity = _SCANS[e.op]
        em.helper(name, _SCAN.replace("{name}", name).replace(
            "{result}", _EXCLUSIVE.replace("{identity}", identity)
            if e.op.startswith("exclusive") else "return r;"))
        return f"{name}({v}, {_combine(em, combine, e.ty)})", PRIMARY
    em.prelude.include("cooperative_groups/reduce.h")
    return (f"{_CG}::reduce({_CG}::coalesced_threads(), {v}, {_combine(em, e.op, e.ty)})",
            PRIMARY)


# scan op -> (combining op, the first unit's exclusive result)
_SCANS = {"inclusive_sum": ("sum", "0"), "exclusive_sum": ("sum", "0"),
          "inclusive_prod": ("prod", "1"), "exclusive_prod": ("prod", "1")}
# Inclusive scan over the coalesced group; the exclusive one takes the previous unit's
# inclusive result (the first unit gets the identity: 0 for sums, 1 for products).
_SCAN = """
template <typename T, typename Op>
{fn} T {name}(T v, Op op) {
    const cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    const T r = cooperative_groups::inclusive_scan(g, v, op);
    {result}
}"""
_EXCLUSIVE = """const T before = g.shfl_up(r, 1);
    return g.thread_rank() == 0 ? T({identity}) : before;"""


def metal_plane(em: "CEmitter", e: n.Plane) -> tuple[str, int]:
    v = em.expr(e.value)
    fn = f"metal::{_spelling(em, e.op)}"
    if e.op == "elect":
        return f"{fn}()", PRIMARY
    if e.op == "ballot":  # a 64-bit vote: words 0 and 1 (SIMD-groups have <= 64 lanes)
        word = int(e.arg.value)
        if word > 1:
            return "0u", PRIMARY
        vote = f"static_cast<simd_vote::vote_t>({fn}({v}))"
        return f"uint({vote} >> {32 * word}u)" if word else f"uint({vote})", PRIMARY
    if e.arg is None:
        return f"{fn}({v})", PRIMARY
    if e.op == "broadcast" and not isinstance(e.arg, n.Const):
        fn = "metal::simd_shuffle"  # simd_broadcast wants a lane uniform over the group
    arg = f"ushort({em.expr(e.arg)})"
    if e.ty.is_bool:
        return f"({fn}(uint({v}), {arg}) != 0u)", PRIMARY
    return f"{fn}({v}, {arg})", PRIMARY
