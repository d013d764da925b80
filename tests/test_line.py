"""Line (vectorised) element types: `Tensor[Line[T]]` launched with line sizes 1, 2, 4 on
every runtime present against numpy; broadcasts, mixed Line and scalar parameters, f16
lines, checked launches, elements, lines in shared memory, plane operations on lines,
device functions, and the user's mistakes (LaunchError, CompileError). The IR side is
in tests/test_line_ir.py."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CompileError, CubeCount, CubeDim, Float, LaunchError,
                    Line, SharedMemory, Tensor, cube, f16, f32, i32, select, u32)

import corpus

N = 256  # elements of every test buffer
SIZES = (1, 2, 4)


def _launch(kernel, c, lines: int, *args, dim: int = 16):
    kernel.launch(c, CubeCount(max(1, -(-lines // dim))), CubeDim(dim), *args)


def _skip_without(c, dtype):
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks {dtype.name}")


# ----------------------------------------------------------------------------- results

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [f32, f16], ids=["f32", "f16"])
def test_axpy_lines_match_numpy(runtime_client, n, dtype):
    c = runtime_client
    _skip_without(c, dtype)
    rng = np.random.default_rng(n)
    x = rng.standard_normal(N).astype(dtype.numpy)
    y = rng.standard_normal(N).astype(dtype.numpy)
    X, Y = c.tensor(x).with_line_size(n), c.tensor(y).with_line_size(n)
    assert Y.len == N // n
    _launch(corpus.line_axpy, c, N // n, 1.5, X, Y)
    tol = 2e-2 if dtype is f16 else 1e-6
    np.testing.assert_allclose(Y.numpy().astype(np.float64),
                               1.5 * x.astype(np.float64) + y, rtol=tol, atol=tol)
    assert (X.numpy() == x).all()  # read-only input untouched


def _mix_reference(x, y, s, n):
    x, y = x.astype(np.float32), y.astype(np.float32)
    acc = np.zeros_like(x)
    for k in range(3):
        acc += np.maximum(x, y) * np.float32(k) - np.minimum(x, np.float32(1.0))
    h = np.floor(np.abs(x) * np.float32(8.0)).astype(np.float16).astype(np.float32)
    back = h * np.float32(0.125) + np.sqrt(np.abs(y)) - np.floor(x)
    q = np.floor_divide(x, np.float32(0.75)) + np.mod(x, np.float32(0.75)) - y
    lines = np.float32(2 * (len(x) // n))  # x.buffer_len() + y.len(), both in lines
    out = (acc + back if s > 1.0 else q) + lines * np.float32(0.001) + np.clip(y, -1.0, s)
    return out + np.exp(x * np.float32(0.1)) ** 2


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("s", [0.5, 2.0])
def test_line_math_matches_numpy(runtime_client, n, s):
    c = runtime_client
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(N) * 3).astype(np.float32)
    y = (rng.standard_normal(N) * 3).astype(np.float32)
    out = c.zeros((N,), f32).with_line_size(n)
    _launch(corpus.line_mix, c, N // n, c.tensor(x).with_line_size(n),
            c.tensor(y).with_line_size(n), out, s)
    np.testing.assert_allclose(out.numpy(), _mix_reference(x, y, s, n), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("d", [-3, 0, 5])
def test_integer_lines_match_python_semantics(runtime_client, n, d):
    c = runtime_client
    x = np.random.default_rng(3).integers(-40, 40, N).astype(np.int32)
    x[:8] = [-3, -3, 0, 7, -7, 1, -1, 39]
    out = c.zeros((N,), i32).with_line_size(n)
    _launch(corpus.line_int, c, N // n, c.tensor(x).with_line_size(n), out, d)
    v = x.astype(np.int64)
    div = v // d if d else np.zeros_like(v)
    m = v + 3
    mod = np.where(m == 0, v, np.mod(v, np.where(m == 0, 1, m)))
    expect = (div + mod + (v << 2)) ^ ((v >> 1) & ~v)
    np.testing.assert_array_equal(out.numpy(), expect.astype(np.int32))


@cube(launch=True)
def scale_rows(x: Tensor[Line[f32]], scale: Array[f32], out: Tensor[Line[f32]], bias: f32):
    """Mixed parameters: a scalar element per line broadcast over it, a scalar literal
    stored into a line buffer, a compound store."""
    i = ABSOLUTE_POS
    if i >= out.len():
        return
    if scale[i] < 0.0:
        out[i] = 0.0
    else:
        out[i] = x[i] * scale[i]
        out[i] += bias


@pytest.mark.parametrize("n", SIZES)
def test_mixed_line_and_scalar_parameters(runtime_client, n):
    c = runtime_client
    rng = np.random.default_rng(5)
    x = rng.standard_normal(N).astype(np.float32)
    scale = rng.standard_normal(N // n).astype(np.float32)
    out = c.tensor(np.full(N, 9.0, np.float32)).with_line_size(n)
    _launch(scale_rows, c, N // n, c.tensor(x).with_line_size(n), c.tensor(scale), out, 0.25)
    per_element = np.repeat(scale, n)
    expect = np.where(per_element < 0, 0.0, x * per_element + np.float32(0.25))
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6, atol=1e-6)


@cube(launch=True)
def shifted_lines(x: Array[Line[f32]], out: Array[Line[f32]]):
    """Reads line i + 1, so the last units read past the end of x."""
    i = ABSOLUTE_POS
    out[i] = x[i + 1] + 1.0


@pytest.mark.parametrize("n", (2, 4))
def test_checked_launch_reads_zero_lines_and_drops_stores(runtime_client, n):
    c = runtime_client
    x = np.arange(4 * n, dtype=np.float32)  # 4 lines
    out = c.tensor(np.full(6 * n, -1.0, np.float32)).with_line_size(n)  # 6 lines
    after = c.tensor(np.full(64, 5.0, np.float32))
    # 8 units: lines 3..5 of x are past its end (read 0), lines 6, 7 of out are dropped
    shifted_lines.launch(c, CubeCount(1), CubeDim(8), c.tensor(x).with_line_size(n), out)
    expect = np.concatenate([x[n:] + 1, np.ones(3 * n, np.float32)])
    np.testing.assert_array_equal(out.numpy(), expect)
    assert (after.numpy() == 5).all()


@cube
def add_into(dst: Array[Line[Float]], src: Array[Line[Float]], i: u32):
    dst[i] = dst[i] + src[i]


@cube(launch=True)
def twice_through_device_function(a: Array[Line[Float]], b: Array[Line[Float]]):
    i = ABSOLUTE_POS
    if i < a.len():
        add_into(a, b, i)
        add_into(a, b, i)


@pytest.mark.parametrize("n", (1, 4))
def test_line_buffers_pass_to_device_functions(runtime_client, n):
    c = runtime_client
    a = np.arange(32, dtype=np.float32)
    b = np.full(32, 0.5, np.float32)
    A = c.tensor(a).with_line_size(n)
    _launch(twice_through_device_function, c, 32 // n, A, c.tensor(b).with_line_size(n))
    np.testing.assert_array_equal(A.numpy(), a + 1.0)


# ----------------------------------------------------------------------------- launch errors

def test_unsupported_line_size_is_a_launch_error():
    c = cubepy.client("cpu")
    x = c.tensor(np.ones(12, np.float32)).with_line_size(3)
    y = c.tensor(np.ones(12, np.float32)).with_line_size(4)
    with pytest.raises(LaunchError) as info:
        corpus.line_axpy.launch(c, CubeCount(1), CubeDim(4), 1.0, x, y)
    assert "'x'" in str(info.value) and "line size 3" in str(info.value)


def test_last_dimension_not_divisible_is_a_launch_error():
    c = cubepy.client("cpu")
    t = c.tensor(np.ones((3, 6), np.float32))
    with pytest.raises(LaunchError) as info:
        t.with_line_size(4)
    assert "6" in str(info.value)
    assert t.with_line_size(2).len == 9


def test_line_tensor_for_a_scalar_parameter_is_a_launch_error():
    c = cubepy.client("cpu")
    x = c.tensor(np.ones(8, np.float32)).with_line_size(2)
    with pytest.raises(LaunchError) as info:
        corpus.axpy.launch(c, CubeCount(1), CubeDim(4), 1.0, x, c.tensor(np.ones(8,
                                                                              np.float32)))
    assert "'x'" in str(info.value)


def test_two_line_sizes_in_one_operation_is_a_compile_error():
    c = cubepy.client("cpu")
    x = c.tensor(np.ones(8, np.float32)).with_line_size(4)
    y = c.tensor(np.ones(8, np.float32)).with_line_size(2)
    with pytest.raises(CompileError) as info:
        corpus.line_axpy.launch(c, CubeCount(1), CubeDim(4), 1.0, x, y)
    assert "f32x4" in str(info.value) and "f32x2" in str(info.value)


# ----------------------------------------------------------------------------- compile errors

def _error(kernel, **line_sizes) -> CompileError:
    with pytest.raises(CompileError) as info:
        kernel.ir(line_sizes=line_sizes)
    return info.value


def test_a_line_comparison_is_not_a_condition():
    @cube(launch=True)
    def k(x: Array[Line[f32]], out: Array[u32]):
        if x[0] > 1.0:
            out[0] = u32(1)
    err = _error(k, x=4)
    assert "boolx4" in str(err) and "x[0] > 1.0" in str(err)
    assert k.ir(line_sizes={"x": 1})  # line size 1: a plain f32 comparison


def test_chained_line_comparison():
    @cube(launch=True)
    def k(x: Array[Line[f32]], out: Array[Line[u32]]):
        out[0] = u32(0.0 < x[0] < 1.0)
    assert "chained comparison" in str(_error(k, x=2, out=2))


def test_line_element_errors():
    @cube(launch=True)
    def k(x: Array[Line[f32]], out: Array[f32]):
        out[0] = x[0][4]
    err = _error(k, x=4)
    assert "element 4" in str(err) and "0 to 3" in str(err)


    @cube(launch=True)
    def k3(x: Array[Line[f32]], out: Array[f32]):
        out[0] = x[0][1.5]
    assert "index" in str(_error(k3, x=2))


def _reduce_reference(x, n):
    relu = np.maximum(x, 0).reshape(-1, n)
    lines = x.reshape(-1, n)
    i = np.arange(len(lines))
    pick = np.where(i % 3 < n, lines[i, np.minimum(i % 3, n - 1)], 0)
    mask = (x >= 1.0).astype(np.uint32) + np.where(x < -1.0, 2, 0).astype(np.uint32)
    return relu.sum(1) + pick * np.float32(100.0), mask


@pytest.mark.parametrize("n", SIZES)
def test_compare_select_and_elements_match_numpy(runtime_client, n):
    c = runtime_client
    x = (np.random.default_rng(9).standard_normal(N) * 2).astype(np.float32)
    out = c.zeros((N // n,), f32)
    mask = c.zeros((N,), u32).with_line_size(n)
    _launch(corpus.line_reduce, c, N // n, c.tensor(x).with_line_size(n), out, mask)
    want_out, want_mask = _reduce_reference(x, n)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(mask.numpy(), want_mask)


def test_element_at_runtime_index_folds_after_unroll():
    text = corpus.line_reduce.ir(cube_dim=(64, 1, 1), line_sizes={"x": 2, "mask": 2})
    assert "select(eq(mod(%i, 3:u32), 0:u32), %v_0" in text  # runtime index: a select
    assert "%s = add(%s, %relu_1)" in text  # unrolled: element 1 directly


@cube(launch=True)
def nan_flags(x: Array[Line[f32]], out: Array[Line[u32]]):
    i = ABSOLUTE_POS
    v = x[i]
    out[i] = u32(cubepy.math.isnan(v)) + u32(cubepy.math.isinf(v)) * u32(2)
    out[i] += select(cubepy.math.isnan(v), u32(10), u32(0))


@pytest.mark.parametrize("n", SIZES)
def test_isnan_and_isinf_of_lines_give_bool_lines(runtime_client, n):
    c = runtime_client
    x = np.array([0, np.nan, np.inf, -np.inf, 1, 2, np.nan, 3], np.float32)
    out = c.zeros((8,), u32).with_line_size(n)
    nan_flags.launch(c, CubeCount(8 // n), CubeDim(1), c.tensor(x).with_line_size(n), out)
    np.testing.assert_array_equal(out.numpy(), np.isnan(x) * 11 + np.isinf(x) * 2)


def test_atomic_on_a_shared_line_buffer():
    # (atomics on a Line tensor are elementwise: tests/test_lang_atomics.py)
    @cube(launch=True)
    def k(x: Array[u32]):
        s = cubepy.SharedMemory(Line[u32], 4, 2)
        cubepy.atomic_add(s, 0, u32(1))
    err = _error(k)
    assert "atomic_add()" in str(err) and "shared Line buffer" in str(err)


def test_mixing_line_element_types():
    @cube(launch=True)
    def k(x: Array[Line[f32]], h: Array[Line[f16]]):
        x[0] = x[0] + h[0]
    err = _error(k, x=4, h=4)
    assert "f32x4" in str(err) and "f16x4" in str(err) and "'+'" in str(err)


def test_line_into_scalar_variable():
    @cube(launch=True)
    def k(x: Array[Line[f32]], out: Array[f32]):
        v = out[0]
        v = x[0]
        out[0] = v
    err = _error(k, x=4)
    assert "f32x4" in str(err) and "'v'" in str(err)
    assert err.lineno is not None


def test_scalar_of_another_type_broadcast():
    @cube(launch=True)
    def k(x: Array[Line[f32]], n: u32):
        x[0] = x[0] * n
    err = _error(k, x=4)
    assert "u32" in str(err) and "f32" in str(err)


def test_bad_line_sizes_option():
    with pytest.raises(TypeError, match="no Line parameter 'a'"):
        corpus.line_axpy.ir(Float=f32, line_sizes={"a": 4})
    with pytest.raises(TypeError, match="line size"):
        corpus.line_axpy.ir(Float=f32, line_sizes={"x": 3})


@cube
def scaled_relu(v: Float, k: Float) -> Float:
    """Generic over Float: called with lines, Float binds to the line type."""
    return max(v, Float(0.0)) * k + Float(1)


@cube(launch=True)
def generic_device_function_on_lines(x: Array[Line[f32]], out: Array[Line[f32]],
                                     s: Array[f32]):
    i = ABSOLUTE_POS
    if i < out.len():
        out[i] = scaled_relu(x[i], x[i])
        s[i] = scaled_relu(x[i][0], f32(2.0))


@pytest.mark.parametrize("n", SIZES)
def test_generic_device_function_takes_lines(runtime_client, n):
    c = runtime_client
    x = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    out, s = c.zeros((64,), f32).with_line_size(n), c.zeros((64 // n,), f32)
    _launch(generic_device_function_on_lines, c, 64 // n, c.tensor(x).with_line_size(n),
            out, s)
    np.testing.assert_allclose(out.numpy(), np.maximum(x, 0) * x + 1, rtol=1e-6)
    np.testing.assert_allclose(s.numpy(), np.maximum(x[::n], 0) * 2 + 1, rtol=1e-6)


def test_error_messages_name_lines():
    @cube(launch=True)
    def k(x: Array[Line[f32]], y: Array[f32], n: u32):
        y[0] = x[0]
    err = _error(k, x=4)
    assert "f32x4" in str(err) and "one element (v[k])" in str(err)

    @cube(launch=True)
    def k2(x: Array[Line[f32]], n: u32):
        x[0] = x[1] + n
    err = _error(k2, x=2)
    assert "broadcast u32 to a line of f32" in str(err) and "f32(...)" in str(err)


@cube(launch=True)
def plane_ops_on_lines(x: Array[Line[f32]], total: Array[Line[f32]],
                       swapped: Array[Line[f32]]):
    i = ABSOLUTE_POS
    v = x[i]
    total[i] = cubepy.plane_sum(v)
    swapped[i] = cubepy.plane_shuffle_xor(v, u32(1))


@pytest.mark.parametrize("n", (1, 4))
def test_plane_operations_run_per_element(runtime_client, n):
    from test_plane import DIM, plane_size
    c = runtime_client
    if c.runtime == "wgpu" and "subgroup" not in " ".join(c.limits.features):
        pytest.skip("no subgroup operations on this adapter")
    p = plane_size(c)
    x = np.random.default_rng(4).integers(-8, 8, DIM * n).astype(np.float32)
    total = c.zeros((DIM * n,), f32).with_line_size(n)
    swapped = c.zeros((DIM * n,), f32).with_line_size(n)
    plane_ops_on_lines.launch(c, CubeCount(1), CubeDim(DIM), c.tensor(x).with_line_size(n),
                              total, swapped)
    lanes = x.reshape(DIM // p, p, n)  # plane, lane, element
    want_total = np.broadcast_to(lanes.sum(1, keepdims=True), lanes.shape).reshape(-1)
    want_swapped = lanes[:, np.arange(p) ^ 1, :].reshape(-1)
    np.testing.assert_array_equal(total.numpy(), want_total)
    np.testing.assert_array_equal(swapped.numpy(), want_swapped)


@cube(launch=True)
def far_line(x: Array[Line[f32]], out: Array[Line[f32]], far: u32, far_signed: i32):
    out[0] = x[far] + 1.0
    out[1] = x[far_signed] + 2.0
    out[far] = x[0]  # dropped: past the end


@pytest.mark.parametrize("far", [2**30, 2**30 + 1, 2**32 - 1])
def test_huge_line_index_never_wraps_onto_the_buffer(runtime_client, far):
    c = runtime_client
    x = c.tensor(np.arange(16, dtype=np.float32) + 10).with_line_size(4)
    out = c.zeros((8,), f32).with_line_size(4)
    far_line.launch(c, CubeCount(1), CubeDim(1), x, out, far, min(far, 2**31 - 1))
    np.testing.assert_array_equal(out.numpy(), [1.0] * 4 + [2.0] * 4)


@pytest.mark.parametrize("n", (1, 4))
def test_vectorized_example_verifies(runtime_client, capsys, n):
    from examples_loader import load_example
    example = load_example("vectorized_bias_relu")
    assert example.main(["--runtime", runtime_client.runtime, "--rows", "33", "--cols",
                         "96", "--line-size", str(n)]) == 0
    out = capsys.readouterr().out
    assert "check:   OK" in out and f"line size {n}" in out
    assert example.main(["--show-source", "metal"]) == 0
    assert "kernel void" in capsys.readouterr().out


@cube(launch=True)
def shuffle_elements(x: Array[Line[f32]], out: Array[Line[f32]], n: u32):
    """Lines built from scalars, elements assigned (constant and runtime index), a
    buffer line rewritten from its own elements."""
    i = ABSOLUTE_POS
    v = x[i]
    v = Line(v[1], v[0], v[3], v[2])
    out[i] = v
    x[i] = Line(x[i][3], x[i][2], x[i][1], x[i][0])
    v[n] = v[n + u32(1)]
    v[0] += 0.5
    out[i] += v


def test_lines_built_and_elements_assigned(runtime_client):
    c = runtime_client
    xh = np.arange(32, dtype=np.float32)
    X, out = c.tensor(xh).with_line_size(4), c.zeros((32,), f32).with_line_size(4)
    _launch(shuffle_elements, c, 8, X, out, 1)
    v = xh.reshape(8, 4)[:, [1, 0, 3, 2]]
    v2 = v.copy()
    v2[:, 1] = v[:, 2]
    v2[:, 0] += 0.5
    np.testing.assert_array_equal(out.numpy().reshape(8, 4), v + v2)
    np.testing.assert_array_equal(X.numpy().reshape(8, 4), xh.reshape(8, 4)[:, ::-1])


def test_line_construction_errors():
    @cube(launch=True)
    def k(x: Array[Line[f32]]):
        x[0] = Line(x[0], x[1])
    assert "scalars, not lines" in str(_error(k, x=2))

    @cube(launch=True)
    def k2(x: Array[Line[f32]], n: u32):
        x[0] = Line(1.0, n)
    assert "Line(...)" in str(_error(k2, x=2))

    @cube(launch=True)
    def k3(x: Array[Line[f32]]):
        x[0][1] = 2.0
    assert "element of a line variable" in str(_error(k3, x=2))

    @cube(launch=True)
    def k4(x: Array[Line[f32]]):
        v = x[0]
        v[2] = 1.0
        x[0] = v
    assert "element 2" in str(_error(k4, x=2))
    assert "Line(...) takes 1 to 16" in str(_error(_line_of_nothing(), x=2))


def _line_of_nothing():
    @cube(launch=True)
    def k(x: Array[Line[f32]]):
        x[0] = Line()
    return k


@pytest.mark.parametrize("n", SIZES)
def test_lines_in_shared_memory(runtime_client, n):
    c = runtime_client
    x = np.arange(128 * n, dtype=np.float32)
    out = c.zeros((128 * n,), f32).with_line_size(n)
    corpus.line_shared_rotate.launch(c, CubeCount(2), CubeDim(64),
                                     c.tensor(x).with_line_size(n), out)
    lines = (x.reshape(2, 64, n) + 1)
    want = np.roll(lines, -1, axis=1)
    if n == 2:
        want = want[:, :, ::-1]
    np.testing.assert_array_equal(out.numpy(), (want + 64).reshape(-1))


def test_shared_line_errors():
    @cube(launch=True)
    def k(x: Array[Line[f32]]):
        tile = SharedMemory(Line[f32], 8)
        tile[0] = x[0]
    assert "third argument" in str(_error(k, x=2))

    @cube(launch=True)
    def k2(x: Array[Line[f32]]):
        tile = SharedMemory(f32, 8, 2)
        tile[0] = x[0][0]
    assert "Line element type" in str(_error(k2, x=2))

    @cube(launch=True)
    def k3(x: Array[Line[f32]], n: u32):
        tile = SharedMemory(Line[f32], 8, 3)
        tile[0] = x[0]
    assert "1, 2, 4 or 8" in str(_error(k3, x=2))


@cube
def softplus_line(v: Line[Float]) -> Line[Float]:
    """Line[Float] binds Float to the element type: Float(1.0) is a broadcast scalar."""
    return cubepy.math.log(cubepy.math.exp(v) + Float(1.0))


@cube
def doubled(v: Line[f32]) -> Line[f32]:
    return v * 2.0


@cube(launch=True)
def line_annotated_device_functions(x: Array[Line[Float]], out: Array[Line[Float]]):
    i = ABSOLUTE_POS
    if i < out.len():
        out[i] = softplus_line(x[i]) + doubled(x[i])


@pytest.mark.parametrize("n", (1, 4))
def test_device_functions_annotated_with_lines(runtime_client, n):
    c = runtime_client
    x = np.random.default_rng(8).standard_normal(64).astype(np.float32)
    out = c.zeros((64,), f32).with_line_size(n)
    _launch(line_annotated_device_functions, c, 64 // n, c.tensor(x).with_line_size(n), out)
    np.testing.assert_allclose(out.numpy(), np.log(np.exp(x) + 1) + 2 * x, rtol=1e-5,
                               atol=1e-5)


def test_device_function_line_element_type_is_checked():
    @cube(launch=True)
    def k(x: Array[Line[i32]], out: Array[Line[f32]]):
        out[0] = doubled(x[0])
    err = _error(k, x=4, out=4)
    assert "takes elements of f32" in str(err) and "i32x4" in str(err)
