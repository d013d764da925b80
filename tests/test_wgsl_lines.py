"""WGSL vector accesses for lines: a buffer or shared array whose lines are read or
written whole is an `array<vec4<T>>` (vec2 for lines of 2; a line of 8 is two vec4),
each whole line one access, element accesses a vector's component. A line of 8 f16 is
one `vec4<u32>` (two f16 to a word) unless element stores could split a word between
units. Results must be
those of the element path on every runtime: the cpu runtime, numpy, and the same kernel
on wgpu with its lines forced element by element (a misaligned specialisation)."""
from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, UNIT_POS, Array, CubeCount, CubeDim, Line, Numeric, Tensor,
                    atomic_add, cube, f16, f32, i32, pipeline, select, u32)
from cubepy.runtime.base import DeviceTensor

from conftest import RUNTIME_PARAMS
from source_check import validate_sources

WGPU = [p for p in RUNTIME_PARAMS if p.id == "wgpu"]


@cube(launch=True)
def copy_lines(x: Tensor[Line[Numeric]], y: Tensor[Line[Numeric]]):
    """No guard: in a checked launch the units past the end make a ragged tail."""
    y[ABSOLUTE_POS] = x[ABSOLUTE_POS]


@cube(launch=True)
def mixed_access(x: Array[Line[Numeric]], out: Array[Line[Numeric]]):
    """Whole lines of x and out, and element reads of x (one element, and the reads
    under a select, which are not surely made) from the same vector buffer."""
    i = ABSOLUTE_POS
    v = x[i]
    second = x[i][1]
    w = select(second > Numeric(0), x[i + u32(1)], v)
    out[i] = v + w + second


@cube(launch=True)
def shared_shift(x: Array[Line[Numeric]], out: Array[Line[Numeric]]):
    """Each unit stores its line in a Line shared array and reads its neighbour's."""
    tile = cubepy.SharedMemory(Line[Numeric], 32, x.line_size())
    tile[UNIT_POS] = x[ABSOLUTE_POS]
    cubepy.sync_cube()
    out[ABSOLUTE_POS] = tile[(UNIT_POS + u32(1)) % u32(32)] + tile[UNIT_POS][0]


@cube(launch=True)
def counted(x: Array[Line[u32]], hits: Array[Line[u32]]):
    v = x[ABSOLUTE_POS]
    atomic_add(hits, 0, v)
    hits[ABSOLUTE_POS + u32(1)] = v  # a whole-line store, to a buffer used atomically


def _source(kernel, checked: bool = False, misaligned=(), cube_dim=(32, 1, 1),
            **spec) -> str:
    base = kernel._specialization(CubeDim(*cube_dim), spec)
    return kernel._compile(dataclasses.replace(base, misaligned=tuple(misaligned)), "wgsl",
                           checked).source


# ----------------------------------------------------------------------------- source

@pytest.mark.parametrize("dtype,n,vector,accesses", [
    (f32, 4, "vec4<f32>", 1), (f32, 2, "vec2<f32>", 1), (f32, 8, "vec4<f32>", 2),
    (i32, 4, "vec4<i32>", 1), (u32, 2, "vec2<u32>", 1),
    (f16, 4, "vec4<f16>", 1), (f16, 2, "vec2<f16>", 1),
], ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_line_buffers_are_arrays_of_vectors(dtype, n, vector, accesses, checked):
    src = _source(copy_lines, checked, Numeric=dtype, line_sizes={"x": n, "y": n})
    assert f"var<storage, read> x: array<{vector}>;" in src
    assert f"var<storage, read_write> y: array<{vector}>;" in src
    assert src.count(f": {vector} = x[") == accesses  # one let per vector read
    assert src.count(f"] = {vector}(") == accesses  # one vector store per piece
    if accesses == 1:
        assert f"= x[y_line];" in src and f"y[y_line] = {vector}(" in src
    else:
        assert "x[(y_line * 2u) + 1u]" in src
    assert ("} else {" in src) is checked  # checked: a per-element path for the tail


def test_checked_line_keeps_the_element_checks_for_the_tail():
    src = _source(copy_lines, True, Numeric=f32, line_sizes={"x": 4, "y": 4})
    assert "if ((y_line * 4u) + 3u < info.x_buffer_len) {" in src
    assert "x_3 = cube_load_x((y_line * 4u) + 3u);" in src
    assert "if (i < info.x_buffer_len) { return x[i / 4][i % 4]; }" in src
    assert "if (i < info.y_buffer_len) { y[i / 4][i % 4] = v; }" in src


def test_element_reads_of_a_vector_buffer_index_a_component():
    src = _source(mixed_access, False, Numeric=f32, line_sizes={"x": 4, "out": 4})
    assert "var<storage, read> x: array<vec4<f32>>;" in src
    assert ": vec4<f32> = x[" in src  # the whole line
    # unchecked: line indices as written (a checked launch clamps them first)
    assert "let second: f32 = x[i][1];" in src  # x[i][1]: line, component
    assert "x_line = i + 1u;" in src and "select(v_3, x[x_line][3], second > 0.0f)" in src
    eight = _source(mixed_access, False, Numeric=f32, line_sizes={"x": 8, "out": 8})
    assert "select(v_5, x[(x_line * 2u) + 1u][1], second > 0.0f)" in eight
    halves = _source(mixed_access, False, Numeric=f16, line_sizes={"x": 8, "out": 8})
    # x[i][1]: half 1 of word 0; element 5 of line i + 1: half 1 of word 2
    assert "let second: f16 = f16(unpack2x16float(x[i][0])[1]);" in halves
    assert ("select(v_5, f16(unpack2x16float(x[x_line][2])[1]), second > 0.0h)"
            in halves)


def test_shared_line_array_is_an_array_of_vectors():
    src = _source(shared_shift, False, Numeric=f32, line_sizes={"x": 4, "out": 4})
    assert "var<workgroup> tile: array<vec4<f32>, 32>;" in src
    assert "tile[tile_line] = vec4<f32>(" in src
    # tile[UNIT_POS][0], unclamped in an unchecked launch (tests/test_line_ir.py)
    assert "tile_0 + tile[cube_unit][0]" in src
    two = _source(shared_shift, True, Numeric=u32, line_sizes={"x": 2, "out": 2})
    assert "var<workgroup> tile: array<vec2<u32>, 32>;" in two
    assert "if (i < 64u) { return tile[i / 2][i % 2]; }" in two  # bound in elements


@cube(launch=True)
def staged_reverse(a: Array[Line[Numeric]], out: Array[Line[Numeric]]):
    """The tile is filled by memcpy_async, which WGSL makes element stores, and read
    whole; out is written whole."""
    tile = cubepy.SharedMemory(Line[Numeric], 32, a.line_size())
    pipeline.memcpy_async(tile, UNIT_POS, a, ABSOLUTE_POS)
    pipeline.commit()
    pipeline.wait(0)
    cubepy.sync_cube()
    out[ABSOLUTE_POS] = tile[u32(31) - UNIT_POS]


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_f16_lines_of_8_are_one_word_group(checked):
    src = _source(copy_lines, checked, Numeric=f16, line_sizes={"x": 8, "y": 8})
    assert src.startswith("enable f16;")
    assert "var<storage, read> x: array<vec4<u32>>;" in src
    assert "var<storage, read_write> y: array<vec4<u32>>;" in src
    assert "f16>" not in src  # no f16 vector anywhere
    assert src.count(": vec4<u32> = x[y_line];") == 1  # one 16-byte load a line
    for word in "xyzw":
        assert f"= unpack2x16float(cube_line1.{word});" in src
    assert "x_0 = f16(cube_halves2.x);" in src and "x_7 = f16(cube_halves5.y);" in src
    assert src.count("y[y_line] = vec4<u32>(") == 1  # one 16-byte store a line
    assert ("vec4<u32>(pack2x16float(vec2<f32>(f32(x_0), f32(x_1))), "
            "pack2x16float(vec2<f32>(f32(x_2), f32(x_3))), ") in src
    if checked:  # the tail: elements counted as before, one word's half each
        assert "if ((y_line * 8u) + 7u < info.x_buffer_len) {" in src
        assert ("if (i < info.x_buffer_len) { return "
                "f16(unpack2x16float(x[i / 8][(i % 8) / 2])[i % 2]); }") in src
        assert ("y[i / 8][(i % 8) / 2] = (y[i / 8][(i % 8) / 2] & ~(0xffffu << "
                "((u32(i) % 2u) * 16u))) | ((pack2x16float(vec2<f32>(f32(v), 0.0f)) & "
                "0xffffu) << ((u32(i) % 2u) * 16u));") in src
    else:
        assert "} else {" not in src


def test_f16_shared_lines_of_8_are_one_word_group():
    src = _source(shared_shift, True, Numeric=f16, line_sizes={"x": 8, "out": 8})
    assert "var<workgroup> tile: array<vec4<u32>, 32>;" in src  # 256 f16
    assert "tile[tile_line] = vec4<u32>(pack2x16float(" in src
    assert "if (i < 256u) { return f16(unpack2x16float(tile[i / 8][(i % 8) / 2])" in src


def test_element_stores_keep_f16_vectors():
    """An element store into a word group would rewrite a word whose other half may be
    another unit's: the tile, filled element by element, keeps two vec4<f16> a line;
    out, only written whole, is one word group."""
    src = _source(staged_reverse, False, Numeric=f16, line_sizes={"a": 8, "out": 8})
    assert "var<workgroup> tile: array<vec4<f16>, 64>;" in src
    assert "tile[(tile_item * 2u) + 1u][3] = a[(a_item * 8u) + 7u];" in src
    assert ": vec4<f16> = tile[(tile_line * 2u) + 1u];" in src
    assert "var<storage, read_write> out: array<vec4<u32>>;" in src
    assert "out[out_line] = vec4<u32>(pack2x16float(vec2<f32>(f32(tile_0), " in src
    assert "unpack2x16float" not in src  # no word group is read
    f32_src = _source(staged_reverse, False, Numeric=f32, line_sizes={"a": 4, "out": 4})
    assert "tile: array<vec4<f32>, 32>;" in f32_src and "out: array<vec4<f32>>;" in f32_src
    four = _source(copy_lines, False, Numeric=f16, line_sizes={"x": 4, "y": 4})
    assert "x: array<vec4<f16>>;" in four and "unpack2x16float" not in four


def test_misaligned_and_atomic_buffers_stay_arrays_of_scalars():
    src = _source(copy_lines, False, ("x",), Numeric=f32, line_sizes={"x": 4, "y": 4})
    assert "x: array<f32>;" in src and "x[(y_line * 4u) + 3u]" in src
    assert "y: array<vec4<f32>>;" in src  # y stays aligned
    src = _source(counted, False, line_sizes={"x": 4, "hits": 4})
    assert "x: array<vec4<u32>>;" in src and "hits: array<atomic<u32>>;" in src
    assert "atomicStore(&hits[" in src


@pytest.mark.parametrize("kernel,dtype,n", [
    (copy_lines, f32, 4), (copy_lines, f16, 8), (copy_lines, i32, 2), (copy_lines, f16, 2),
    (mixed_access, f32, 4), (mixed_access, f16, 8), (shared_shift, f32, 4),
    (shared_shift, u32, 2), (shared_shift, f16, 8), (staged_reverse, f16, 8)],
    ids=lambda v: getattr(v, "name", getattr(v, "__name__", str(v))))
@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_vector_sources_compile(tmp_path, kernel, dtype, n, checked):
    names = {copy_lines: ("x", "y"), staged_reverse: ("a", "out")}.get(kernel,
                                                                      ("x", "out"))
    sources = validate_sources(kernel, tmp_path, cube_dim=(32, 1, 1), checked=checked,
                               Numeric=dtype, line_sizes=dict.fromkeys(names, n))
    assert "array<vec" in sources["wgsl"]


# ----------------------------------------------------------------------------- results

def _element_path(client, monkeypatch):
    """Every line tensor made from now on is taken as misaligned: its kernels access
    lines element by element (the specialisation a view from an odd offset gets)."""
    monkeypatch.setattr(client, "_aligned", lambda handle, nbytes: False)


def _run(client, kernel, inputs: dict, outputs: dict, n: int, cubes: int, units: int,
         checked: bool = True) -> dict:
    tensors = {name: client.tensor(a).with_line_size(n) for name, a in inputs.items()}
    tensors.update({name: client.tensor(a).with_line_size(n) for name, a in outputs.items()})
    launch = kernel.launch if checked else kernel.launch_unchecked
    launch(client, CubeCount(cubes), CubeDim(units), *tensors.values())
    return {name: tensors[name].numpy() for name in outputs}


_CASES = [(f32, 4), (f32, 2), (f16, 8), (f16, 4), (i32, 4), (u32, 2), (f32, 8)]
_IDS = [f"{d.name}x{n}" for d, n in _CASES]


def _data(dtype, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.is_float:
        return rng.standard_normal(size).astype(dtype.numpy)
    return rng.integers(-50 if dtype is i32 else 0, 100, size).astype(dtype.numpy)


@pytest.mark.parametrize("dtype,n", _CASES, ids=_IDS)
def test_ragged_copy_matches_numpy_and_the_element_path(runtime_client, monkeypatch,
                                                        dtype, n):
    """24 lines, 32 units: the 8 units past the end read 0 and store nothing."""
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks {dtype.name}")
    x = _data(dtype, 24 * n, n)
    y0 = np.full(24 * n, 7, dtype.numpy)
    vector = _run(c, copy_lines, {"x": x}, {"y": y0}, n, 2, 16)["y"]
    np.testing.assert_array_equal(vector, x)
    _element_path(c, monkeypatch)
    elements = _run(c, copy_lines, {"x": x}, {"y": y0}, n, 2, 16)["y"]
    np.testing.assert_array_equal(vector, elements)
    assert any(spec.misaligned == ("x", "y") for (spec, _, _) in copy_lines._compiled)


@pytest.mark.parametrize("dtype,n", _CASES, ids=_IDS)
def test_partial_last_line_reads_zeros_and_drops_stores(runtime_client, dtype, n):
    """Buffers of 2.5 lines (a tensor over the first elements of a longer buffer): the
    last line is half in range, so a checked launch takes its per-element path."""
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks {dtype.name}")
    length = 2 * n + n // 2
    x_all = _data(dtype, 4 * n, 5)
    base_x, base_y = c.tensor(x_all), c.tensor(np.full(4 * n, 7, dtype.numpy))
    x, y = (DeviceTensor(c, _prefix(c, base.handle, length, dtype), (2 * n,), (1,), dtype,
                         length, n) for base in (base_x, base_y))
    copy_lines.launch(c, CubeCount(1), CubeDim(4), x, y)
    expect = np.full(4 * n, 7, dtype.numpy)
    expect[:length] = x_all[:length]
    np.testing.assert_array_equal(base_y.numpy(), expect)


def _prefix(client, handle, length: int, dtype):
    """A handle for the first `length` elements: a view where the runtime makes them;
    wgpu binds whole buffers, and bounds come from the tensor's buffer_len."""
    try:
        return client._view_handle(handle, 0, length, dtype)
    except cubepy.LaunchError:
        return handle


@pytest.mark.parametrize("dtype,n", [(f32, 4), (f16, 8), (i32, 2), (u32, 4)],
                         ids=["f32x4", "f16x8", "i32x2", "u32x4"])
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_mixed_line_and_element_reads_match(runtime_client, monkeypatch, dtype, n, checked):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks {dtype.name}")
    lines = 33  # one more line than units: x[i + 1] stays in range unchecked
    x = _data(dtype, lines * n, 11)
    out0 = np.zeros(lines * n, dtype.numpy)
    got = _run(c, mixed_access, {"x": x}, {"out": out0}, n, 1, 32, checked)["out"]
    rows = x.reshape(lines, n)
    v, nxt = rows[:32], rows[1:33]
    second = v[:, 1:2]
    w = np.where(second > 0, nxt, v)
    expect = np.zeros((lines, n), dtype.numpy)
    expect[:32] = v + w + second
    # Where w is v, a GPU driver may contract `v + v + second` into one fma(v, 2,
    # second), rounded once instead of twice (Vulkan allows it, as CUDA's fmad does):
    # floats agree to a rounding, integers exactly.
    same = (np.testing.assert_array_equal if dtype.is_int else
            partial(np.testing.assert_allclose, rtol=2 * np.finfo(dtype.numpy).eps, atol=0))
    same(got.reshape(lines, n), expect)
    _element_path(c, monkeypatch)
    again = _run(c, mixed_access, {"x": x}, {"out": out0}, n, 1, 32, checked)["out"]
    same(got, again)


@pytest.mark.parametrize("dtype,n", [(f32, 4), (f32, 2), (u32, 4), (f16, 8)],
                         ids=["f32x4", "f32x2", "u32x4", "f16x8"])
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_shared_line_array_matches_numpy(runtime_client, dtype, n, checked):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks {dtype.name}")
    x = _data(dtype, 64 * n, 3)
    got = _run(c, shared_shift, {"x": x}, {"out": np.zeros(64 * n, dtype.numpy)}, n, 2, 32,
               checked)["out"]
    rows = x.reshape(2, 32, n)
    expect = np.roll(rows, -1, axis=1) + rows[:, :, :1]
    np.testing.assert_array_equal(got.reshape(2, 32, n), expect)


@pytest.mark.parametrize("runtime", WGPU)
@pytest.mark.parametrize("dtype,n", [(f32, 4), (f16, 8), (i32, 2)],
                         ids=["f32x4", "f16x8", "i32x2"])
def test_wgpu_matches_the_cpu_runtime(runtime, dtype, n):
    x = _data(dtype, 40 * n, 13)
    results = []
    for name in ("cpu", runtime):
        c = cubepy.client(name)
        results.append(_run(c, mixed_access, {"x": x},
                            {"out": np.full(40 * n, 3, dtype.numpy)}, n, 2, 32)["out"])
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("runtime", WGPU)
def test_wgpu_buffers_are_whole_vectors(runtime):
    """Every buffer rounds up to 16 bytes: element 4 of a 5-element f32 buffer is
    component 0 of vector 1, which must exist."""
    c = cubepy.client(runtime)
    t = c.tensor(np.arange(5, dtype=np.float32))
    assert t.handle.size == 32
    np.testing.assert_array_equal(t.numpy(), np.arange(5, dtype=np.float32))


# ----------------------------------------------------------------------------- f16 words

@cube(launch=True)
def gather_elements(x: Array[Line[Numeric]], picked: Array[Numeric],
                    y: Array[Line[Numeric]]):
    """Whole lines of x into y, and single elements of x (a runtime element of another
    unit's line, and element 5 of line 1) into picked."""
    i = ABSOLUTE_POS
    y[i] = x[i]
    picked[i * u32(2)] = x[(i * u32(7)) % u32(len(x))][i % u32(8)]
    picked[i * u32(2) + u32(1)] = x[1][5]


# every class of f16: zeros, infinities, NaNs (quiet, signalling, negative), the smallest
# and largest subnormals, the smallest normal, the largest finite, ordinary values
_SPECIAL_BITS = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE55, 0x0001, 0x8001,
                 0x03FF, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xB555, 0x2E66, 0x0200]


def _special_f16(size: int, seed: int) -> np.ndarray:
    """`size` f16: every special value at several positions of a line, random bits in
    between (which hold further NaNs and subnormals)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 16, size, dtype=np.uint16)
    special = np.array(_SPECIAL_BITS, np.uint16)
    where = rng.permutation(size)[:min(size, 3 * len(special))]
    bits[where] = np.resize(special, len(where))
    return bits.view(np.float16)


def _assert_same_f16(got: np.ndarray, expect: np.ndarray) -> None:
    """Bit for bit, but for NaNs: a NaN stays a NaN (its payload may change)."""
    nan = np.isnan(expect)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got.view(np.uint16)[~nan], expect.view(np.uint16)[~nan])


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_f16_special_values_copy_exactly(runtime_client, checked):
    c = runtime_client
    if f16 not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks f16")
    x = _special_f16(64 * 8, 1)
    cubes = 5 if checked else 4  # checked: 80 units for 64 lines
    got = _run(c, copy_lines, {"x": x}, {"y": np.zeros(64 * 8, np.float16)}, 8, cubes, 16,
               checked)["y"]
    _assert_same_f16(got, x)


@pytest.mark.parametrize("length", [8 * 3 + 5, 8 * 3 + 1, 8 * 3 + 7])
def test_f16_partial_line_keeps_the_words_past_the_end(runtime_client, length):
    """A checked launch over a buffer that ends inside a word (length odd) or a line:
    the tail's half-word stores leave each word's other half, past the end, as it was."""
    c = runtime_client
    if f16 not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks f16")
    x_all = _special_f16(4 * 8, 2)
    sentinel = np.array(0x7E77, np.uint16).view(np.float16)  # a NaN with a payload
    y_all = np.full(4 * 8, sentinel)
    base_x, base_y = c.tensor(x_all), c.tensor(y_all)
    x, y = (DeviceTensor(c, _prefix(c, base.handle, length, f16), (4,), (1,), f16,
                         length, 8) for base in (base_x, base_y))
    copy_lines.launch(c, CubeCount(1), CubeDim(8), x, y)
    got = base_y.numpy()
    _assert_same_f16(got[:length], x_all[:length])
    np.testing.assert_array_equal(got[length:].view(np.uint16), y_all[length:].view(np.uint16))


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_f16_element_reads_of_word_groups(runtime_client, checked):
    c = runtime_client
    if f16 not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks f16")
    lines = 40 if checked else 64  # checked: 64 units for 40 lines
    x = _special_f16(lines * 8, 3)
    X = c.tensor(x).with_line_size(8)
    picked = c.tensor(np.zeros(2 * lines, np.float16))
    Y = c.tensor(np.zeros(lines * 8, np.float16)).with_line_size(8)
    launch = gather_elements.launch if checked else gather_elements.launch_unchecked
    launch(c, CubeCount(2), CubeDim(32), X, picked, Y)
    assert "x: array<vec4<u32>>;" in _source(gather_elements, checked, Numeric=f16,
                                              line_sizes={"x": 8, "y": 8})
    i = np.arange(lines)
    expect = np.empty(2 * lines, np.float16)
    expect[0::2] = x.reshape(lines, 8)[(i * 7) % lines, i % 8]
    expect[1::2] = x[8 + 5]
    _assert_same_f16(picked.numpy(), expect)
    _assert_same_f16(Y.numpy(), x)


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_f16_lines_through_shared_memory(runtime_client, checked):
    """A tile that memcpy_async fills element by element keeps f16 vectors; out is
    written as word groups. (Word groups in a workgroup array: shared_shift, above.)"""
    c = runtime_client
    if f16 not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks f16")
    x = _special_f16(64 * 8, 4)
    got = _run(c, staged_reverse, {"a": x}, {"out": np.zeros(64 * 8, np.float16)}, 8, 2,
               32, checked)["out"]
    _assert_same_f16(got.reshape(2, 32, 8), x.reshape(2, 32, 8)[:, ::-1])
