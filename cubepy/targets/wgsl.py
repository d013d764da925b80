"""The WGSL target, run by the wgpu runtime. WGSL has no 64-bit or bfloat16 types and
no cube-count builtin (the launch ABI passes it); a bool buffer element is a u32."""
from __future__ import annotations

from .reserved import BY_TARGET
from . import (ALL_PLANE_OPS, DEFAULT_SHARED_BYTES, STANDARD_ATOMICS, STANDARD_LINE_SIZES,
               STANDARD_PLANE_DTYPES, Target, register)

WGSL = register(Target(
    name="wgsl", title="WGSL", family="wgsl", short="wg", lexer="wgsl", shows_source=True,
    dtypes=frozenset({"f16", "f32", "i32", "u32", "bool"}),
    replacements={"f64": "f32", "i64": "i32", "u64": "u32", "bf16": "f32 or f16",
                  "e4m3": "f16 or f32", "e5m2": "f16 or f32"},
    atomic_dtypes=STANDARD_ATOMICS, plane_ops=ALL_PLANE_OPS,
    plane_dtypes=STANDARD_PLANE_DTYPES, line_sizes=STANDARD_LINE_SIZES,
    bool_storage_bytes=4, default_shared_bytes=DEFAULT_SHARED_BYTES,
    needs_cube_count=True, reserved=BY_TARGET["wgsl"],
    emitter="cubepy.codegen.wgsl:emit_wgsl", runtimes=("wgpu",), vector_lines=True,
    # fence_cube is written as storageBarrier + workgroupBarrier, which WGSL allows only
    # in uniform control flow
    uniform_syncs=frozenset({"sync_cube", "fence_cube"}),
    op_advice={"cmma": (
        "WebGPU exposes none (Chromium's experimental subgroup matrices are not in WGSL "
        "as wgpu accepts it); multiply with shared-memory tiles instead, or run on CUDA, "
        "Metal or the cpu runtime"),
        "sync.fence_device": (
        "its barriers order memory within one workgroup only and its atomics are "
        "relaxed, so nothing orders memory between cubes; split the work into two "
        "launches, or use atomics alone for what other cubes read")},
))
