"""Kernels shared by the test suite: round trip, verifier, code generation checks with
real tools, and differential runs on every runtime.

`SOURCE_CASES` lists (id, kernel, cube_dim, specialisation) for every kernel that must
compile for the targets it names. Add new kernels here so that every check covers them.
"""
from __future__ import annotations

import math as pymath

import cubepy
from cubepy import (ABSOLUTE_POS, ABSOLUTE_POS_X, ABSOLUTE_POS_Y, ABSOLUTE_POS_Z, Array,
                    CUBE_DIM, CUBE_POS, Comptime, Float, Int, Numeric, PLANE_DIM,
                    SharedMemory, Tensor, UInt, UNIT_POS, UNIT_POS_PLANE, bf16, cube, f16, f32,
                    f64, i32, select, sync_cube, terminate, u32, unroll)


@cube(launch=True)
def fused_matmul_add_relu_kernel(lhs: Tensor[Float], rhs: Tensor[Float],
                                 bias: Tensor[Float], output: Tensor[Float]):
    row = ABSOLUTE_POS_X
    col = ABSOLUTE_POS_Y
    batch = ABSOLUTE_POS_Z
    n_rows = output.shape(output.rank() - 2)
    n_cols = output.shape(output.rank() - 1)
    dim_k = rhs.shape(rhs.rank() - 1)
    if row >= n_rows or col >= n_cols:
        terminate()
    offset_output = batch * n_rows * n_cols
    offset_lhs = 0
    offset_rhs = 0
    batch_dims = output.rank() - 2
    for dim in range(batch_dims):
        offset_lhs += offset_output // output.stride(dim) % lhs.shape(dim) * lhs.stride(dim)
        offset_rhs += offset_output // output.stride(dim) % rhs.shape(dim) * rhs.stride(dim)
    sum = Float(0.0)
    for k in range(dim_k):
        sum += lhs[offset_lhs + row * dim_k + k] * rhs[offset_rhs + k * n_cols + col]
    index = offset_output + row * n_cols + col
    output[index] = max(sum + bias[index], Float(0.0))


@cube(launch=True)
def axpy(a: Float, x: Array[Float], y: Array[Float]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = a * x[i] + y[i]


@cube
def squared(v: Float) -> Float:
    return v * v


@cube(launch=True)
def square_plus_tag(x: Array[Float], out: Array[Float], tag: Comptime[str]):
    i = ABSOLUTE_POS
    if i >= len(out):
        return
    if tag == "zero":
        out[i] = Float(0.0)
    else:
        out[i] = squared(x[i]) + Float(1.0)


@cube(launch=True)
def shared_reduce(x: Array[f32], out: Array[f32]):
    """Tree reduction in shared memory; the early guard must not break the barriers."""
    buf = SharedMemory(f32, 64)
    u = UNIT_POS
    buf[u] = x[CUBE_POS * CUBE_DIM + u]
    sync_cube()
    s = CUBE_DIM // 2
    while s > 0:
        if u < s:
            buf[u] += buf[u + s]
        sync_cube()
        s = s // 2
    if u == 0:
        out[CUBE_POS] = buf[0]


@cube(launch=True)
def guarded_neighbour(x: Array[f32], out: Array[f32], n: u32):
    """An early terminate() before a barrier: out[u] = buf[u-1] + buf[u]."""
    buf = SharedMemory(f32, 64)
    u = UNIT_POS
    if u >= n:
        terminate()
    buf[u] = x[u]
    sync_cube()
    if u > 0:
        out[u] = buf[u - 1] + buf[u]
    else:
        out[u] = buf[u]


@cube(launch=True)
def histogram16(values: Array[u32], bins: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(values):
        cubepy.atomic_add(bins, values[i] % 16, u32(1))


@cube(launch=True)
def atomic_max_units(out: Array[i32]):
    cubepy.atomic_max(out, 0, i32(UNIT_POS))


@cube(launch=True)
def int_semantics(a: Array[i32], b: Array[i32], q: Array[i32], r: Array[i32]):
    i = ABSOLUTE_POS
    if i < len(a):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@cube(launch=True)
def math_mix(x: Array[f32], out: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(x):
        v = x[i]
        t = cubepy.math.exp(-v * v) + pymath.sqrt(abs(v)) + cubepy.math.clamp(v, -1.0, 1.0)
        out[i] = select(v > 0.0, t, min(t, v)) + (1.0 if v < 0.5 else 2.0)


@cube(launch=True)
def unrolled_poly(x: Array[f32], out: Array[f32], degree: Comptime[int]):
    i = ABSOLUTE_POS
    if i < len(x):
        acc = f32(0.0)
        for k in unroll(range(degree)):
            acc = acc * x[i] + f32(k + 1)
        out[i] = acc


@cube(launch=True)
def loops_and_flow(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    if i >= len(x):
        terminate()
    total = 0
    j = 0
    while True:
        j += 1
        if j > 10:
            break
        if j % 2 == 0 and x[i] > 0:
            continue
        total += j * x[i]
    for k in range(10, 0, -3):
        total -= k
    out[i] = total if total > 0 or x[i] == 0 else -total


@cube(launch=True)
def cast_kernel(x: Array[f32], out_i: Array[i32], out_u: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(x):
        out_i[i] = i32(x[i])
        out_u[i] = u32(i) * u32(3) + u32(x[i] > 0.0)


CUBE = (16, 16, 1)
LINEAR = (64, 1, 1)

# (id, kernel, cube_dim, specialisation, targets)
ALL = ("cuda", "wgsl", "metal")
SOURCE_CASES = [
    ("seed_f32", fused_matmul_add_relu_kernel, CUBE, {"Float": f32}, ALL),
    ("seed_f16", fused_matmul_add_relu_kernel, CUBE, {"Float": f16}, ALL),
    ("seed_f64", fused_matmul_add_relu_kernel, CUBE, {"Float": f64}, ("cuda",)),
    ("axpy_f32", axpy, LINEAR, {"Float": f32}, ALL),
    # a bf16 scalar parameter travels as f32 in the info struct
    ("axpy_bf16", axpy, LINEAR, {"Float": bf16}, ("cuda", "metal")),
    ("square_plus_tag_zero", square_plus_tag, LINEAR, {"Float": f32, "tag": "zero"}, ALL),
    ("square_plus_tag_sq", square_plus_tag, LINEAR, {"Float": f32, "tag": "sq"}, ALL),
    ("shared_reduce", shared_reduce, LINEAR, {}, ALL),
    ("guarded_neighbour", guarded_neighbour, LINEAR, {}, ALL),
    ("histogram16", histogram16, LINEAR, {}, ALL),
    ("atomic_max_units", atomic_max_units, (128, 1, 1), {}, ALL),
    ("int_semantics", int_semantics, LINEAR, {}, ALL),
    ("math_mix", math_mix, LINEAR, {}, ALL),
    ("unrolled_poly", unrolled_poly, LINEAR, {"degree": 4}, ALL),
    ("loops_and_flow", loops_and_flow, LINEAR, {}, ALL),
    ("cast_kernel", cast_kernel, LINEAR, {}, ALL),
]


@cube(launch=True)
def block_sum_guarded(x: Array[f32], out: Array[f32], n: u32):
    """A bare return before barriers inside a uniform loop: out[cube] sums the cube's
    active inputs plus 4 * step offsets, computed by unit 0 each round."""
    tile = SharedMemory(f32, 64)
    u = UNIT_POS
    i = ABSOLUTE_POS
    if i >= n:
        return
    count = min(CUBE_DIM, n - CUBE_POS * CUBE_DIM)
    acc = f32(0.0)
    for step in range(4):
        tile[u] = x[i] + f32(step)
        sync_cube()
        if u == 0:
            for j in range(count):
                acc += tile[j]
        sync_cube()
    if u == 0:
        out[CUBE_POS] = acc


@cube(launch=True)
def shared_shift_rounds(x: Array[i32], out: Array[i32], rounds: u32):
    """terminate() before a while loop (uniform bound from a scalar) holding barriers;
    each round adds the right neighbour's value when that neighbour is active."""
    buf = SharedMemory(i32, 64)
    u = UNIT_POS
    g = ABSOLUTE_POS
    if g >= len(x):
        terminate()
    v = x[g]
    r = u32(0)
    while r < rounds:
        buf[u] = v
        sync_cube()
        nb = (u + 1) % CUBE_DIM
        if CUBE_POS * CUBE_DIM + nb < len(x):
            v = v + buf[nb]
        sync_cube()
        r += 1
    out[g] = v


@cube(launch=True)
def wgsl_keyword_names(shared: Array[u32], loop: Array[u32]):
    """Python names that are reserved words in WGSL (and __names naga rejects)."""
    let = ABSOLUTE_POS
    fn = let * u32(2)
    __x = fn + u32(1)
    if let < len(loop):
        loop[let] = shared[let] + __x


SOURCE_CASES += [
    ("block_sum_guarded", block_sum_guarded, LINEAR, {}, ALL),
    ("shared_shift_rounds", shared_shift_rounds, LINEAR, {}, ALL),
    ("wgsl_keyword_names", wgsl_keyword_names, LINEAR, {}, ALL),
]


@cube(launch=True)
def plane_reductions(x: Array[Numeric], out: Array[Numeric], flags: Array[u32]):
    """Every plane reduction and scan, the odd units under divergence, after an early
    terminate (the units past the input do not contribute)."""
    i = ABSOLUTE_POS
    if i >= len(x):
        terminate()
    v = x[i]
    base = i * u32(6)
    out[base] = cubepy.plane_sum(v)
    out[base + 1] = cubepy.plane_prod(v)
    out[base + 2] = cubepy.plane_min(v)
    out[base + 3] = cubepy.plane_max(v)
    out[base + 4] = cubepy.plane_inclusive_sum(v)
    if UNIT_POS % u32(2) == u32(1):
        out[base + 5] = cubepy.plane_exclusive_sum(v)
    big = v > x[0]
    flags[i] = u32(cubepy.plane_all(big)) + u32(cubepy.plane_any(big)) * u32(2)


@cube(launch=True)
def plane_shuffles(x: Array[Numeric], out: Array[Numeric], flags: Array[u32], lane: u32):
    """Broadcast (constant and runtime lane) and every shuffle, on a number and a bool."""
    i = ABSOLUTE_POS
    v = x[i]
    base = i * u32(6)
    out[base] = cubepy.plane_broadcast(v, 0)
    out[base + 1] = cubepy.plane_broadcast(v, lane)
    out[base + 2] = cubepy.plane_shuffle(v, PLANE_DIM - u32(1) - UNIT_POS_PLANE)
    out[base + 3] = cubepy.plane_shuffle_xor(v, u32(1))
    out[base + 4] = cubepy.plane_shuffle_up(v, u32(1))
    out[base + 5] = cubepy.plane_shuffle_down(v, u32(2))
    odd = cubepy.plane_shuffle_xor(UNIT_POS_PLANE % u32(2) == u32(1), u32(1))
    flags[i] = u32(odd)


# Not "wgsl": results depend on the plane size, and llvmpipe's subgroups are 8 wide where
# the cpu runtime's planes are 32 (tests/test_plane.py runs them on wgpu with references
# for the device's size). f16 reductions only compile: their rounding and overflow depend
# on the order of the combination.
PLANE_TARGETS = ("cuda", "metal")
SOURCE_CASES += [
    ("plane_reductions_f32", plane_reductions, LINEAR, {"Numeric": f32}, PLANE_TARGETS),
    ("plane_reductions_i32", plane_reductions, LINEAR, {"Numeric": i32}, PLANE_TARGETS),
    ("plane_reductions_u32", plane_reductions, LINEAR, {"Numeric": u32}, PLANE_TARGETS),
    ("plane_reductions_f16", plane_reductions, LINEAR, {"Numeric": f16}, ("metal",)),
    ("plane_shuffles_f32", plane_shuffles, LINEAR, {"Numeric": f32}, PLANE_TARGETS),
    ("plane_shuffles_i32", plane_shuffles, LINEAR, {"Numeric": i32}, PLANE_TARGETS),
    ("plane_shuffles_f16", plane_shuffles, LINEAR, {"Numeric": f16}, PLANE_TARGETS),
]


# ----------------------------------------------------------------------------- lines

@cube(launch=True)
def line_axpy(a: Float, x: Tensor[cubepy.Line[Float]], y: Tensor[cubepy.Line[Float]]):
    """y = a * x + y, one line per unit (the scalar a is broadcast to every element)."""
    i = ABSOLUTE_POS
    if i < y.len():
        y[i] = a * x[i] + y[i]


@cube(launch=True)
def line_mix(x: Tensor[cubepy.Line[f32]], y: Array[cubepy.Line[f32]],
             out: Tensor[cubepy.Line[f32]], s: f32):
    """Elementwise math on lines, broadcasts, a line variable carried by a loop, casts
    through f16, select with a scalar condition, metadata counted in lines."""
    i = ABSOLUTE_POS
    if i >= out.len():
        terminate()
    v = x[i]
    w = y[i]
    acc = v * 0.0
    for k in range(3):
        acc += max(v, w) * f32(k) - min(v, 1.0)
    h = f16(cubepy.math.floor(abs(v) * 8.0))  # exact in f16: GPUs round casts differently
    back = f32(h) * 0.125 + cubepy.math.sqrt(abs(w)) - cubepy.math.floor(v)
    q = v // 0.75 + v % 0.75 + -w
    n = f32(x.buffer_len() + y.len())
    out[i] = select(s > 1.0, acc + back, q) + n * 0.001 + cubepy.math.clamp(w, -1.0, s)
    out[i] += pymath.exp(v * 0.1) ** 2


@cube(launch=True)
def line_int(x: Array[cubepy.Line[i32]], out: Array[cubepy.Line[i32]], d: i32):
    """Integer lines: floor division and modulo by a scalar and by a line, shifts, bits."""
    i = ABSOLUTE_POS
    if i < out.len():
        v = x[i]
        out[i] = v // d + v % (v + 3) + (v << u32(2)) ^ (v >> 1) & ~v


@cube(launch=True)
def line_reduce(x: Tensor[cubepy.Line[f32]], out: Array[f32], mask: Array[cubepy.Line[u32]]):
    """Elementwise comparisons into select and a u32 mask; a sum over the elements of a
    line (x.line_size() is known at compile time); an element at a runtime index."""
    i = ABSOLUTE_POS
    if i >= x.len():
        terminate()
    v = x[i]
    relu = select(v > 0.0, v, 0.0)
    mask[i] = u32(v >= 1.0) + select(v < -1.0, u32(2), u32(0))
    s = f32(0.0)
    for k in unroll(range(x.line_size())):
        s += relu[k]
    out[i] = s + v[i % u32(3)] * 100.0


@cube(launch=True)
def line_shared_rotate(x: Array[cubepy.Line[f32]], out: Array[cubepy.Line[f32]]):
    """Lines in shared memory: each unit stores its line, the cube rotates them by one
    unit; lines built from elements, compound stores into shared lines."""
    tile = SharedMemory(cubepy.Line[f32], 64, x.line_size())
    u = UNIT_POS
    tile[u] = x[ABSOLUTE_POS]
    sync_cube()
    tile[u] += 1.0
    sync_cube()
    v = tile[(u + u32(1)) % u32(64)]
    out[ABSOLUTE_POS] = cubepy.Line(v[x.line_size() - 1], v[0]) + f32(len(tile)) \
        if x.line_size() == 2 else v + f32(len(tile))


SOURCE_CASES += [
    ("line_shared_rotate_x2", line_shared_rotate, LINEAR, {"line_sizes": {"x": 2, "out": 2}},
     ALL),
    ("line_shared_rotate_x4", line_shared_rotate, LINEAR, {"line_sizes": {"x": 4, "out": 4}},
     ALL),
    ("line_reduce_x4", line_reduce, LINEAR, {"line_sizes": {"x": 4, "mask": 4}}, ALL),
    ("line_reduce_x2", line_reduce, LINEAR, {"line_sizes": {"x": 2, "mask": 2}}, ALL),
    ("line_axpy_f32x4", line_axpy, LINEAR, {"Float": f32, "line_sizes": {"x": 4, "y": 4}},
     ALL),
    ("line_axpy_f16x2", line_axpy, LINEAR, {"Float": f16, "line_sizes": {"x": 2, "y": 2}},
     ALL),
    ("line_axpy_f32x1", line_axpy, LINEAR, {"Float": f32}, ALL),
    ("line_mix_x4", line_mix, LINEAR, {"line_sizes": {"x": 4, "y": 4, "out": 4}}, ALL),
    ("line_int_x2", line_int, LINEAR, {"line_sizes": {"x": 2, "out": 2}}, ALL),
]
