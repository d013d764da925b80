"""Every public name of shared/API.md exists with the documented shape."""
from __future__ import annotations

import pytest

import cubepy

API_NAMES = """
cube Tensor Array Comptime Float Int UInt Numeric f16 bf16 f32 f64 i32 i64 u32 u64 bool_
ABSOLUTE_POS ABSOLUTE_POS_X ABSOLUTE_POS_Y ABSOLUTE_POS_Z UNIT_POS UNIT_POS_X UNIT_POS_Y
UNIT_POS_Z CUBE_POS CUBE_POS_X CUBE_POS_Y CUBE_POS_Z CUBE_DIM CUBE_DIM_X CUBE_DIM_Y CUBE_DIM_Z
CUBE_COUNT CUBE_COUNT_X CUBE_COUNT_Y CUBE_COUNT_Z PLANE_DIM UNIT_POS_PLANE terminate sync_cube
SharedMemory unroll select CubeCount CubeDim CompileError LaunchError client generic
atomic_add atomic_sub atomic_min atomic_max atomic_and atomic_or atomic_xor atomic_exchange
atomic_compare_exchange plane_sum plane_prod plane_min plane_max plane_all plane_any
plane_broadcast plane_shuffle plane_shuffle_xor plane_shuffle_up plane_shuffle_down
plane_inclusive_sum plane_exclusive_sum Line
""".split()

MATH_NAMES = """exp exp2 log log2 sqrt rsqrt sin cos tan tanh asin acos atan atan2 sinh cosh
pow hypot floor ceil round trunc erf fma clamp isnan isinf""".split()


@pytest.mark.parametrize("name", API_NAMES)
def test_public_name_exists(name):
    assert getattr(cubepy, name, None) is not None, f"cubepy.{name} is missing"


@pytest.mark.parametrize("name", MATH_NAMES)
def test_math_intrinsic_exists(name):
    assert callable(getattr(cubepy.math, name))


def test_intrinsics_refuse_host_calls():
    with pytest.raises(TypeError, match="inside a @cube"):
        cubepy.sync_cube()
    with pytest.raises(TypeError):
        cubepy.math.exp(1.0)


def test_cube_count_and_dim_default_to_one():
    assert tuple(cubepy.CubeDim(16, 16)) == (16, 16, 1)
    assert cubepy.CubeCount(4).num_cubes == 4
    assert cubepy.CubeDim(8, 4, 2).num_units == 64


def test_generic_placeholder_bounds():
    assert cubepy.Float.accepts(cubepy.f16) and not cubepy.Float.accepts(cubepy.u32)
    half_or_single = cubepy.generic("H", [cubepy.f16, cubepy.f32])
    assert half_or_single.accepts(cubepy.f32) and not half_or_single.accepts(cubepy.f64)


def test_compile_error_renders_caret():
    err = cubepy.CompileError("bad thing", "k.py", 3, 8, 11, "    y = x / 2")
    text = str(err)
    assert "bad thing" in text and "k.py:3:9" in text
    assert "y = x / 2" in text and "\n   |     ^^^" in text
    assert (err.filename, err.lineno, err.col_offset, err.msg) == ("k.py", 3, 8, "bad thing")
