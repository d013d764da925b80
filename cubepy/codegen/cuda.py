"""CUDA C code generator: `emit_cuda(kernel, abi, checked) -> str`.

The C-like core (clike.py) writes the body; this module holds CUDA's tables (types,
literals, casts, math, atomics) and renders the skeleton from templates/cuda.j2.
"""
from __future__ import annotations

import functools
import math
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING

from ..abi import MAX_LINE_ACCESS_BYTES, KernelABI
from ..errors import compile_error
from ..ir import nodes as n
from ..ir.dtype_facts import SPELLING
from ..ir.visit import matrix_buffers, swizzled_buffers, walk_stmts, warpgroup_buffers
from ..wgmma_layout import SWIZZLE_ALIGN as WGMMA_SWIZZLE_ALIGN
from ..wgmma_layout import TILE_ALIGN as WGMMA_TILE_ALIGN
from ..ir.ops import LOWERED, MathFn
from ..ir.types import DType, f32, f64
from ..targets import DEFAULT_SHARED_BYTES, WMMA_TILE_ALIGN, get_target
from .clike import (EQ, PRIMARY, UNARY, CEmitter, Dialect, float_literal, render,
                    scalar_locals)
from . import clike_helpers as prelude_helpers
from .clike_dialect import XYZW, LinePiece, vector_piece
from .names import entry_name, field_name

if TYPE_CHECKING:
    from .clike_cmma import MatrixSpelling
    from .compiled import Compiled

TARGET = "cuda"

_TARGET = get_target(TARGET)
_TYPES = SPELLING[_TARGET.family]

# Single-precision math names (ir/ops.py); double drops the `f` (see _math_name). The
# NaN-aware float max/min and fabs serve the max/min/abs operators.
_MATH_F32 = {**{fn.value: name for fn in MathFn
                if (name := _TARGET.spelling(fn)) not in (None, LOWERED)},
             "max": "fmaxf", "min": "fminf", "abs": "fabsf"}

# float -> integer conversions that truncate toward zero, saturate and map NaN to 0.
_F2I_SUFFIX = {"i32": "int", "u32": "uint", "i64": "ll", "u64": "ull"}
# integer -> half/bfloat16 conversions rounding to nearest (one rounding step).
_I2H_PREFIX = {"i32": "int", "u32": "uint", "i64": "ll", "u64": "ull"}

_HALF = {"f16": ("__half2float", "__float2half_rn", "__double2half"),
         "bf16": ("__bfloat162float", "__float2bfloat16_rn", "__double2bfloat16")}

_FP8 = frozenset({"e4m3", "e5m2"})  # storage types: converted through float

_RESERVED = frozenset(set(_MATH_F32.values()) | {v[:-1] for v in _MATH_F32.values()} | {
    "isnan", "isinf", "fmax", "fmin", "fabs", "rint", "llabs", "atomicAdd", "atomicSub",
    "atomicMin", "atomicMax", "atomicAnd", "atomicOr", "atomicXor", "atomicExch",
    "atomicCAS", "atomicInc", "atomicDec", "__syncthreads", "cube_info_t", "info", "uint",
    "half"})


@functools.lru_cache(maxsize=None)
def _wmma_spelling() -> MatrixSpelling:
    from .clike_cmma import WmmaSpelling
    return WmmaSpelling()


class CudaDialect(Dialect):
    """CUDA C (nvcc/NVRTC, sm_75+)."""

    name = "cuda"
    fn_qual = "__device__ __forceinline__"
    types = _TYPES
    reserved = _RESERVED
    barrier = "__syncthreads();"
    native_lane = False
    # The code of features most kernels lack (matrix units, asynchronous copies, plane
    # operations, bit functions, atomics) is imported where a kernel first uses one, so
    # that a process's first compile of a plain kernel does not load it.

    @property
    def matrix(self) -> MatrixSpelling:
        """wmma's spelling of cmma statements (clike_cmma.py)."""
        return _wmma_spelling()

    @property
    def pipeline(self) -> ModuleType:
        """The asynchronous copies' spelling (cuda_async.py)."""
        from . import cuda_async
        return cuda_async

    def literal(self, value, ty: DType) -> tuple[str, int]:
        if ty.is_bool or ty.is_int:
            return self.bool_or_int_literal(value, ty)
        v = float(value)
        if ty.name in _HALF or ty.name in _FP8:
            return f"{_TYPES[ty.name]}({self.literal(v, f32)[0]})", PRIMARY
        if math.isnan(v) or math.isinf(v):
            bits = {("f32", "nan"): "__int_as_float(0x7fffffff)",
                    ("f32", "inf"): "__int_as_float(0x7f800000)",
                    ("f32", "-inf"): "__int_as_float(0xff800000)",
                    ("f64", "nan"): "__longlong_as_double(0x7ff8000000000000ll)",
                    ("f64", "inf"): "__longlong_as_double(0x7ff0000000000000ll)",
                    ("f64", "-inf"): "__longlong_as_double(0xfff0000000000000ll)"}
            return bits[(ty.name, repr(v))], PRIMARY
        text = float_literal(v, "f" if ty is f32 else "")
        return text, (UNARY if text.startswith("-") else PRIMARY)

    def plane(self, em: CEmitter, e: n.Plane) -> tuple[str, int]:
        from .clike_plane import cuda_plane
        return cuda_plane(em, e)

    def bits(self, em: CEmitter, e: n.Bits) -> tuple[str, int]:
        from .clike_bits import cuda_bits
        return cuda_bits(em, e)

    def unsigned_cast(self, em: CEmitter, index: n.Expr) -> str:
        t = _TYPES["u64" if index.ty.bits == 64 else "u32"]
        return f"({t}){em.expr_prec(index, UNARY)}"

    def _to_float(self, em: CEmitter, e: n.Expr) -> str:
        """`e` (any float type) as a float/double expression for libm calls."""
        if e.ty.name in _HALF:
            return f"{_HALF[e.ty.name][0]}({em.expr(e)})"
        return em.expr(e)

    def cast(self, em: CEmitter, e: n.Cast) -> tuple[str, int]:
        src, dst = e.operand.ty, e.ty
        if src.name in _FP8 or dst.name in _FP8:
            return self._fp8_cast(em, e)
        if dst.is_bool:
            if src.name in _HALF:
                return f"{_HALF[src.name][0]}({em.expr(e.operand)}) != 0.0f", EQ
            zero = self.literal(0, src)[0]
            return f"{em.expr_prec(e.operand, EQ + 1)} != {zero}", EQ
        if dst.is_int and src.is_float:
            fn = "__double2" if src is f64 else "__float2"
            return f"{fn}{_F2I_SUFFIX[dst.name]}_rz({self._to_float(em, e.operand)})", PRIMARY
        if dst.name in _HALF:
            to_f, from_f, from_d = _HALF[dst.name]
            if src.is_int:
                fn = "int2half_rn" if dst.name == "f16" else "int2bfloat16_rn"
                fn = f"__{_I2H_PREFIX[src.name]}{fn[3:]}"
                return f"{fn}({em.expr(e.operand)})", PRIMARY
            if src is f64:
                return f"{from_d}({em.expr(e.operand)})", PRIMARY
            if src.is_bool:
                return f"{from_f}({em.expr_prec(e.operand, UNARY)} ? 1.0f : 0.0f)", PRIMARY
            return f"{from_f}({self._to_float(em, e.operand)})", PRIMARY
        if src.name in _HALF:  # to f32 / f64
            text = self._to_float(em, e.operand)
            return (text, PRIMARY) if dst is f32 else (f"(double){text}", UNARY)
        return f"({_TYPES[dst.name]}){em.expr_prec(e.operand, UNARY)}", UNARY

    def _fp8_cast(self, em: CEmitter, e: n.Cast) -> tuple[str, int]:
        """A conversion from or to an 8-bit float, through float: cuda_fp8.h's
        `float(x)` is exact, and its constructor from float rounds to nearest even and
        saturates (__NV_SATFINITE), as cubepy.fp8 does on the host. The other
        conversions go on from or to f32 as any f32 value does."""
        src, dst = e.operand.ty, e.ty
        if src.name in _FP8:  # widen to f32 first: then any target type, as from f32
            if dst is f32:
                return f"float({em.expr(e.operand)})", PRIMARY
            wide = n.Cast(ty=f32, operand=e.operand, loc=e.loc)
            return self.cast(em, n.Cast(ty=dst, operand=wide, loc=e.loc))
        operand = e.operand
        if src is not f32 and src is not f64:  # ints, bool, halves: to f32 first
            operand = n.Cast(ty=f32, operand=operand, loc=e.loc)
        return f"{_TYPES[dst.name]}({em.expr(operand)})", PRIMARY

    def builtin(self, name: str) -> str:
        if name == "plane_dim":
            return "warpSize"
        kind, axis = name.rsplit("_", 1)
        base = {"unit_pos": "threadIdx", "cube_pos": "blockIdx", "cube_count": "gridDim",
                "cube_dim": "blockDim"}[kind]
        return f"{base}.{axis}"

    def math(self, em: CEmitter, func: str, args: list[str], arg_types: list[DType],
             ty: DType) -> str:
        ft = arg_types[0]
        if ft.name in _HALF:  # compute in float, round once back to the half type
            to_f, from_f, _ = _HALF[ft.name]
            fargs = [f"{to_f}({a})" if t.is_float else a for a, t in zip(args, arg_types)]
            ftypes = [f32 if t.is_float else t for t in arg_types]
            inner = self.math(em, func, fargs, ftypes, f32 if ty.is_float else ty)
            return f"{from_f}({inner})" if ty.is_float else inner
        if func in ("isnan", "isinf", "isfinite"):
            return f"{func}({args[0]})"
        if func in ("degrees", "radians"):
            return f"({args[0]} * {_angle_factor(func, ft)})"
        if func == "frexp_exp":
            return f"{_frexp_exp_helper(em, ft)}({args[0]})"
        if func == "clamp":
            lo = self.minmax(em, "max", args[0], args[1], ft)
            return self.minmax(em, "min", lo, args[2], ft)
        if func not in _MATH_F32:
            compile_error(n.NO_LOC, f"math function {func!r} is not available in CUDA")
        return f"{_math_name(func, ft)}({', '.join(args)})"

    def minmax(self, em: CEmitter, op: str, a: str, b: str, ty: DType) -> str:
        if ty.name in _HALF:
            return f"__h{op}({a}, {b})"  # returns the non-NaN operand
        if ty.is_float:
            return f"{_math_name(op, ty)}({a}, {b})"  # fmaxf: the non-NaN operand
        if ty.name == "i32":
            return f"{_int_minmax_helper(em, op)}({a}, {b})"
        return f"{op}({a}, {b})"

    def abs(self, em: CEmitter, a: str, ty: DType) -> str:
        if ty.name in _HALF:
            return f"__habs({a})"
        if ty.is_float:
            return f"{_math_name('abs', ty)}({a})"
        return f"llabs({a})" if ty.bits == 64 else f"abs({a})"

    def float_divmod_helper(self, em: CEmitter, kind: str, ty: DType) -> str:
        name = f"cube_{kind}_{ty.name}"
        t = _TYPES[ty.name]
        if ty.name in _HALF:  # in float, rounded once (numpy's half does the same)
            to_f, from_f, _ = _HALF[ty.name]
            inner = self.float_divmod_helper(em, kind, f32)
            return prelude_helpers.float_divmod_via(em, name, t, to_f, from_f, inner)
        # __f*_rn / __d*_rn: IEEE round-to-nearest, never contracted or approximated
        r = "f" if ty is f32 else "d"
        lit = "f" if ty is f32 else ""
        ops = {"sub": f"__{r}sub_rn({{}}, {{}})", "add": f"__{r}add_rn({{}}, {{}})",
               "div": f"__{r}div_rn({{}}, {{}})",
               "fmod": f"fmod{lit}", "floor": f"floor{lit}",
               "copysign": f"copysign{lit}", "zero": f"0.0{lit}",
               "one": f"1.0{lit}", "half": f"0.5{lit}"}
        return em.helper(name, prelude_helpers.float_divmod_text(kind, name, t, ops))

    def atomic(self, em: CEmitter, s: n.AtomicOp, ptr: str, value: str | None,
               compare: str | None) -> str:
        from .cuda_atomics import cuda_atomic
        return cuda_atomic(em, s, ptr, value, compare)

    def line_piece(self, em: CEmitter, elem: DType, count: int,
                   space: str) -> LinePiece | None:
        if elem.name in _VECTOR_BASE:  # float4, int2, double2, ...: .x .y .z .w
            t = f"{_VECTOR_BASE[elem.name]}{count}"
            return vector_piece(t, count, f"make_{t}")
        if elem.name in _HALF:  # pairs of halves in 32-bit words: unsigned int, uint2, uint4
            return _half_words(em, elem, count // 2)
        return None

    def vector_pointer(self, ref: str, type_name: str, const: bool) -> str:
        return f"reinterpret_cast<{'const ' if const else ''}{type_name}*>(&{ref})"


# CUDA's vector types by element type (float4, longlong2, ...), for line accesses.
_VECTOR_BASE = {"f32": "float", "i32": "int", "u32": "uint", "f64": "double",
                "i64": "longlong", "u64": "ulonglong"}
# a half type <-> its 16 bits
_HALF_BITS = {"f16": ("__ushort_as_half", "__half_as_ushort"),
              "bf16": ("__ushort_as_bfloat16", "__bfloat16_as_ushort")}


def _half_words(em: CEmitter, elem: DType, words: int) -> LinePiece:
    """`2 * words` f16/bf16 elements in `words` 32-bit words: element 2w is the low half
    of word w (little-endian), 2w + 1 the high half; the helpers move bits, no rounding."""
    t, (from_bits, to_bits) = _TYPES[elem.name], _HALF_BITS[elem.name]
    lo = em.helper(f"cube_{elem.name}_lo", f"""
{{fn}} {t} cube_{elem.name}_lo(unsigned int w) {{
    return {from_bits}((unsigned short)(w & 0xffffu));
}}""")
    hi = em.helper(f"cube_{elem.name}_hi", f"""
{{fn}} {t} cube_{elem.name}_hi(unsigned int w) {{
    return {from_bits}((unsigned short)(w >> 16));
}}""")
    pair = em.helper(f"cube_{elem.name}_pair", f"""
{{fn}} unsigned int cube_{elem.name}_pair({t} lo, {t} hi) {{
    return (unsigned int){to_bits}(lo) | (unsigned int){to_bits}(hi) << 16;
}}""")
    word_type = "unsigned int" if words == 1 else f"uint{words}"

    def get(v: str, k: int) -> str:
        word = v if words == 1 else f"{v}.{XYZW[k // 2]}"
        return f"{hi if k % 2 else lo}({word})"

    def make(values: list[str]) -> str:
        pairs = [f"{pair}({values[2 * w]}, {values[2 * w + 1]})" for w in range(words)]
        return pairs[0] if words == 1 else f"make_uint{words}({', '.join(pairs)})"
    return LinePiece(word_type, get, make)


def _int_minmax_helper(em: CEmitter, op: str) -> str:
    """`cube_min_i32` / `cube_max_i32`: i32 min/max as inline PTX. ptxas (CUDA 13.0,
    sm_90) fuses `min(a, min(-b, c))` (and max) from NVVM's min.s32 into one VIMNMX3 and
    drops the negation of b (seen on an H200: min(14, min(-3, 0)) gave 0; the SASS has
    no IADD3/IMAD.MOV of -b); from inline PTX it keeps the negation. The regression test
    is tests/test_float_divmod.py::test_cuda_negated_min_operand."""
    name = f"cube_{op}_i32"
    return em.helper(name, f"""
{{fn}} int {name}(int a, int b) {{
    int r;
    asm("{op}.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}}""")


def _angle_factor(func: str, ty: DType) -> str:
    """180/pi or pi/180 as a literal of `ty` (Python's degrees/radians multiply by it)."""
    return float_literal(180.0 / math.pi if func == "degrees" else math.pi / 180.0,
                         "f" if ty is f32 else "")


def _frexp_exp_helper(em: CEmitter, ty: DType) -> str:
    # frexp's exponent; 0 for inf and NaN (where C leaves it unspecified), as Python
    t, fn = ("float", "frexpf") if ty is f32 else ("double", "frexp")
    return em.helper(f"cube_frexp_exp_{ty.name}", f"""
{{fn}} int cube_frexp_exp_{ty.name}({t} x) {{
    int e = 0;
    {fn}(x, &e);
    return isfinite(x) ? e : 0;
}}""")


def _math_name(func: str, ty: DType) -> str:
    name = _MATH_F32[func]
    return name if ty is f32 else name[:-1]


def emit_cuda(kernel: n.Kernel, abi: KernelABI, checked: bool) -> str:
    """CUDA C source of a specialised kernel: `extern "C" __global__` entry taking the
    buffers (ABI order) and the info struct by value."""
    return generate_cuda(kernel, abi, checked).source


def generate_cuda(kernel: n.Kernel, abi: KernelABI, checked: bool) -> "Compiled":
    """The CUDA C of a specialised kernel (see emit_cuda) with its entry name and needs."""
    from .compiled import make_compiled
    dialect = CudaDialect()
    em = CEmitter(kernel, abi, checked, dialect)
    em.walk(kernel.body)
    types = {b.dtype.name for b in abi.buffers} | {f.dtype.name for f in abi.fields}
    types |= {p.dtype.name for p in kernel.params}  # (a bf16 scalar travels as f32)
    types |= {s.buffer.elem.name for s in kernel.shared} | _body_types(kernel)
    types |= {d.buffer.elem.name for d in kernel.local_arrays}
    types |= {d.elem for d in kernel.matrices}
    includes = ["mma.h"] if kernel.matrices else []
    if "f16" in types:
        includes.append("cuda_fp16.h")
    if "bf16" in types:
        includes.append("cuda_bf16.h")
    if types & {"e4m3", "e5m2"}:
        includes.append("cuda_fp8.h")
    includes += em.prelude.includes  # cooperative groups for plane operations
    params = []
    for b in abi.buffers:
        const = "const " if b.read_only else ""
        params.append(f"{const}{_TYPES[b.dtype.name]}* __restrict__ {em.buffer(b_ref(b))}")
    if abi.has_info:
        params.append("const cube_info_t info")
    fields = [f"{_TYPES[f.dtype.name]} {field_name(abi, TARGET, f.kind, f.param)}"
              + (f"[{f.count}]" if f.count > 1 else "") for f in abi.fields]
    staging = _cmma_staging_bytes(kernel, checked)  # a static array of its own
    dynamic = _carved_shared_bytes(kernel, staging)
    entry = _entry_lines(kernel, abi, em, dynamic > 0)
    name = entry_name(kernel.name, TARGET)
    source = render("cuda.j2", name=name,
                    units=kernel.units_per_cube, cube_dim=kernel.cube_dim,
                    includes=includes, fields=fields, helpers=em.prelude.helpers,
                    params=params, entry=entry, body=em.lines, checked=checked)
    compiled = make_compiled(TARGET, kernel, abi, source, name, dynamic_shared_bytes=dynamic)
    return replace(compiled, shared_bytes=compiled.shared_bytes + staging) if staging \
        else compiled


emit_cuda.record = generate_cuda  # what codegen.generate calls for this target


def b_ref(b) -> n.BufferRef:
    return n.BufferRef(b.name, b.dtype, "global")


# Static __shared__ arrays may take 48 KB per block in all; beyond that a kernel needs
# dynamic shared memory and the MAX_DYNAMIC_SHARED_SIZE_BYTES attribute (the opt-in).
STATIC_SHARED_LIMIT = DEFAULT_SHARED_BYTES
# Carved arrays start at multiples of this: enough for wmma tiles and 16-byte lines.
CARVE_ALIGN = max(WMMA_TILE_ALIGN, MAX_LINE_ACCESS_BYTES)
SHARED_BASE = "cube_smem"  # the extern array the carved arrays point into


def _carve_offsets(kernel: n.Kernel) -> tuple[list[int], int]:
    """Each shared array's byte offset in one dynamic block, and the block's size."""
    offsets, end = [], 0
    wgmma_tiles = warpgroup_buffers(kernel)
    swizzled = swizzled_buffers(kernel)
    for s in kernel.shared:
        align = (WGMMA_SWIZZLE_ALIGN if s.buffer.name in swizzled else
                 WGMMA_TILE_ALIGN if s.buffer.name in wgmma_tiles else CARVE_ALIGN)
        end = -(-end // align) * align
        offsets.append(end)
        end += s.size * s.buffer.elem.itemsize  # CUDA stores a bool in one byte
    return offsets, end


def _cmma_staging_bytes(kernel: n.Kernel, checked: bool) -> int:
    """cuda_cmma_staging.staging_bytes, its module imported for a kernel with cmma loads or
    stores only (so not by a plain kernel's first compile)."""
    if not checked or not any(isinstance(s, (n.MatrixLoad, n.MatrixStore))
                              for s in walk_stmts(kernel.body)):
        return 0
    from .cuda_cmma_staging import staging_bytes
    return staging_bytes(kernel, checked)


def _aligned_shared(kernel: n.Kernel) -> set[str]:
    """The shared arrays some whole-line access or asynchronous copy (cp.async needs
    the copy's size as alignment) uses: declared aligned to 16 bytes."""
    out = {s.buffer.name for s in walk_stmts(kernel.body)
           if isinstance(s, (n.LoadLine, n.StoreLine)) and s.buffer.space == "shared"}
    return out | {s.dst.name for s in walk_stmts(kernel.body) if isinstance(s, n.AsyncCopy)}


def _carved_shared_bytes(kernel: n.Kernel, staging: int = 0) -> int:
    """Bytes of dynamic shared memory the launch must give: 0 while the arrays and the
    cmma staging tiles (`staging` bytes, always static) fit the static 48 KB (the arrays
    stay static `__shared__` arrays), else the carved block's size."""
    _, end = _carve_offsets(kernel)
    if swizzled_buffers(kernel):  # room to move the block's start to a 1024-byte bound
        end += WGMMA_SWIZZLE_ALIGN
    total = sum(s.size * s.buffer.elem.itemsize for s in kernel.shared) + staging
    return end if kernel.shared and total > STATIC_SHARED_LIMIT else 0


def _shared_decls(kernel: n.Kernel, em: CEmitter, carved: bool) -> list[str]:
    """The shared arrays: static `__shared__` arrays, or (`carved`) pointers into one
    `extern __shared__` block at offsets aligned to 32 bytes, under the same names."""
    if carved:
        offsets, _ = _carve_offsets(kernel)
        lines = [f"extern __shared__ __align__(128) unsigned char {SHARED_BASE}[];"]
        base = SHARED_BASE
        if swizzled_buffers(kernel):
            # the block's start need not be 1024-byte aligned: moved on to a bound
            # (the launch gives the bytes) for the swizzled tiles' atoms
            base = f"{SHARED_BASE}_1k"
            lines.append(f"unsigned char* const {base} = {SHARED_BASE} + (("
                         f"{WGMMA_SWIZZLE_ALIGN}u - ((unsigned)__cvta_generic_to_shared("
                         f"{SHARED_BASE}) & {WGMMA_SWIZZLE_ALIGN - 1}u)) & "
                         f"{WGMMA_SWIZZLE_ALIGN - 1}u);")
        for s, offset in zip(kernel.shared, offsets):
            ty = _TYPES[s.buffer.elem.name]
            lines.append(f"{ty}* const {em.buffer(s.buffer)} = "
                         f"reinterpret_cast<{ty}*>({base} + {offset});")
        return lines
    vector = _aligned_shared(kernel)  # read and written a whole line at a time
    tiles = matrix_buffers(kernel, "shared")  # wmma needs 32-byte aligned tiles
    wgmma_tiles = warpgroup_buffers(kernel)  # and wgmma's shared tiles 128
    swizzled = swizzled_buffers(kernel)  # or 1024, those read with the 128-byte swizzle
    lines = []
    for s in kernel.shared:
        align = (f"__align__({WGMMA_SWIZZLE_ALIGN}) " if s.buffer.name in swizzled else
                 f"__align__({WGMMA_TILE_ALIGN}) " if s.buffer.name in wgmma_tiles else
                 f"__align__({WMMA_TILE_ALIGN}) " if s.buffer.name in tiles else
                 f"__align__({MAX_LINE_ACCESS_BYTES}) " if s.buffer.name in vector else "")
        lines.append(f"__shared__ {align}{_TYPES[s.buffer.elem.name]} {em.buffer(s.buffer)}"
                     f"[{s.size}];")
    return lines


def _entry_lines(kernel: n.Kernel, abi: KernelABI, em: CEmitter,
                 carved: bool = False) -> list[str]:
    """Declarations at kernel entry: shared arrays, builtins, scalar parameters."""
    lines = _shared_decls(kernel, em, carved)
    lines.extend(prelude_helpers.local_array_decls(kernel, em))
    lines.extend(prelude_helpers.matrix_decls(kernel, em))
    lines.extend(em.prologue)
    lines.extend(scalar_locals(kernel, abi, em))
    return ["    " + line for line in lines]


def _body_types(kernel: n.Kernel) -> set[str]:
    from ..ir.visit import walk_all_exprs
    return {e.ty.name for e in walk_all_exprs(kernel.body)}
