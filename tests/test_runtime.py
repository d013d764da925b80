"""Differential tests: the same kernels on every runtime present (cpu always; wgpu and
cuda where available), against numpy references. Public API only."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, Tensor, CubeCount, CubeDim, LaunchError, bf16, cube,
                    f16, f32, f64, i32, u32)
from cubepy.ir.types import ALL_DTYPES, DType, Generic
from cubepy.lang import LineOf

import corpus

LIN = CubeDim(64, 1, 1)


def _seed_inputs(rng, batch, m, n, dtype=np.float32):
    lhs = rng.random((1, m, n)).astype(dtype)
    rhs = rng.random((batch, n, n)).astype(dtype)
    bias = (rng.random((batch, m, n)) - 0.5 * n / 2).astype(dtype)
    return lhs, rhs, bias


@pytest.mark.parametrize("batch,m,n,count", [(32, 32, 32, (2, 2, 32)),
                                             (3, 20, 19, (2, 2, 3)),
                                             (2, 7, 33, (1, 3, 2))])
def test_seed_matmul_add_relu(runtime_client, batch, m, n, count):
    """lhs [1, m, n] broadcast over the batch of rhs [batch, n, n] (the kernel reads
    dim_k from rhs's last dimension, so K == n)."""
    rng = np.random.default_rng(batch * 100 + m)
    lhs, rhs, bias = _seed_inputs(rng, batch, m, n)
    c = runtime_client
    out = c.empty((batch, m, n), f32)
    corpus.fused_matmul_add_relu_kernel.launch(c, CubeCount(*count), CubeDim(16, 16, 1),
                                               c.tensor(lhs), c.tensor(rhs), c.tensor(bias),
                                               out)
    expect = np.maximum(lhs @ rhs + bias, 0)
    assert (expect > 0).any() and (expect == 0).any()
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-5, atol=1e-5)


def test_seed_f16(runtime_client):
    c = runtime_client
    if f16 not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} device lacks f16")
    rng = np.random.default_rng(5)
    lhs, rhs, bias = _seed_inputs(rng, 4, 16, 16, np.float16)
    out = c.zeros((4, 16, 16), f16)
    corpus.fused_matmul_add_relu_kernel.launch(c, CubeCount(1, 1, 4), CubeDim(16, 16, 1),
                                               c.tensor(lhs), c.tensor(rhs), c.tensor(bias),
                                               out)
    got = out.numpy()
    assert got.dtype == np.float16
    expect = np.maximum(lhs.astype(np.float32) @ rhs.astype(np.float32) + bias, 0)
    np.testing.assert_allclose(got.astype(np.float32), expect, rtol=2e-2, atol=2e-2)


def test_shared_reduce(runtime_client):
    c = runtime_client
    x = np.random.default_rng(1).random(64 * 5).astype(np.float32)
    out = c.zeros(5, f32)
    corpus.shared_reduce.launch(c, CubeCount(5), LIN, c.tensor(x), out)
    np.testing.assert_allclose(out.numpy(), x.reshape(5, 64).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("n", [64, 50, 1])
def test_guarded_neighbour(runtime_client, n):
    c = runtime_client
    x = np.arange(1, 65, dtype=np.float32) ** 2
    out = c.tensor(np.full(64, -7.0, np.float32))
    corpus.guarded_neighbour.launch(c, CubeCount(1), LIN, c.tensor(x), out, n)
    expect = np.full(64, -7.0, np.float32)
    expect[0] = x[0]
    expect[1:n] = x[: n - 1] + x[1:n]
    np.testing.assert_array_equal(out.numpy(), expect)


def test_atomic_max_units(runtime_client):
    c = runtime_client
    out = c.tensor(np.array([-1000], np.int32))
    corpus.atomic_max_units.launch(c, CubeCount(1), CubeDim(128), out)
    assert out.numpy()[0] == 127


def test_histogram16(runtime_client):
    c = runtime_client
    values = np.random.default_rng(2).integers(0, 1000, 3001).astype(np.uint32)
    bins = c.zeros(16, u32)
    corpus.histogram16.launch(c, CubeCount(-(-3001 // 64)), LIN, c.tensor(values), bins)
    np.testing.assert_array_equal(bins.numpy(), np.bincount(values % 16, minlength=16))


def test_int_floor_semantics(runtime_client):
    c = runtime_client
    vals = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 2**31 - 1, -2**31]
    pairs = [(x, y) for x in vals for y in vals]
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    q, r = c.zeros(len(a), i32), c.zeros(len(a), i32)
    corpus.int_semantics.launch(c, CubeCount(-(-len(a) // 64)), LIN, c.tensor(a),
                                c.tensor(b), q, r)
    for (x, y), qq, rr in zip(pairs, q.numpy(), r.numpy()):
        if y == 0:
            eq, er = 0, x
        elif (x, y) == (-2**31, -1):
            eq, er = -2**31, 0
        else:
            eq, er = x // y, x % y
        assert (int(qq), int(rr)) == (eq, er), (x, y)


@cube(launch=True)
def shifted_copy(x: Array[f32], out: Array[f32]):
    i = ABSOLUTE_POS
    out[i + 2] = x[i + 3] + 1.0


def test_checked_launch_out_of_range(runtime_client):
    """Reads past the end give 0, writes past the end are dropped; neighbouring buffers
    stay untouched."""
    c = runtime_client
    before = c.tensor(np.full(64, 5.0, np.float32))
    x = c.tensor(np.arange(10, dtype=np.float32))
    out = c.tensor(np.full(10, -1.0, np.float32))
    after = c.tensor(np.full(64, 5.0, np.float32))
    shifted_copy.launch(c, CubeCount(1), CubeDim(32), x, out)
    expect = np.array([-1, -1] + [i + 1 + 1.0 for i in range(2, 9)] + [1.0], np.float32)
    np.testing.assert_array_equal(out.numpy(), expect)
    assert (before.numpy() == 5).all() and (after.numpy() == 5).all()
    assert (x.numpy() == np.arange(10)).all()


def _bound(elem, spec):
    if isinstance(elem, Generic):
        return spec[elem.name]
    return getattr(elem, "elem", elem)


def _case_args(c, kernel, spec, rng, size):
    """Arguments for a corpus kernel: 1-D tensors of `size` random values, scalars 3."""
    args = []
    for p in kernel.params:
        if p.kind == "comptime":
            args.append(spec[p.name])
            continue
        elem, line = p.elem, 1
        if isinstance(elem, LineOf):  # a Line parameter: its line size from the spec
            elem, line = elem.elem, spec.get("line_sizes", {}).get(p.name, 1)
        t = _bound(elem, spec)
        if p.kind == "scalar":
            args.append(True if t.is_bool else 3.0 if t.is_float else 3)
            continue
        if t.is_float:
            data = rng.standard_normal(size) * 2
        elif t.kind == "uint":
            data = rng.integers(0, 40, size)
        else:
            data = rng.integers(-20, 20, size)
        args.append(c.tensor(data.astype(t.numpy)).with_line_size(line))
    return args


def _run_case(c, kernel, cube_dim, spec):
    rng = np.random.default_rng(11)
    if kernel is corpus.fused_matmul_add_relu_kernel:
        dt = spec["Float"].numpy
        lhs, rhs, bias = _seed_inputs(rng, 2, 16, 16, dt)
        args = [c.tensor(lhs), c.tensor(rhs), c.tensor(bias), c.zeros((2, 16, 16),
                                                                      spec["Float"])]
        count = CubeCount(1, 1, 2)
    else:
        args = _case_args(c, kernel, spec, rng, 256)
        count = CubeCount(max(1, 256 // (cube_dim[0] * cube_dim[1] * cube_dim[2])))
    kernel.launch(c, count, CubeDim(*cube_dim), *args)
    return [a.numpy() for a in args if hasattr(a, "numpy")]


@pytest.mark.parametrize("case", corpus.SOURCE_CASES, ids=[x[0] for x in corpus.SOURCE_CASES])
def test_source_cases_run(runtime_client, case):
    """Every corpus kernel the runtime can run; GPU results match the cpu runtime."""
    name, kernel, cube_dim, spec, targets = case
    c = runtime_client
    if c.runtime != "cpu" and c.target not in targets:
        pytest.skip(f"{name} is not meant for {c.target}")
    dtypes = [v for v in spec.values() if isinstance(v, DType)]
    if any(t not in c.limits.dtypes for t in dtypes):
        pytest.skip(f"{c.runtime} lacks a dtype of {name}")
    if any(t not in cubepy.client("cpu").limits.dtypes for t in dtypes):  # axpy_bf16
        pytest.skip(f"the cpu runtime, the reference, lacks a dtype of {name} "
                    f"(test_runtime_cuda.py runs it against numpy)")
    got = _run_case(c, kernel, cube_dim, spec)
    ref = _run_case(cubepy.client("cpu"), kernel, cube_dim, spec)
    assert len(got) == len(ref) and got
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype and g.shape == r.shape
        if g.dtype.kind == "f":
            tol = 2e-2 if g.dtype == np.float16 else 1e-4
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, r)


# ----------------------------------------------------------------------------- LaunchError

def _axpy_args(c, dt=f32):
    x = c.tensor(np.ones(64, dt.numpy))
    y = c.tensor(np.ones(64, dt.numpy))
    return x, y


def _launch_error(fn) -> LaunchError:
    with pytest.raises(LaunchError) as info:
        fn()
    return info.value


def test_launch_error_argument_count(runtime_client):
    c = runtime_client
    x, _ = _axpy_args(c)
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1), LIN, 2.0, x))
    assert "'y'" in str(err)


def test_launch_error_dtype_not_fitting(runtime_client):
    c = runtime_client
    x = c.tensor(np.ones(64, np.int32))
    y = c.tensor(np.ones(64, np.float32))
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1), LIN, 2.0, x, y))
    assert "'x'" in str(err) and "i32" in str(err)


def test_launch_error_placeholder_two_dtypes(runtime_client):
    c = runtime_client
    other = next(t for t in (f16, f64) if t in c.limits.dtypes)
    x = c.tensor(np.ones(64, np.float32))
    y = c.tensor(np.ones(64, other.numpy))
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1), LIN, 2.0, x, y))
    assert "'y'" in str(err) and "Float" in str(err)


def test_launch_error_tensor_from_other_client(runtime_client):
    from cubepy.runtime.cpu import CpuClient
    c = runtime_client
    x, _ = _axpy_args(c)
    y = CpuClient().tensor(np.ones(64, np.float32))
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1), LIN, 2.0, x, y))
    assert "'y'" in str(err)
    # also once a launch with the same signature has been planned (the fast path)
    _, y_own = _axpy_args(c)
    corpus.axpy.launch(c, CubeCount(1), LIN, 2.0, x, y_own)
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1), LIN, 2.0, x, y))
    assert "'y'" in str(err)


def test_launch_error_cube_dim_and_count(runtime_client):
    c = runtime_client
    x, y = _axpy_args(c)
    too_wide = c.limits.max_cube_dim[0] + 1
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1), CubeDim(too_wide),
                                                   2.0, x, y))
    assert "cube_dim" in str(err)
    too_many = c.limits.max_cube_count[1] + 1
    err = _launch_error(lambda: corpus.axpy.launch(c, CubeCount(1, too_many), LIN,
                                                   2.0, x, y))
    assert "cube_count" in str(err)


@cube(launch=True)
def store_bf16_scalar(a: bf16, out: Array[f32]):
    out[ABSOLUTE_POS] = f32(a)


def test_launch_error_dtype_device_lacks(runtime_client):
    c = runtime_client
    lacking = [t for t in ALL_DTYPES if t not in c.limits.dtypes]
    if bf16 not in lacking:
        pytest.skip(f"{c.runtime} has bf16")
    out = c.zeros(64, f32)
    err = _launch_error(lambda: store_bf16_scalar.launch(c, CubeCount(1), LIN, 1.0, out))
    assert "'a'" in str(err) and "bf16" in str(err)
    for t in lacking:
        with pytest.raises(LaunchError, match=t.name):
            c.zeros(4, t)


# ----------------------------------------------------------------------------- more corpus

def test_axpy_and_tags(runtime_client):
    c = runtime_client
    rng = np.random.default_rng(3)
    x = rng.standard_normal(200).astype(np.float32)
    y = rng.standard_normal(200).astype(np.float32)
    ty = c.tensor(y)
    corpus.axpy.launch(c, CubeCount(4), LIN, 1.5, c.tensor(x), ty)
    np.testing.assert_allclose(ty.numpy(), np.float32(1.5) * x + y, rtol=1e-6, atol=1e-6)
    for tag, expect in (("zero", np.zeros_like(x)), ("sq", x * x + 1)):
        out = c.tensor(np.full(200, 9.0, np.float32))
        corpus.square_plus_tag.launch(c, CubeCount(4), LIN, c.tensor(x), out, tag)
        np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6)


def test_unrolled_poly_and_math(runtime_client):
    c = runtime_client
    x = np.linspace(-3, 3, 130).astype(np.float32)
    out = c.zeros(130, f32)
    corpus.unrolled_poly.launch(c, CubeCount(3), LIN, c.tensor(x), out, 4)
    np.testing.assert_allclose(out.numpy(), (((x + 2) * x + 3) * x + 4), rtol=1e-5, atol=1e-5)
    out = c.zeros(130, f32)
    corpus.math_mix.launch(c, CubeCount(3), LIN, c.tensor(x), out)
    t = np.exp(-x * x) + np.sqrt(np.abs(x)) + np.clip(x, -1, 1)
    expect = np.where(x > 0, t, np.minimum(t, x)) + np.where(x < 0.5, 1.0, 2.0)
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-5, atol=1e-5)


def test_loops_and_flow(runtime_client):
    c = runtime_client
    x = np.array(list(range(-5, 6)) + [100, -100, 2**20], np.int32)
    out = c.tensor(np.full(len(x) + 3, 55, np.int32))  # lanes past len(x) terminate
    corpus.loops_and_flow.launch(c, CubeCount(1), LIN, c.tensor(x), out)
    expect = []
    for v in x.tolist():
        total = 0
        for j in range(1, 11):
            if j % 2 == 0 and v > 0:
                continue
            total += j * v
        total -= sum(range(10, 0, -3))
        expect.append(total if total > 0 or v == 0 else -total)
    assert out.numpy().tolist() == expect + [55] * 3


def test_cast_kernel(runtime_client):
    c = runtime_client
    x = np.array([1.7, -1.7, 0.0, 3e9, -3e9, 250.5, -0.2, 7], np.float32)
    oi, ou = c.zeros(8, i32), c.zeros(8, u32)
    corpus.cast_kernel.launch(c, CubeCount(1), LIN, c.tensor(x), oi, ou)
    assert oi.numpy().tolist() == [1, -1, 0, 2**31 - 1, -2**31, 250, 0, 7]
    assert ou.numpy().tolist() == [i * 3 + int(v > 0) for i, v in enumerate(x)]


@cube(launch=True)
def collatz_steps(x: Array[u32], out: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(x):
        v = x[i]
        steps = u32(0)
        while v != 1:
            if v % 2 == 0:
                v = v // 2
            else:
                v = 3 * v + 1
            steps += 1
            if steps >= 500:
                break
        out[i] = steps


def test_divergent_while(runtime_client):
    c = runtime_client
    x = np.arange(1, 301, dtype=np.uint32)
    out = c.zeros(300, u32)
    collatz_steps.launch(c, CubeCount(5), LIN, c.tensor(x), out)
    expect = []
    for v in x.tolist():
        s = 0
        while v != 1 and s < 500:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            s += 1
        expect.append(s)
    assert out.numpy().tolist() == expect


@cube(launch=True)
def compact_positive(x: Array[f32], count: Array[u32], out: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(x):
        if x[i] > 0.0:
            slot = cubepy.atomic_add(count, 0, u32(1))
            out[slot] = x[i]


def test_atomic_old_values_compact(runtime_client):
    """atomic_add's returned old values are distinct slots: a stream compaction."""
    c = runtime_client
    x = np.random.default_rng(9).standard_normal(1000).astype(np.float32)
    count, out = c.zeros(1, u32), c.zeros(1000, f32)
    compact_positive.launch(c, CubeCount(16), LIN, c.tensor(x), count, out)
    k = int((x > 0).sum())
    assert count.numpy()[0] == k
    got = out.numpy()
    assert sorted(got[:k].tolist()) == sorted(x[x > 0].tolist()) and (got[k:] == 0).all()


@cube(launch=True)
def shape_probe(t: Tensor[f32], dims: Array[u32], out: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(dims):
        out[i] = t.shape(dims[i]) + t.stride(dims[i]) * u32(1000)


def test_shape_of_a_missing_dimension_is_zero(runtime_client):
    """A checked launch reads shape/stride past the rank (or past MAX_RANK, e.g. after
    `rank() - 2` wrapped on a rank-1 tensor) as 0 on every runtime."""
    c = runtime_client
    t = c.tensor(np.zeros((3, 4), np.float32))
    dims = np.array([0, 1, 2, 7, 8, 4294967295], np.uint32)
    out = c.zeros(len(dims), u32)
    shape_probe.launch(c, CubeCount(1), CubeDim(8), t, c.tensor(dims), out)
    assert out.numpy().tolist() == [3 + 4000, 4 + 1000, 0, 0, 0, 0]


@cube(launch=True)
def constant_float_operations(out: Array[f32]):
    out[0] = f32(5.0) / f32(2.0)
    out[1] = f32(1.0) / f32(0.0)
    out[2] = cubepy.math.sqrt(f32(-1.0))
    out[3] = cubepy.math.exp(f32(100.0))
    out[4] = cubepy.math.floor(f32(cubepy.math.exp(f32(200.0))))
    out[5] = f32(7.0) // f32(0.0)


def test_float_operations_on_constants_the_folder_leaves(runtime_client):
    """Division and math functions on constants are left to the target; in WGSL they
    would be const-expressions, and a non-finite one failed shader creation."""
    c = runtime_client
    out = c.zeros(6, f32)
    constant_float_operations.launch(c, CubeCount(1), CubeDim(1), out)
    got = out.numpy()
    assert got[0] == 2.5 and np.isnan(got[2])
    assert got[1] == got[3] == got[4] == got[5] == np.inf


@cube(launch=True)
def float_literal_rounding(out: Array[i32]):
    out[0] = i32(f32(16777217))
    out[1] = i32(f32(16777216) == 16777217.0)
    out[2] = i32(f32(-16777219))


def test_float_literals_are_rounded_to_their_type_at_compile_time(runtime_client):
    """A compile-time cast or comparison sees a float literal as the target does,
    rounded to f32 (16777217 is not an f32): it used the unrounded Python value."""
    c = runtime_client
    out = c.zeros(3, i32)
    float_literal_rounding.launch(c, CubeCount(1), CubeDim(1), out)
    expect = [int(np.float32(16777217)), int(np.float32(16777216) == np.float32(16777217.0)),
              int(np.float32(-16777219))]
    assert out.numpy().tolist() == expect == [16777216, 1, -16777220]


@cube(launch=True)
def step_folding_to_zero(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    s = 0
    for j in range(0, x[i], i32(2) % 5 - 2):
        s += j + 1
    out[i] = s


def test_range_step_that_folds_to_zero_runs_no_iteration(runtime_client):
    """A step that is zero only after constant folding: the loop runs no iteration (the
    folder left a constant zero step, which CUDA/Metal emitted as `j -= 0`, an endless
    loop for a negative stop, and the IR verifier rejected)."""
    c = runtime_client
    out = c.tensor(np.full(4, 9, np.int32))
    step_folding_to_zero.launch(c, CubeCount(1), CubeDim(4), c.tensor(
        np.array([-3, 0, 5, 2**31 - 1], np.int32)), out)
    assert out.numpy().tolist() == [0, 0, 0, 0]
