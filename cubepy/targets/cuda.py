"""The CUDA C target (nvcc/NVRTC, sm_75+), run by the cuda runtime. Its atomics add
64-bit integers, f64 and f16/bf16 add to the portable ones (targets.WIDE_ATOMICS)."""
from __future__ import annotations

from .reserved import BY_TARGET
from . import (ALL_PLANE_OPS, ALL_TYPE_NAMES, DEFAULT_SHARED_BYTES, WIDE_ATOMICS,
               STANDARD_LINE_SIZES, STANDARD_PLANE_DTYPES, WIDE_PLANE_DTYPES, WMMA_SHAPES,
               Target, register)

CUDA = register(Target(
    name="cuda", title="CUDA", family="c", short="cu", lexer="cuda", shows_source=True,
    dtypes=ALL_TYPE_NAMES, replacements={},
    atomic_dtypes=WIDE_ATOMICS, plane_ops=ALL_PLANE_OPS,
    plane_dtypes=STANDARD_PLANE_DTYPES | WIDE_PLANE_DTYPES | {"bf16"},
    line_sizes=STANDARD_LINE_SIZES,
    bool_storage_bytes=1, default_shared_bytes=DEFAULT_SHARED_BYTES,
    needs_cube_count=False, reserved=BY_TARGET["cuda"],
    emitter="cubepy.codegen.cuda:emit_cuda", runtimes=("cuda",), vector_lines=True,
    async_copies=True,
    unroll_pragma="#pragma unroll",
    matrix_shapes=WMMA_SHAPES, warpgroup_mma=True,
))
