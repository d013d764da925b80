"""Metal Shading Language code generator: `emit_metal(kernel, abi, checked) -> str`.

Shares the C-like core (clike.py) with CUDA; this module holds MSL's tables and renders
templates/metal.j2. Buffers used atomically are declared with atomic element types
(`device atomic_uint*`); plain reads and writes of them go through atomic_load/store.
f64 never reaches here (the passes reject it for Metal).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import math

from ..abi import KernelABI
from ..errors import compile_error
from ..ir import nodes as n
from ..ir.dtype_facts import SPELLING, int_range
from ..ir.ops import LOWERED, AtomicOp, MathFn, SyncOp
from ..ir.types import DType, f32
from ..targets import get_target
from .clike import (EQ, PRIMARY, UNARY, CEmitter, Dialect, float_literal, render,
                    scalar_locals)
from . import clike_helpers as prelude_helpers
from .clike_bits import metal_bits
from .clike_cmma import SimdgroupSpelling
from .clike_dialect import LinePiece, vector_piece
from .clike_plane import metal_plane
from . import float_helpers
from .names import entry_name, field_name

if TYPE_CHECKING:
    from .compiled import Compiled

TARGET = "metal"

_TARGET = get_target(TARGET)
_TYPES = SPELLING[_TARGET.family]  # no f64 key: the passes reject f64 for Metal
_VECTOR_TYPES = frozenset({"f16", "f32", "i32", "u32", "i64", "u64"})  # of line accesses
# atomic_int, atomic_uint, atomic_float: the element types some atomic op supports
_ATOMIC_TYPES = {name: f"atomic_{_TYPES[name]}" for name in ("i32", "u32", "f32")
                 if any(name in d for d in _TARGET.atomic_dtypes.values())}
# metal::<name> for the math functions MSL has (ir/ops.py; rint rounds half to even, as
# every target does); clamp, degrees, radians and the float helpers are written below.
_MATH = {fn.value: name for fn in MathFn
         if (name := _TARGET.spelling(fn)) not in (None, LOWERED)}

_RESERVED = frozenset({"metal", "cube_info_t", "info", "atomic_int", "atomic_uint", "ulong",
                       "long", "ushort", "uchar", "half", "bfloat", "uint", "uint3",
                       "atomic_float", "memory_order_relaxed", "mem_flags", "as_type",
                       "threadgroup_barrier", "INFINITY", "NAN"})

_RELAXED = "memory_order_relaxed"


_SYNC_ARGS = {
    "sync_plane": "mem_flags::mem_threadgroup",
    "fence_cube": "mem_flags::mem_threadgroup | mem_flags::mem_device, "
                  "memory_order_seq_cst, thread_scope_threadgroup",
    "fence_device": "mem_flags::mem_device, memory_order_seq_cst, thread_scope_device"}


class MetalDialect(Dialect):
    """MSL 3.x."""

    name = "metal"
    fn_qual = "inline"
    types = _TYPES
    reserved = _RESERVED
    barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);"
    typed_atomics = True
    matrix = SimdgroupSpelling()

    def type_name(self, ty: DType) -> str:
        if ty.name not in _TYPES:
            compile_error(n.NO_LOC, f"{ty.name} is not available in Metal")
        return _TYPES[ty.name]

    int_suffixes = {"i32": "", "u32": "u", "i64": "l", "u64": "ul"}

    def literal(self, value, ty: DType) -> tuple[str, int]:
        if ty.is_bool or ty.is_int:
            return self.bool_or_int_literal(value, ty)
        v = float(value)
        if math.isnan(v):
            text, prec = "NAN", PRIMARY
        elif math.isinf(v):
            text, prec = ("INFINITY", PRIMARY) if v > 0 else ("-INFINITY", UNARY)
        else:
            text = float_literal(v, "f" if ty is f32 else "")
            prec = UNARY if text.startswith("-") else PRIMARY
        if ty is f32:
            return text, prec
        return f"{self.type_name(ty)}({text})", PRIMARY

    def plane(self, em: CEmitter, e: n.Plane) -> tuple[str, int]:
        return metal_plane(em, e)

    def line_piece(self, em: CEmitter, elem: DType, count: int,
                   space: str) -> LinePiece | None:
        # float4, half4, int2, long2, ... (4 components at most) in device memory;
        # bfloat vectors need MSL 3.1, so bf16 lines stay element by element, and so do
        # threadgroup arrays (declared without an alignment)
        if count > 4 or elem.name not in _VECTOR_TYPES or space != "global":
            return None
        t = f"{_TYPES[elem.name]}{count}"
        return vector_piece(t, count, t)

    def vector_pointer(self, ref: str, type_name: str, const: bool) -> str:
        return f"({'const ' if const else ''}device {type_name}*)(&{ref})"

    def bits(self, em: CEmitter, e: n.Bits) -> tuple[str, int]:
        return metal_bits(em, e)

    def sync(self, op: str) -> str:
        """simdgroup_barrier for sync_plane; the fences are MSL 3.2's
        atomic_thread_fence, sequentially consistent, at threadgroup or device scope."""
        if op in _SYNC_ARGS:
            fn = get_target("metal").spelling(SyncOp(op))
            return f"{fn}({_SYNC_ARGS[op]});"
        return super().sync(op)

    def unsigned_cast(self, em: CEmitter, index: n.Expr) -> str:
        return f"{'ulong' if index.ty.bits == 64 else 'uint'}({em.expr(index)})"

    def cast(self, em: CEmitter, e: n.Cast) -> tuple[str, int]:
        src, dst = e.operand.ty, e.ty
        if dst.is_bool:
            zero = self.literal(0, src)[0]
            return f"{em.expr_prec(e.operand, EQ + 1)} != {zero}", EQ
        if dst.is_int and src.is_float:
            arg = em.expr(e.operand) if src is f32 else f"float({em.expr(e.operand)})"
            return f"{_f2i_helper(em, dst)}({arg})", PRIMARY
        if src.name == "bf16" and dst.name != "f32" or dst.name == "bf16" and src.name != "f32":
            return f"{self.type_name(dst)}(float({em.expr(e.operand)}))", PRIMARY
        return f"{self.type_name(dst)}({em.expr(e.operand)})", PRIMARY

    def builtin(self, name: str) -> str:
        if name == "plane_dim":
            return "cube_simd_size"
        if name == "unit_pos_plane":
            return "cube_simd_lane"
        kind, axis = name.rsplit("_", 1)
        base = {"unit_pos": "cube_thread_pos", "cube_pos": "cube_group_pos",
                "cube_count": "cube_group_count", "cube_dim": "cube_group_size"}[kind]
        return f"{base}.{axis}"

    def math(self, em: CEmitter, func: str, args: list[str], arg_types: list[DType],
             ty: DType) -> str:
        ft = arg_types[0]
        if ft.name == "bf16" or (ft.name == "f16" and func in _FLOAT_ONLY):
            # no bfloat (or half helper) overloads: compute in float, round once
            inner = self.math(em, func, [f"float({a})" if t.is_float else a
                                         for a, t in zip(args, arg_types)],
                              [f32 if t.is_float else t for t in arg_types],
                              f32 if ty.is_float else ty)
            return f"{self.type_name(ft)}({inner})" if ty.is_float else inner
        if func in _MATH:
            return f"metal::{_MATH[func]}({', '.join(args)})"
        if func == "clamp" and not ft.is_float:
            return f"metal::min(metal::max({args[0]}, {args[1]}), {args[2]})"
        if func == "clamp":  # min(max(x, lo), hi) with NaN-ignoring max/min, as CUDA
            return f"metal::fmin(metal::fmax({args[0]}, {args[1]}), {args[2]})"
        if func in ("degrees", "radians"):
            factor = 180.0 / math.pi if func == "degrees" else math.pi / 180.0
            return f"({args[0]} * {self.literal(factor, ft)[0]})"
        if func in float_helpers.HELPERS:
            return f"{_float_helper(em, func)}({', '.join(args)})"
        compile_error(n.NO_LOC, f"math function {func!r} is not available in Metal")

    def minmax(self, em: CEmitter, op: str, a: str, b: str, ty: DType) -> str:
        if ty.is_float:
            return f"metal::f{op}({a}, {b})"  # fmax: the non-NaN operand
        return f"metal::{op}({a}, {b})"

    def abs(self, em: CEmitter, a: str, ty: DType) -> str:
        return f"metal::fabs({a})" if ty.is_float else f"metal::abs({a})"

    def float_divmod_helper(self, em: CEmitter, kind: str, ty: DType) -> str:
        name = f"cube_{kind}_{ty.name}"
        t = self.type_name(ty)
        if ty.name in ("bf16", "f16"):  # in float, rounded once (as numpy's float16)
            inner = self.float_divmod_helper(em, kind, f32)
            return prelude_helpers.float_divmod_via(em, name, t, "float", t, inner)
        # precise:: division and fmod (Metal compiles with fast math); + and - are IEEE,
        # and the algorithm has no product a fused multiply-add could absorb.
        ops = {"sub": "({} - {})", "add": "({} + {})", "div": "metal::precise::divide({}, {})",
               "fmod": "metal::precise::fmod", "floor": "metal::floor",
               "copysign": "metal::copysign", "zero": f"{t}(0)", "one": f"{t}(1)",
               "half": f"{t}(0.5)"}
        return em.helper(name, prelude_helpers.float_divmod_text(kind, name, t, ops))

    def atomic(self, em: CEmitter, s: n.AtomicOp, ptr: str, value: str | None,
               compare: str | None) -> str:
        t, op = s.buffer.elem, s.op
        space = "device" if s.buffer.space == "global" else "threadgroup"
        if t.name not in _ATOMIC_TYPES:
            compile_error(s.loc, f"Metal has no atomics on {t.name}")
        if op == "load":
            return self.atomic_load(ptr)
        if op == "store":
            return self.atomic_store(ptr, value or "")
        if op in ("inc", "dec"):
            return f"{_wrap_helper(em, op, space)}({ptr}, {value})"
        if op == "compare_exchange":
            return f"{_cas_helper(em, t, space)}({ptr}, {compare}, {value})"
        spelled = _TARGET.spelling(AtomicOp(op))  # atomic_fetch_<op>_explicit, ...
        if op == "exchange":
            return f"{spelled}({ptr}, {value}, {_RELAXED})"
        if t is f32 and op in ("min", "max"):
            return f"{_float_minmax_helper(em, op, space)}({ptr}, {value})"
        if t is f32 and op not in ("add", "sub"):
            compile_error(s.loc, f"atomic_{op} is not available on f32")
        return f"{spelled}({ptr}, {value}, {_RELAXED})"

    def atomic_load(self, ptr: str) -> str:
        return f"atomic_load_explicit({ptr}, {_RELAXED})"

    def atomic_store(self, ptr: str, value: str) -> str:
        return f"atomic_store_explicit({ptr}, {value}, {_RELAXED})"


def _f2i_helper(em: CEmitter, dst: DType) -> str:
    """float -> integer: truncate toward zero, saturate, NaN -> 0 (MSL leaves out-of-range
    conversions undefined)."""
    t = _TYPES[dst.name]
    low, high = int_range(dst)
    lo, hi = f"{low}.0f", f"{high + 1}.0f"  # the range as floats (the top one excluded)
    top = {"i32": "2147483647", "u32": "0xffffffffu", "i64": "9223372036854775807l",
           "u64": "0xfffffffffffffffful"}[dst.name]
    bottom = {"i32": "(-2147483647 - 1)", "u32": "0u", "i64": "(-9223372036854775807l - 1)",
              "u64": "0ul"}[dst.name]
    name = f"cube_cast_{dst.name}"
    return em.helper(name, f"""
{{fn}} {t} {name}(float x) {{
    if (metal::isnan(x)) return 0;
    if (x <= {lo}) return {bottom};
    if (x >= {hi}) return {top};
    return {t}(x);
}}""")


# LOWERED math functions computed by a float helper (no half or bfloat overloads)
_FLOAT_ONLY = frozenset(set(float_helpers.HELPERS) - set(_MATH))


def _float_helper(em: CEmitter, name: str) -> str:
    """`cube_<name>_f32`, the shared body (codegen/float_helpers.py), after its helpers."""
    for dep in float_helpers.HELPERS[name].deps:
        if dep not in float_helpers.MSL_BUILTIN_DEPS:
            _float_helper(em, dep)
    return em.helper(f"cube_{name}_f32", float_helpers.msl_text(name))


def _cas_helper(em: CEmitter, t: DType, space: str) -> str:
    """compare_exchange returning the old value (a strong CAS from the weak one)."""
    suffix = "" if space == "device" else "_tg"
    name = f"cube_atomic_cas_{t.name}{suffix}"
    at, vt = _ATOMIC_TYPES[t.name], _TYPES[t.name]
    if t is f32:  # compare bit patterns through the same word seen as atomic_uint
        return em.helper(name, f"""
{{fn}} float {name}({space} atomic_float* p, float expected, float v) {{
    {space} atomic_uint* bits = ({space} atomic_uint*)p;
    const uint want = as_type<uint>(expected);
    uint old = want;
    while (!atomic_compare_exchange_weak_explicit(bits, &old, as_type<uint>(v), {_RELAXED},
                                                  {_RELAXED})) {{
        if (old != want) break;
    }}
    return as_type<float>(old);
}}""")
    return em.helper(name, f"""
{{fn}} {vt} {name}({space} {at}* p, {vt} expected, {vt} v) {{
    {vt} old = expected;
    while (!atomic_compare_exchange_weak_explicit(p, &old, v, {_RELAXED}, {_RELAXED})) {{
        if (old != expected) break;  // a real mismatch: old holds the current value
    }}
    return old;
}}""")


def _wrap_helper(em: CEmitter, op: str, space: str) -> str:
    """atomic_inc/atomic_dec on u32 with CUDA's wrap-around (Metal has neither): inc
    stores old >= limit ? 0 : old + 1, dec (old == 0 || old > limit) ? limit : old - 1."""
    suffix = "" if space == "device" else "_tg"
    name = f"cube_atomic_{op}_u32{suffix}"
    wanted = ("old >= limit ? 0u : old + 1u" if op == "inc"
              else "(old == 0u || old > limit) ? limit : old - 1u")
    return em.helper(name, f"""
{{fn}} uint {name}({space} atomic_uint* p, uint limit) {{
    uint old = atomic_load_explicit(p, {_RELAXED});
    uint wanted;
    do {{  // a failed exchange reloads old
        wanted = {wanted};
    }} while (!atomic_compare_exchange_weak_explicit(p, &old, wanted, {_RELAXED},
                                                    {_RELAXED}));
    return old;
}}""")


def _float_minmax_helper(em: CEmitter, op: str, space: str) -> str:
    suffix = "" if space == "device" else "_tg"
    name = f"cube_atomic_{op}_f32{suffix}"
    return em.helper(name, f"""
{{fn}} float {name}({space} atomic_float* p, float v) {{
    {space} atomic_uint* bits = ({space} atomic_uint*)p;
    uint old = atomic_load_explicit(bits, {_RELAXED});
    while (true) {{
        const float current = as_type<float>(old);
        const uint wanted = as_type<uint>(metal::f{op}(current, v));
        if (wanted == old) return current;
        if (atomic_compare_exchange_weak_explicit(bits, &old, wanted, {_RELAXED},
                                                  {_RELAXED})) return current;
    }}
}}""")


def emit_metal(kernel: n.Kernel, abi: KernelABI, checked: bool) -> str:
    """MSL source of a specialised kernel: a `kernel void` taking the buffers at
    [[buffer(i)]] (ABI order), the info struct as `constant` at [[buffer(len)]] and the
    position attributes."""
    return generate_metal(kernel, abi, checked).source


def generate_metal(kernel: n.Kernel, abi: KernelABI, checked: bool) -> "Compiled":
    """The MSL of a specialised kernel (see emit_metal) with its entry name and needs."""
    from .compiled import make_compiled
    dialect = MetalDialect()
    em = CEmitter(kernel, abi, checked, dialect)
    em.walk(kernel.body)
    params = []
    for i, b in enumerate(abi.buffers):
        ref = n.BufferRef(b.name, b.dtype, "global")
        if b.name in em.atomic_buffers:
            elem = _ATOMIC_TYPES.get(b.dtype.name)
            if elem is None:
                compile_error(kernel.loc, f"Metal has no atomics on {b.dtype.name} "
                                          f"(parameter {b.name!r})")
            decl = f"device {elem}*"
        else:
            decl = f"{'const ' if b.read_only else ''}device {dialect.type_name(b.dtype)}*"
        params.append(f"{decl} {em.buffer(ref)} [[buffer({i})]]")
    if abi.has_info:
        params.append(f"constant cube_info_t& info [[buffer({abi.info_binding})]]")
    params += ["uint3 cube_thread_pos [[thread_position_in_threadgroup]]",
               "uint3 cube_group_pos [[threadgroup_position_in_grid]]",
               "uint3 cube_group_count [[threadgroups_per_grid]]",
               "uint3 cube_group_size [[threads_per_threadgroup]]"]
    if "unit_pos_plane" in em.positions_used:
        params.append("uint cube_simd_lane [[thread_index_in_simdgroup]]")
    if "plane_dim" in em.positions_used:
        params.append("uint cube_simd_size [[threads_per_simdgroup]]")
    fields = [f"{dialect.type_name(f.dtype)} {field_name(abi, TARGET, f.kind, f.param)}"
              + (f"[{f.count}]" if f.count > 1 else "") for f in abi.fields]
    entry = []
    for s in kernel.shared:
        elem = (_ATOMIC_TYPES[s.buffer.elem.name] if s.buffer.name in em.atomic_buffers
                else dialect.type_name(s.buffer.elem))
        entry.append(f"threadgroup {elem} {em.buffer(s.buffer)}[{s.size}];")
    entry += prelude_helpers.local_array_decls(kernel, em)
    entry += prelude_helpers.matrix_decls(kernel, em)
    entry += em.prologue
    entry += scalar_locals(kernel, abi, em)
    name = entry_name(kernel.name, TARGET)
    source = render("metal.j2", name=name, matrices=bool(kernel.matrices),
                    cube_dim=kernel.cube_dim, fields=fields, helpers=em.prelude.helpers,
                    params=params, entry=["    " + e for e in entry], body=em.lines,
                    checked=checked)
    return make_compiled(TARGET, kernel, abi, source, name)


emit_metal.record = generate_metal  # what codegen.generate calls for this target
