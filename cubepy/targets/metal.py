"""The Metal Shading Language target (MSL 3.x): source only, no runtime here."""
from __future__ import annotations

from .reserved import BY_TARGET
from . import (ALL_PLANE_OPS, ALL_TYPE_NAMES, DEFAULT_SHARED_BYTES, STANDARD_ATOMICS,
               STANDARD_LINE_SIZES, STANDARD_PLANE_DTYPES, SIMDGROUP_SHAPES, Target, register)

METAL = register(Target(
    name="metal", title="Metal", family="msl", short="mt", lexer="cpp", shows_source=True,
    dtypes=ALL_TYPE_NAMES - {"f64", "e4m3", "e5m2"},  # MSL has no 8-bit float
    replacements={"f64": "f32", "e4m3": "f16 or f32", "e5m2": "f16 or f32"},
    atomic_dtypes=STANDARD_ATOMICS, plane_ops=ALL_PLANE_OPS,
    plane_dtypes=STANDARD_PLANE_DTYPES, line_sizes=STANDARD_LINE_SIZES,
    bool_storage_bytes=1, default_shared_bytes=DEFAULT_SHARED_BYTES,
    needs_cube_count=False, reserved=BY_TARGET["metal"],
    emitter="cubepy.codegen.metal:emit_metal", runtimes=(), vector_lines=True,
    matrix_shapes=SIMDGROUP_SHAPES,
))
