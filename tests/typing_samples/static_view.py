"""Kernels using every part of the static view; mypy/pyright must find no error here, and
each assert_type pins what a checker sees (tests/test_typing.py). Not collected by pytest."""
from typing import assert_type

import numpy as np

import cubepy
from cubepy import (ABSOLUTE_POS, CUBE_DIM, PLANE_DIM, UNIT_POS, UNIT_POS_PLANE, Array,
                    Comptime, Float, Line, SharedMemory, Tensor, cube, f16, f32, i32, math,
                    select, sync_cube, terminate, u32, unroll)


@cube
def halve(v: Float) -> Float:
    return v * 0.5


@cube(launch=True)
def everything(x: Tensor[f32], lines: Tensor[Line[Float]], counts: Array[u32],
               out: Array[f32], steps: Comptime[int], relu: Comptime[bool]):
    i = ABSOLUTE_POS
    assert_type(i, u32)
    assert_type(x[i], f32)
    assert_type(x.shape(x.rank() - 1), u32)
    assert_type(steps, int)
    if i >= x.len() or i >= len(out):
        terminate()
    tile = SharedMemory(f32, 256)
    assert_type(tile, SharedMemory[f32])
    wide = SharedMemory(Line[f32], 64, 4)
    assert_type(wide[0], Line[f32])
    tile[UNIT_POS] = x[i]
    sync_cube()
    s = f32(0.0)
    for k in unroll(range(steps)):
        s += tile[(UNIT_POS + k) % CUBE_DIM]
    s = cubepy.plane_sum(s) + cubepy.plane_shuffle_xor(s, 1)
    assert_type(s, f32)
    v = lines[i]
    v = select(v > 0.0, v, 0.0) if relu else v
    assert_type(v, Line[Float])
    lines[i] = halve(v[0]) + v
    assert_type(f16(v), Line[f16])
    old = cubepy.atomic_add(counts, i % PLANE_DIM, 1)
    assert_type(old, u32)
    out[i] = math.clamp(math.exp(s), 0.0, 1.0) + f32(i32(old)) + float(UNIT_POS_PLANE)
    out[i] = max(out[i], f32(0.0))


# On the host the same names are a DType, a Generic and a CubeFunction.
assert_type(cubepy.f32.numpy, np.dtype)
assert_type(cubepy.f32.itemsize, int)
assert_type(cubepy.Float.bound, tuple[cubepy.DType, ...])
dtype: cubepy.DType = cubepy.f16 if cubepy.f32.bits == 16 else cubepy.f32
assert_type(everything.source("cuda", Float=dtype), str)


@cube(launch=True)
def finite(x: Tensor[Line[f32]], flags: Array[u32]):
    v = x[ABSOLUTE_POS]
    assert_type(math.isnan(v), Line[cubepy.bool_])
    assert_type(math.isinf(v[0]), bool)
    flags[ABSOLUTE_POS] = u32(math.isnan(v[0]))


@cube(launch=True)
def indexed(x: Tensor[f32], y: Array[f32], d: u32):
    i, j = UNIT_POS // 8, UNIT_POS % 8
    assert_type(x[i, j], f32)
    assert_type(x.shape[d], u32)
    assert_type(x.stride[1], u32)
    assert_type(x.shape(0), u32)
    s = SharedMemory(f32, (8, 8))
    assert_type(s, SharedMemory[f32])
    s[i, j] = x[i, j] + x[i * x.stride[0] + j]
    v = y[2:]
    assert_type(v, Array[f32])
    assert_type(x[1:4], Tensor[f32])
    v[j] = s[j, i] + s[UNIT_POS] + f32(len(v) + s.shape(1) + s.rank())
    assert_type(cubepy.atomic_add(s, (i, j), 1.0), f32)
