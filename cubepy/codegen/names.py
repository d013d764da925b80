"""Identifier mangling shared by every target: user names are kept where legal in all
targets, so the same kernel reads the same in CUDA, WGSL and MSL."""
from __future__ import annotations

import re

# Reserved in at least one target (C/C++/CUDA, WGSL incl. its reserved list, MSL).
RESERVED = frozenset("""
alignas alignof and and_eq asm atomic auto bitand bitor bool break case catch char
char8_t char16_t char32_t class compl concept const consteval constexpr constinit
const_cast continue co_await co_return co_yield decltype default delete do double
dynamic_cast else enum explicit export extern false float for friend goto if inline int
long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires return short signed sizeof static
static_assert static_cast struct switch template this thread_local throw true try
typedef typeid typename union unsigned using virtual void volatile wchar_t while xor
xor_eq restrict
__global__ __device__ __shared__ __host__ __constant__ threadIdx blockIdx blockDim
gridDim warpSize min max abs
alias array bitcast const_assert continuing diagnostic discard enable f16 f32 f64 fn
i32 i64 let loop mat2x2 mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2 mat4x3 mat4x4
override ptr requires sampler sampler_comparison select storage texture_1d texture_2d
texture_3d texture_cube u32 u64 uniform var vec2 vec3 vec4 workgroup function private
read write read_write shared NULL Self abstract active as async attribute await become
binding_array cast catch common compile compile_fragment demote demote_to_helper
do_not_optimize dyn enum external filter final finally friend from fxgroup get goto
groupshared highp impl implements import inout instanceof interface layout lowp macro
macro_rules match mediump meta mod module move mut noinline noperspective null
nullptr of packoffset partition pass patch pixelfragment precise precision premerge
priv protected pub public readonly ref regardless resource row_major samper self
set shared sizeof smooth snorm static subroutine super target template this
thread_local throw trait type typedef typeid typename typeof unless unorm unsafe
unsized use using varying virtual volatile wgsl where with writeonly yield
kernel device constant threadgroup thread metal half uint ushort uchar size_t ptrdiff_t
float2 float3 float4 int2 int3 int4 uint2 uint3 uint4 half2 half4 bfloat
info main
""".split())

_LEGAL = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def mangle(name: str) -> str:
    """A target-legal identifier for a user name: kept as is when legal everywhere, else
    suffixed with `_` (and stripped of leading underscores, which WGSL rejects)."""
    base = name.lstrip("_") or "v"
    if base[0].isdigit():
        base = "v" + base
    if base != name or base in RESERVED or not _LEGAL.match(base) or "__" in base \
            or base.startswith("cube_"):
        base = base.replace("__", "_") + "_"
        while base in RESERVED:
            base += "_"
    return base
