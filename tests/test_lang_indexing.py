"""Indexing and views: `t[i, j, ...]` through a tensor's strides (on non-contiguous
tensors), `t.shape[d]` / `t.stride[d]`, 1-D views `x[a:b]` / `x[a:]` of arrays, tensors
and shared memory, multi-dimensional SharedMemory(T, (rows, cols)) with atomics; run on
every runtime and compared with numpy exactly; the user's mistakes; the sources checked
by nvcc, naga and clang++."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, UNIT_POS, Array, CompileError, Comptime, CubeCount,
                    CubeDim, LaunchError, Line, SharedMemory, Tensor, atomic_add, cube, f32, i32,
                    sync_cube, u32)
from cubepy.runtime import DeviceTensor

from source_check import validate_sources

DIM = 64


def strided(base: DeviceTensor, shape, strides) -> DeviceTensor:
    """Another shape and strides over the same buffer (as torch's as_strided)."""
    return DeviceTensor(base.client, base.handle, shape, strides, base.dtype,
                        base.buffer_len)


def host_view(flat: np.ndarray, shape, strides) -> np.ndarray:
    """What `strided` shows, on the host."""
    return np.lib.stride_tricks.as_strided(flat, shape, [s * flat.itemsize for s in strides])


# -- t[i, j, ...] through the strides ---------------------------------------------------
@cube(launch=True)
def gather2d(x: Tensor[f32], out: Array[f32]):
    i = ABSOLUTE_POS
    rows = x.shape[0]
    cols = x.shape[1]
    if i < rows * cols:
        out[i] = x[i // cols, i % cols]


@pytest.mark.parametrize("layout", ["transposed", "row_step", "contiguous"])
def test_strided_read_matches_numpy(runtime_client, layout):
    c = runtime_client
    flat = np.arange(48, dtype=np.float32) * 1.5 - 7.0
    base = c.tensor(flat)
    shape, strides = {"transposed": ((8, 6), (1, 8)), "row_step": ((3, 8), (16, 1)),
                      "contiguous": ((6, 8), (8, 1))}[layout]
    x = strided(base, shape, strides)
    out = c.zeros((48,), f32)
    gather2d.launch(c, CubeCount(1), CubeDim(DIM), x, out)
    want = host_view(flat, shape, strides).reshape(-1)
    np.testing.assert_array_equal(out.numpy()[:want.size], want)


@cube(launch=True)
def scatter3d(out: Tensor[u32]):
    i = ABSOLUTE_POS
    d0, d1, d2 = out.shape[0], out.shape[1], out.shape[2]
    if i < d0 * d1 * d2:
        a = i // (d1 * d2)
        b = (i // d2) % d1
        k = i % d2
        out[a, b, k] = a * u32(100) + b * u32(10) + k


def test_strided_store_3d_permuted(runtime_client):
    c = runtime_client
    base = c.zeros((24,), u32)
    shape, strides = (2, 3, 4), (1, 8, 2)  # a permutation of a contiguous (3, 4, 2)
    out = strided(base, shape, strides)
    scatter3d.launch(c, CubeCount(1), CubeDim(DIM), out)
    a, b, k = np.indices(shape)
    want = (a * 100 + b * 10 + k).astype(np.uint32)
    np.testing.assert_array_equal(out.numpy(), want)
    # every element of the buffer was written exactly once, at its strided place
    got = np.zeros(24, np.uint32)
    host_view(got, shape, strides)[...] = want
    np.testing.assert_array_equal(base.numpy(), got)


@cube(launch=True)
def add_rows(x: Tensor[i32], delta: i32):
    i = ABSOLUTE_POS
    if i < x.shape(0) * x.shape(1):
        x[i % x.shape(0), i // x.shape(0)] += delta + i32(i)


def test_augmented_store_through_strides(runtime_client):
    c = runtime_client
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    base = c.tensor(host.copy())
    x = strided(base, (4, 3), (1, 4))  # the transpose
    add_rows.launch(c, CubeCount(1), CubeDim(DIM), x, 5)
    want = host.T.copy()
    r, q = np.indices((4, 3))
    want += 5 + (r + 4 * q)  # unit i handles x[i % 4, i // 4]
    np.testing.assert_array_equal(x.numpy(), want)


@cube(launch=True)
def shape_forms(x: Tensor[f32], out: Array[u32], d: u32):
    i = UNIT_POS
    if i < x.rank():
        out[i] = x.shape[i] * u32(1000) + x.stride[i]
        out[8 + i] = x.shape(i) * u32(1000) + x.stride(i)
    if i == 0:
        out[16] = x.shape[d] + x.stride[1] * u32(100) + u32(len(x)) * u32(10000)


def test_shape_and_stride_subscripts(runtime_client):
    c = runtime_client
    x = strided(c.zeros((60,), f32), (3, 4, 5), (1, 3, 12))
    out = c.zeros((17,), u32)
    shape_forms.launch(c, CubeCount(1), CubeDim(8), x, out, 2)
    got = out.numpy()
    want = [s * 1000 + st for s, st in zip((3, 4, 5), (1, 3, 12))]
    assert list(got[:3]) == want and list(got[8:11]) == want
    assert got[16] == 5 + 3 * 100 + 60 * 10000


@cube(launch=True)
def one_index_tuple(x: Tensor[f32], out: Array[f32]):
    i = ABSOLUTE_POS
    if i < x.shape[0]:
        out[i] = x[i,] + x[i]  # a tuple goes through the stride, one index is flat


def test_one_index_tuple_is_strided_flat_stays(runtime_client):
    c = runtime_client
    flat = np.arange(16, dtype=np.float32)
    x = strided(c.tensor(flat), (8,), (2,))
    out = c.zeros((8,), f32)
    one_index_tuple.launch(c, CubeCount(1), CubeDim(8), x, out)
    np.testing.assert_array_equal(out.numpy(), flat[::2] + flat[:8])


def test_unchecked_launch_through_strides(runtime_client):
    c = runtime_client
    flat = np.arange(48, dtype=np.float32)
    x = strided(c.tensor(flat), (8, 6), (1, 8))
    out = c.zeros((48,), f32)
    gather2d.launch_unchecked(c, CubeCount(1), CubeDim(DIM), x, out)
    np.testing.assert_array_equal(out.numpy(), host_view(flat, (8, 6), (1, 8)).reshape(-1))


@cube(launch=True)
def count_pairs(keys: Array[u32], hist: Tensor[i32]):
    k = keys[ABSOLUTE_POS]
    atomic_add(hist, (k // hist.shape[1], k % hist.shape[1]), i32(1))  # as in Numba


def test_atomics_take_a_tuple_index(runtime_client):
    c = runtime_client
    keys = (np.arange(DIM, dtype=np.uint32) * 5) % 12
    base = c.zeros((12,), i32)
    hist = strided(base, (3, 4), (1, 3))  # column-major
    count_pairs.launch(c, CubeCount(1), CubeDim(DIM), c.tensor(keys), hist)
    np.testing.assert_array_equal(hist.numpy().reshape(-1), np.bincount(keys, minlength=12))


# -- views --------------------------------------------------------------------------------
@cube(launch=True)
def array_views(x: Array[f32], out: Array[f32], a: u32, b: u32):
    v = x[a:b]
    w = v[2:]
    head = x[:3]
    i = UNIT_POS
    if i < len(v):
        out[i] = v[i]
    if i < w.shape(0):
        out[16 + i] = w[i] * 2.0
    if i == 0:
        out[32] = f32(len(v))
        out[33] = f32(len(w))
        out[34] = f32(head.len() + u32(100) * head.rank())
        out[35] = f32(len(x[b:a]))  # empty: start clamped to the end
        out[36] = f32(len(x[a:1000]))  # the end clamped to len(x)
        out[37] = f32(len(x[a:2**40]))  # past u32 too
        out[38] = f32(len(x[a:b:1]))


def test_array_views(runtime_client):
    c = runtime_client
    host = np.arange(20, dtype=np.float32) * 3.0
    out = c.zeros((40,), f32)
    array_views.launch(c, CubeCount(1), CubeDim(DIM), c.tensor(host), out, 5, 14)
    got = out.numpy()
    v = host[5:14]
    np.testing.assert_array_equal(got[:9], v)
    np.testing.assert_array_equal(got[16:16 + 7], v[2:] * 2)
    assert list(got[32:39]) == [9, 7, 3 + 100, 0, 15, 15, 9]


@cube
def fill_view(v: Array[f32], value: f32):
    for i in range(len(v)):
        v[i] = value + f32(i)


@cube(launch=True)
def write_views(x: Array[f32], a: u32):
    if UNIT_POS == 0:
        fill_view(x[a:a + 4], 100.0)  # a view passed to a device function
        tail = x[a + 6:]
        tail[0] += 1000.0
        atomic_add(tail, 1, 7.0)


def test_writes_through_views(runtime_client):
    c = runtime_client
    host = np.zeros(16, np.float32)
    x = c.tensor(host)
    write_views.launch(c, CubeCount(1), CubeDim(1), x, 3)
    want = host.copy()
    want[3:7] = 100 + np.arange(4)
    want[9] += 1000
    want[10] += 7
    np.testing.assert_array_equal(x.numpy(), want)


@cube(launch=True)
def tensor_view(x: Tensor[i32], out: Array[i32]):
    row = x[x.shape[1]:]  # flat: from the second row on (contiguous tensor)
    i = UNIT_POS
    if i < len(row):
        out[i] = row[i] + i32(row.stride(0))


def test_tensor_slice_is_flat_view(runtime_client):
    c = runtime_client
    host = np.arange(15, dtype=np.int32).reshape(3, 5)
    out = c.zeros((10,), i32)
    tensor_view.launch(c, CubeCount(1), CubeDim(16), c.tensor(host), out)
    np.testing.assert_array_equal(out.numpy(), host.reshape(-1)[5:] + 1)


@cube(launch=True)
def line_views(x: Array[Line[f32]], out: Array[Line[f32]]):
    v = x[1:3]  # in lines
    i = UNIT_POS
    if i < len(v):
        out[i] = v[i] * 2.0


def test_views_of_line_buffers_count_lines(runtime_client):
    c = runtime_client
    host = np.arange(16, dtype=np.float32)
    out = c.zeros((8,), f32).with_line_size(4)
    line_views.launch(c, CubeCount(1), CubeDim(4), c.tensor(host).with_line_size(4), out)
    np.testing.assert_array_equal(out.numpy(), host[4:12] * 2)


# -- shared memory: views, 2-D and 3-D, atomics ----------------------------------------
@cube(launch=True)
def transpose_tile(x: Tensor[f32], out: Tensor[f32], tile: Comptime[int]):
    s = SharedMemory(f32, (tile, tile + 1))  # padded rows
    r = UNIT_POS // u32(tile)
    k = UNIT_POS % u32(tile)
    s[r, k] = x[r, k]
    sync_cube()
    out[r, k] = s[k, r] + f32(s.shape(1) * u32(1000) + s.stride(0) * u32(10)
                              + s.rank())


def test_shared_2d_transpose(runtime_client):
    c = runtime_client
    host = np.arange(64, dtype=np.float32).reshape(8, 8) - 30
    base = c.tensor(np.ascontiguousarray(host.T))
    x = strided(base, (8, 8), (1, 8))  # x = host, read through transposed strides
    out = c.zeros((8, 8), f32)
    transpose_tile.launch(c, CubeCount(1), CubeDim(64), x, out, tile=8)
    np.testing.assert_array_equal(out.numpy(), host.T + (9 * 1000 + 9 * 10 + 2))


@cube(launch=True)
def shared_3d_hist(keys: Array[u32], out: Array[u32]):
    h = SharedMemory(u32, (2, 3, 4))
    i = UNIT_POS
    if i < u32(24):
        h[i // u32(12), (i // u32(4)) % u32(3), i % u32(4)] = u32(0)
    sync_cube()
    k = keys[i]
    atomic_add(h, (k // u32(12), (k // u32(4)) % u32(3), k % u32(4)), u32(1))
    sync_cube()
    if i < u32(24):
        out[i] = h[i]  # one index is flat (row-major)
    if i == 0:
        out[24] = h.shape(0) * u32(100) + h.shape(1) * u32(10) + h.shape(2)
        out[25] = h.stride(0) * u32(100) + h.stride(1) * u32(10) + h.stride(2)
        out[26] = u32(len(h))


def test_shared_3d_atomics(runtime_client):
    c = runtime_client
    keys = (np.arange(DIM, dtype=np.uint32) * 7) % 24
    out = c.zeros((27,), u32)
    shared_3d_hist.launch(c, CubeCount(1), CubeDim(DIM), c.tensor(keys), out)
    got = out.numpy()
    np.testing.assert_array_equal(got[:24], np.bincount(keys, minlength=24))
    assert list(got[24:]) == [234, 1241, 24]


TILE_SHAPE = (4, 2, 8)  # a compile-time tuple names a shape too


@cube(launch=True)
def shared_global_shape(out: Array[u32]):
    s = SharedMemory(u32, TILE_SHAPE)
    i = UNIT_POS
    s[i // u32(16), (i // u32(8)) % u32(2), i % u32(8)] = i * u32(3)
    sync_cube()
    out[i] = s[i % u32(4), u32(1), i // u32(8)] if i < u32(32) else s.rank()


def test_shared_shape_from_a_constant_tuple(runtime_client):
    c = runtime_client
    out = c.zeros((64,), u32)
    shared_global_shape.launch(c, CubeCount(1), CubeDim(64), out)
    flat = np.arange(64, dtype=np.uint32) * 3
    want = flat.reshape(TILE_SHAPE)
    i = np.arange(32)
    np.testing.assert_array_equal(out.numpy()[:32], want[i % 4, 1, i // 8])
    assert (out.numpy()[32:] == 3).all()


@cube(launch=True)
def negative_runtime_bound(x: Array[f32], out: Array[u32], k: i32):
    if UNIT_POS == 0:
        out[0] = len(x[:k])
        out[1] = len(x[k:])


def test_negative_runtime_bounds_clamp(runtime_client):
    c = runtime_client
    out = c.zeros((2,), u32)
    negative_runtime_bound.launch(c, CubeCount(1), CubeDim(1), c.zeros((10,), f32), out, -1)
    assert list(out.numpy()) == [10, 0]  # no wrap-around: -1 is a huge u32, clamped


@cube(launch=True)
def shared_views(x: Array[f32], out: Array[f32]):
    s = SharedMemory(f32, 32)
    i = UNIT_POS
    s[i] = x[i]
    sync_cube()
    hi = s[16:]
    mid = hi[4:8]
    if i < len(mid):
        out[i] = mid[i] + hi[i]
    if i == 0:
        out[8] = f32(len(hi) * u32(100) + mid.shape(0))


def test_shared_views(runtime_client):
    c = runtime_client
    host = np.arange(32, dtype=np.float32) ** 2
    out = c.zeros((9,), f32)
    shared_views.launch(c, CubeCount(1), CubeDim(32), c.tensor(host), out)
    got = out.numpy()
    np.testing.assert_array_equal(got[:4], host[20:24] + host[16:20])
    assert got[8] == 16 * 100 + 4


# -- checked launches ---------------------------------------------------------------------
@cube(launch=True)
def out_of_range(x: Tensor[f32], got: Array[f32], out: Tensor[f32], k: i32,
                 past_buffer: Comptime[bool]):
    if UNIT_POS == 0:
        v = x[2:]
        w = out[0:1]
        if past_buffer:  # undefined in an unchecked launch: only run checked
            got[0] = x[9, 9]
            got[3] = v[100]
            out[7, 7] = 5.0
        got[1] = x[0, 9]  # past dimension 1, inside the buffer (offset 9)
        got[2] = v[len(v)]  # past the view, inside the buffer (element 8)
        got[4] = x[1, k]  # k = -1: no wrap-around; offset 4 - 1 in u32 arithmetic
        got[5] = x[1, 2]
        out[0, 3] = 6.0  # past dimension 1, inside the buffer (offset 3)
        w[1] = 8.0  # past the view, inside the buffer (element 1)
        out[1, 0] = 1.0


@pytest.mark.parametrize("checked", [True, False])
def test_checked_launch_checks_each_dimension_and_view(runtime_client, checked):
    c = runtime_client
    host = np.arange(1, 13, dtype=np.float32)
    x = strided(c.tensor(host), (2, 4), (4, 1))  # 8 of the buffer's 12 elements
    out = c.zeros((2, 2), f32)
    got = c.zeros((6,), f32)
    if checked:
        out_of_range.launch(c, CubeCount(1), CubeDim(1), x, got, out, -1, past_buffer=True)
        # every index past its dimension or view reads 0 and its store is dropped
        np.testing.assert_array_equal(got.numpy(), [0, 0, 0, 0, 0, host[6]])
        np.testing.assert_array_equal(out.numpy(), [[0, 0], [1, 0]])
    else:
        out_of_range.launch_unchecked(c, CubeCount(1), CubeDim(1), x, got, out, -1,
                                      past_buffer=False)
        np.testing.assert_array_equal(got.numpy(), [0, host[9], host[8], 0, host[3], host[6]])
        np.testing.assert_array_equal(out.numpy(), [[0, 8], [1, 6]])


def test_checked_source_guards_only_in_checked_builds():
    checked = out_of_range.source("cuda", past_buffer=False)
    unchecked = out_of_range.source("cuda", checked=False, past_buffer=False)
    assert "4294967295" in checked and "x_shape[1u]" in checked
    assert "4294967295" not in unchecked and "x_shape" not in unchecked


# -- the user's mistakes ------------------------------------------------------------------
@cube(launch=True)
def rank2(x: Tensor[f32], out: Array[f32]):
    out[0] = x[0, 1]


def test_rank_mismatch_is_a_launch_error(runtime_client):
    c = runtime_client
    out = c.zeros((1,), f32)
    with pytest.raises(LaunchError, match=r"'x' has rank 3 .*indexes it with 2 indices"):
        rank2.launch(c, CubeCount(1), CubeDim(1), c.zeros((2, 2, 2), f32), out)
    with pytest.raises(LaunchError, match="'x' has rank 1"):
        rank2.launch(c, CubeCount(1), CubeDim(1), c.zeros((4,), f32), out)
    rank2.launch(c, CubeCount(1), CubeDim(1), c.tensor(np.eye(2, dtype=np.float32)), out)
    assert out.numpy()[0] == 0.0
    assert "tensor<f32, rank 2>" in rank2.ir()


@cube(launch=True)
def two_ranks(x: Tensor[f32]):
    x[0, 1] = x[0, 1, 2]


@cube(launch=True)
def array_two_indices(x: Array[f32]):
    x[0, 1] = 1.0


@cube(launch=True)
def view_two_indices(x: Tensor[f32]):
    v = x[1:]
    v[0, 1] = 1.0


@cube(launch=True)
def stepped(x: Array[f32]):
    v = x[0:8:2]
    v[0] = 1.0


@cube(launch=True)
def huge_index(x: Tensor[f32]):
    x[0, 2**32] = 1.0


@cube(launch=True)
def float_step(x: Array[f32]):
    v = x[0:8:1.0]
    v[0] = 1.0


@cube(launch=True)
def slice_store(x: Array[f32]):
    x[0:4] = 1.0


@cube(launch=True)
def mixed_slice(x: Tensor[f32]):
    x[0, 1:3][0] = 1.0


@cube(launch=True)
def shared_wrong_count(x: Array[f32]):
    s = SharedMemory(f32, (4, 4))
    s[1, 2, 3] = x[0]


@cube(launch=True)
def negative_index(x: Tensor[f32]):
    x[0, -1] = 1.0


@cube(launch=True)
def negative_bound(x: Array[f32]):
    v = x[-4:]
    v[0] = 1.0


@cube(launch=True)
def shared_runtime_dim(x: Array[u32], d: u32):
    s = SharedMemory(u32, (4, 4))
    x[0] = s.shape(d)


@cube(launch=True)
def zero_dim_shared(x: Array[f32], k: Comptime[int]):
    s = SharedMemory(f32, (k, 0))
    s[0, 0] = x[0]


@cube(launch=True)
def line_tensor_2d(x: Tensor[Line[f32]]):
    x[0, 1] = x[0]


@cube(launch=True)
def shared_constant_past_dim(x: Array[f32]):
    s = SharedMemory(f32, (4, 4))
    s[0, 4] = x[0]


@cube(launch=True)
def line_slice(x: Array[f32]):
    v = Line(x[0], x[1])
    x[2] = v[0:1]


@cube(launch=True)
def shape_two(x: Tensor[u32]):
    x[0] = x.shape[0, 1]


@pytest.mark.parametrize("kernel, message", [
    (two_ranks, r"indexed with 2 indices here but with 3 at line"),
    (array_two_indices, r"Array \(1-D, no strides\): it takes one index, got 2"),
    (view_two_indices, r"1-D view: it takes one index, got 2"),
    (stepped, r"step of 1 only"),
    (float_step, r"step of 1 only"),
    (huge_index, r"the index 4294967296 does not fit in u32"),
    (slice_store, r"a slice cannot be stored to"),
    (mixed_slice, r"t\[i, a:b\] is not supported"),
    (shared_wrong_count, r"has 2 dimensions \(4, 4\): it takes 2 indices .*got 3"),
    (negative_index, r"negative index -1: indices do not wrap around"),
    (negative_bound, r"negative slice bound -4"),
    (shared_runtime_dim, r"needs d known at compile time, 0 to 1"),
    (shape_two, r"x.shape\[d\] takes one dimension"),
    (line_slice, r"a line takes one element index: v\[k\]"),
    (shared_constant_past_dim, r"index 4 is out of range for dimension 1 of 's', of size 4"),
])
def test_mistakes_are_compile_errors(kernel, message):
    with pytest.raises(CompileError, match=message) as info:
        kernel.source("cuda")
    assert info.value.lineno > 0


def test_zero_sized_shared_dimension():
    with pytest.raises(CompileError, match="must be positive, not 0"):
        zero_dim_shared.source("cuda", k=2)


def test_line_tensor_takes_flat_indices():
    with pytest.raises(CompileError, match="on the Line tensor 'x' is not supported"):
        line_tensor_2d.source("cuda", line_sizes={"x": 4})


# -- the sources, by the real compilers -----------------------------------------------------
@cube(launch=True)
def every_construct(x: Tensor[f32], y: Array[f32], out: Tensor[f32], a: u32, d: u32,
                    counts: Tensor[u32]):
    s = SharedMemory(f32, (8, 8))
    cube3 = SharedMemory(u32, (2, 4, 8))
    i = UNIT_POS
    r = i // u32(8)
    k = i % u32(8)
    s[r, k] = x[r, k] + f32(x.shape[d] + x.stride[1])
    cube3[i // u32(32), (i // u32(8)) % u32(4), i % u32(8)] = i
    sync_cube()
    atomic_add(cube3, (u32(0), u32(1), k), u32(1))
    v = y[a:]
    w = v[:a]
    row = s[8:16]
    out[k, r] = s[k, r] + v[i] + w[0] + row[k] + f32(len(w) + cube3[1, 2, 3])
    out[r, k] += f32(row.shape(0))
    atomic_add(counts, (r, k), u32(1))
    if i == 0:
        fill_view(y[a:a + u32(4)], 1.0)


@pytest.mark.nvcc
@pytest.mark.parametrize("checked", [True, False])
def test_sources_compile_everywhere(tmp_path, checked):
    sources = validate_sources(every_construct, tmp_path, cube_dim=(64, 1, 1),
                               checked=checked)
    assert "x_stride" in sources["cuda"]


# -- unpacking a shape ------------------------------------------------------------------

@cube(launch=True)
def unpack_shape(x: Tensor[f32], out: Array[f32]):
    rows, cols = x.shape
    s_rows, s_cols = x.stride
    i = ABSOLUTE_POS
    if i < rows * cols:
        out[i] = x[i // cols, i % cols] + f32(s_rows * 0 + s_cols * 0)


def test_unpacking_a_shape_reads_each_dimension_and_fixes_the_rank(runtime_client):
    c = runtime_client
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = c.zeros((12,), f32)
    unpack_shape.launch(c, CubeCount(1), CubeDim(64), c.tensor(host), out)
    np.testing.assert_array_equal(out.numpy(), host.reshape(-1))
    out2 = c.zeros((12,), f32)
    transposed = c.tensor(host.T.copy())  # (4, 3)
    unpack_shape.launch(c, CubeCount(1), CubeDim(64), transposed, out2)
    np.testing.assert_array_equal(out2.numpy(), host.T.reshape(-1))
    with pytest.raises(cubepy.LaunchError, match="'x' has rank 3"):
        unpack_shape.launch(c, CubeCount(1), CubeDim(64),
                            c.tensor(np.zeros((2, 2, 3), np.float32)), out)


@cube(launch=True)
def unpack_shared_shape(out: Array[u32]):
    s = cubepy.SharedMemory(u32, (3, 5))
    rows, cols = s.shape
    out[0] = rows
    out[1] = cols


def test_unpacking_the_shape_of_shared_memory_gives_constants(runtime_client):
    out = runtime_client.zeros((2,), u32)
    unpack_shared_shape.launch(runtime_client, CubeCount(1), CubeDim(1), out)
    assert out.numpy().tolist() == [3, 5]
    assert "3u" in unpack_shared_shape.source("cuda")


def test_unpacking_a_shape_into_the_wrong_count_is_an_error():
    @cube(launch=True)
    def bad(out: Array[u32]):
        s = cubepy.SharedMemory(u32, (3, 5))
        a, b, c = s.shape
        out[0] = a + b + c

    with pytest.raises(cubepy.CompileError, match="has 2 values, not 3"):
        bad.source("cuda")

    @cube(launch=True)
    def both(x: Tensor[f32], out: Array[f32]):
        rows, cols = x.shape
        out[0] = x[rows - 1, cols - 1, 0]

    with pytest.raises(cubepy.CompileError, match="indexed with 3 indices here but with 2"):
        both.source("cuda")

    @cube(launch=True)
    def array_shape(x: Array[f32], out: Array[f32]):
        (n,) = x.shape
        out[0] = f32(n)

    with pytest.raises(cubepy.CompileError, match="only a Tensor"):
        array_shape.source("cuda")
