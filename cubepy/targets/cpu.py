"""The cpu runtime's target: numpy code run in this process. Its source is an
implementation detail (not offered by Kernel.source or `cubepy emit`). Its atomics are
CUDA's (32- and 64-bit integers, f16/f32/f64 add and sub, f32/f64 min/max/exchange), less
bf16, which it does not have: it is the reference the GPU runtimes are tested against."""
from __future__ import annotations

from . import (ALL_PLANE_OPS, ALL_TYPE_NAMES, DEFAULT_SHARED_BYTES, SIMDGROUP_SHAPES,
               STANDARD_LINE_SIZES, STANDARD_PLANE_DTYPES, WIDE_ATOMICS, WIDE_PLANE_DTYPES,
               WMMA_SHAPES, Target, register)

_ATOMICS = {op: types - {"bf16"} for op, types in WIDE_ATOMICS.items()}
# cmma: emulated in numpy, so every shape CUDA or Metal has (bf16 aside, which the cpu
# runtime lacks)
_MATRIX_SHAPES = {pair: (WMMA_SHAPES.get(pair, frozenset())
                         | SIMDGROUP_SHAPES.get(pair, frozenset()))
                  for pair in {*WMMA_SHAPES, *SIMDGROUP_SHAPES} if "bf16" not in pair}

CPU = register(Target(
    name="cpu", title="the cpu runtime", family="numpy", short="py", lexer="python",
    shows_source=False, dtypes=ALL_TYPE_NAMES - {"bf16"}, replacements={"bf16": "f32 or f16"},
    atomic_dtypes=_ATOMICS, plane_ops=ALL_PLANE_OPS,
    plane_dtypes=STANDARD_PLANE_DTYPES | WIDE_PLANE_DTYPES, line_sizes=STANDARD_LINE_SIZES,
    bool_storage_bytes=1, default_shared_bytes=DEFAULT_SHARED_BYTES,
    needs_cube_count=False, reserved=frozenset(),
    emitter="cubepy.codegen.numpy_gen:compile_kernel", runtimes=("cpu",),
    matrix_shapes=_MATRIX_SHAPES, warpgroup_mma=True,  # emulated (runtime/cpu_cmma.py)
))
