"""Memory: per-unit local arrays (LocalArray, of scalars and of lines) and dynamic shared
memory (DynamicSharedMemory sized by launch(..., shared_mem=bytes)) on every runtime
against numpy, their source on every target (validated by nvcc, naga and clang++), the
IR text, checked-mode bounds, and the user's mistakes."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, CUBE_DIM, CUBE_POS, UNIT_POS, Array, CompileError,
                    Comptime, CubeCount, CubeDim, DynamicSharedMemory, Line, LocalArray,
                    Numeric, cube, f32, i32, sync_cube, u32, unroll)
from cubepy.ir.parser import parse_kernel
from cubepy.ir.printer import print_kernel
from cubepy.ir.verify import IRVerifyError, verify

from source_check import validate_sources

DIM = 32
CUBES = 3
N = DIM * CUBES


# -- local arrays ------------------------------------------------------------------------
@cube(launch=True)
def sort_rows(x: Array[Numeric], out: Array[Numeric], n: Comptime[int]):
    """Each unit sorts its own row of n values in a local array (a bubble-sort network
    with runtime indices)."""
    a = LocalArray(Numeric, n)
    base = ABSOLUTE_POS * u32(n)
    for i in range(n):
        a[i] = x[base + u32(i)]
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                t = a[j]
                a[j] = a[j + 1]
                a[j + 1] = t
    for i in range(len(a)):
        out[base + u32(i)] = a[i]


@pytest.mark.parametrize("dtype", [f32, i32, cubepy.f16, cubepy.u32],
                         ids=["f32", "i32", "f16", "u32"])
def test_local_array_sorts_each_row(runtime_client, dtype):
    c = runtime_client
    n = 6
    rng = np.random.default_rng(1)
    low = 0 if dtype is cubepy.u32 else -1000  # integers f16 holds exactly
    x = rng.integers(low, 1000, size=N * n).astype(dtype.numpy)
    out = c.zeros((N * n,), dtype)
    sort_rows.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(x), out, n)
    np.testing.assert_array_equal(out.numpy(), np.sort(x.reshape(N, n), axis=1).ravel())


@cube(launch=True)
def register_tile_dot(a: Array[f32], b: Array[f32], out: Array[f32], k: Comptime[int]):
    """A register-tiled dot product: each unit keeps 4 partial sums in a local array
    and picks the accumulator with a runtime index (i % 4)."""
    acc = LocalArray(f32, 4)
    row = ABSOLUTE_POS * u32(k)
    for i in range(k):
        acc[i % 4] += a[row + u32(i)] * b[u32(i)]
    total = f32(0)
    for j in unroll(range(4)):
        total += acc[j]
    out[ABSOLUTE_POS] = total


def test_local_array_register_tile_dot(runtime_client):
    c = runtime_client
    k = 10
    rng = np.random.default_rng(2)
    a = rng.random(N * k, dtype=np.float32)
    b = rng.random(k, dtype=np.float32)
    out = c.zeros((N,), f32)
    register_tile_dot.launch(c, CubeCount(CUBES), CubeDim(DIM), c.tensor(a), c.tensor(b),
                             out, k)
    want = a.reshape(N, k).astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


@cube(launch=True)
def zero_filled(out: Array[i32], flag: Array[i32]):
    """A local array starts zero-filled: a unit whose flag is 0 writes nothing into it
    and reads back zeros (the first unit of each cube writes its position)."""
    a = LocalArray(i32, 5)
    if flag[ABSOLUTE_POS] != i32(0):
        for i in range(5):
            a[i] = i32(ABSOLUTE_POS) + i32(i)
    s = i32(0)
    for i in range(5):
        s = s * i32(100) + a[i]
    out[ABSOLUTE_POS] = s


def test_local_array_starts_zero_and_belongs_to_its_unit(runtime_client):
    c = runtime_client
    flag = (np.arange(N) % 3 == 0).astype(np.int32)
    out = c.zeros((N,), i32)
    zero_filled.launch(c, CubeCount(CUBES), CubeDim(DIM), out, c.tensor(flag))
    pos = np.arange(N, dtype=np.int64)
    want = np.zeros(N, np.int64)
    for i in range(5):
        want = want * 100 + np.where(flag != 0, pos + i, 0)
    np.testing.assert_array_equal(out.numpy(), want.astype(np.int32))


@cube(launch=True)
def line_window(x: Array[Line[f32]], out: Array[Line[f32]]):
    """A local array of lines: each unit loads 3 lines, then writes w0 + w1 * w2 and
    the lines reversed element-wise through a runtime-indexed read."""
    w = LocalArray(Line[f32], 3, x.line_size())
    for i in range(3):
        w[i] = x[ABSOLUTE_POS * u32(3) + u32(i)]
    out[ABSOLUTE_POS * u32(2)] = w[0] + w[1] * w[2]
    r = w[2 - i32(ABSOLUTE_POS % u32(3))]
    out[ABSOLUTE_POS * u32(2) + u32(1)] = r


def test_local_array_of_lines(runtime_client):
    c = runtime_client
    units, line = 64, 4
    rng = np.random.default_rng(3)
    x = rng.random(units * 3 * line, dtype=np.float32)
    out = c.zeros((units * 2 * line,), f32)
    line_window.launch(c, CubeCount(2), CubeDim(32), c.tensor(x).with_line_size(line),
                       out.with_line_size(line))
    rows = x.reshape(units, 3, line)
    got = out.numpy().reshape(units, 2, line)
    np.testing.assert_allclose(got[:, 0], rows[:, 0] + rows[:, 1] * rows[:, 2], rtol=1e-6)
    pick = 2 - np.arange(units) % 3
    np.testing.assert_array_equal(got[:, 1], rows[np.arange(units), pick])


@cube(launch=True)
def out_of_range(out: Array[i32], idx: Array[i32]):
    """Checked mode: a local-array access out of range reads 0 and drops the store,
    and never touches the neighbouring array."""
    a = LocalArray(i32, 4)
    b = LocalArray(i32, 4)
    for i in range(4):
        a[i] = i32(10) + i32(i)
        b[i] = i32(20) + i32(i)
    j = idx[ABSOLUTE_POS]
    a[j] = i32(99)  # dropped when j is out of range
    s = a[j] * i32(1000)
    for i in range(4):
        s = s + a[i] + b[i] * i32(100)
    out[ABSOLUTE_POS] = s


def test_local_array_out_of_range_in_checked_mode(runtime_client):
    c = runtime_client
    idx = np.array([0, 3, 4, -1, 7, 2**20, 1, -5], np.int32)
    out = c.zeros((8,), i32)
    out_of_range.launch(c, CubeCount(1), CubeDim(8), out, c.tensor(idx))
    want = []
    for j in idx:
        a, b = [10, 11, 12, 13], [20, 21, 22, 23]
        inside = 0 <= j < 4
        if inside:
            a[j] = 99
        want.append((a[j] if inside else 0) * 1000 + sum(a) + 100 * sum(b))
    np.testing.assert_array_equal(out.numpy(), want)


@cube(launch=True)
def local_in_device_fn_caller(out: Array[f32]):
    out[ABSOLUTE_POS] = prefix_total(f32(ABSOLUTE_POS)) + prefix_total(f32(1))


@cube
def prefix_total(v: f32) -> f32:
    """A device function with its own local array: every call site gets its own."""
    p = LocalArray(f32, 3)
    p[0] = v
    for i in range(1, 3):
        p[i] = p[i - 1] + v
    return p[0] + p[1] + p[2]


def test_local_array_in_device_function(runtime_client):
    c = runtime_client
    out = c.zeros((DIM,), f32)
    local_in_device_fn_caller.launch(c, CubeCount(1), CubeDim(DIM), out)
    np.testing.assert_allclose(out.numpy(), 6 * np.arange(DIM, dtype=np.float32) + 6)


# -- sources and IR ------------------------------------------------------------------------
def test_local_array_spellings():
    src = {t: sort_rows.source(t, cube_dim=(32, 1, 1), Numeric=f32, n=5)
           for t in ("cuda", "metal", "wgsl")}
    assert "float a[5] = {};" in src["cuda"]
    assert "float a[5] = {};" in src["metal"]
    assert "var<private> a: array<f32, 5>;" in src["wgsl"]
    text = sort_rows.ir(cube_dim=(32, 1, 1), Numeric=f32, n=5)
    assert "local @a: f32[5]" in text
    k = parse_kernel(text)
    assert [(d.buffer.name, d.buffer.elem, d.buffer.space, d.size)
            for d in k.local_arrays] == [("a", f32, "local", 5)]


def test_local_array_on_the_toy_target():
    import toy_target
    from cubepy import targets
    with targets.registered(toy_target.TOYC):
        src = sort_rows.source("toyc", cube_dim=(32, 1, 1), Numeric=i32, n=3)
    assert "int a[3] = {};" in src


def test_local_array_of_lines_is_stored_as_elements():
    k = parse_kernel(line_window.ir(cube_dim=(32, 1, 1), line_sizes={"x": 4, "out": 4}))
    assert [(d.buffer.name, d.size) for d in k.local_arrays] == [("w", 12)]


@pytest.mark.nvcc
@pytest.mark.parametrize("kernel,spec", [
    (sort_rows, {"Numeric": f32, "n": 5}),
    (sort_rows, {"Numeric": i32, "n": 3}),
    (register_tile_dot, {"k": 7}),
    (line_window, {"line_sizes": {"x": 4, "out": 4}}),
    (out_of_range, {}),
    (local_in_device_fn_caller, {}),
], ids=["sort-f32", "sort-i32", "dot", "lines", "bounds", "device-fn"])
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_local_array_sources_compile(tmp_path, kernel, spec, checked):
    validate_sources(kernel, tmp_path, cube_dim=(32, 1, 1), checked=checked, **spec)


@cube(launch=True)
def local_of_every_type(out: Array[u32]):
    """Every portable scalar type (and bool) in a local array."""
    a = LocalArray(cubepy.bool_, 2)
    b = LocalArray(cubepy.f16, 2)
    c = LocalArray(cubepy.u32, 2)
    d = LocalArray(cubepy.i32, 2)
    a[1] = True
    b[1] = cubepy.f16(1.5)
    c[1] = u32(7)
    d[1] = i32(-2)
    out[ABSOLUTE_POS] = u32(a[1]) + u32(b[1] * cubepy.f16(2)) + c[1] + u32(d[1] + i32(3))


@pytest.mark.nvcc
def test_local_array_element_types_compile(tmp_path):
    validate_sources(local_of_every_type, tmp_path, cube_dim=(32, 1, 1))


def test_local_array_ir_text_round_trip():
    text = sort_rows.ir(cube_dim=(32, 1, 1), Numeric=i32, n=4)
    again = parse_kernel(text)
    assert len(again.local_arrays) == 1
    assert print_kernel(again) == text


def test_verifier_rejects_a_bad_local_array():
    k = parse_kernel(sort_rows.ir(cube_dim=(32, 1, 1), Numeric=i32, n=4))
    d = k.local_arrays[0]
    verify(k)
    import dataclasses
    bad = dataclasses.replace(k, local_arrays=(dataclasses.replace(d, size=0),))
    with pytest.raises(IRVerifyError, match="bad local array"):
        verify(bad)
    twice = dataclasses.replace(k, local_arrays=(d, d))
    with pytest.raises(IRVerifyError, match="declared twice"):
        verify(twice)


# -- mistakes ------------------------------------------------------------------------------
@cube(launch=True)
def runtime_size(out: Array[f32], n: u32):
    a = LocalArray(f32, n)
    out[0] = a[0]


@cube(launch=True)
def zero_size(out: Array[f32]):
    a = LocalArray(f32, 0)
    out[0] = a[0]


@cube(launch=True)
def negative_size(out: Array[f32], n: Comptime[int]):
    a = LocalArray(f32, n)
    out[0] = a[0]


@cube(launch=True)
def unnamed(out: Array[f32]):
    out[0] = LocalArray(f32, 4)[0]


@cube(launch=True)
def atomic_on_local(out: Array[i32]):
    a = LocalArray(i32, 4)
    cubepy.atomic_add(a, 0, i32(1))
    out[0] = a[0]


@cube(launch=True)
def line_without_size(out: Array[f32]):
    a = LocalArray(Line[f32], 4)
    out[0] = a[0][0]


@cube(launch=True)
def f64_local(out: Array[f32]):
    a = LocalArray(cubepy.f64, 4)
    a[0] = cubepy.f64(1)
    out[0] = f32(a[0])


@pytest.mark.parametrize("kernel,spec,message", [
    (runtime_size, {}, "the size of LocalArray must be known at compile time"),
    (zero_size, {}, "the size of LocalArray must be positive, not 0"),
    (negative_size, {"n": -3}, "the size of LocalArray must be positive, not -3"),
    (unnamed, {}, "LocalArray(...) must be assigned to a name"),
    (atomic_on_local, {}, "atomic_add() on the LocalArray 'a'"),
    (line_without_size, {}, "the line size is the last argument"),
])
def test_local_array_mistakes(kernel, spec, message):
    with pytest.raises(CompileError) as err:
        kernel.source("cuda", cube_dim=(32, 1, 1), **spec)
    assert message in str(err.value)


def test_local_array_f64_on_wgsl_is_a_compile_error():
    assert "double a[4] = {};" in f64_local.source("cuda", cube_dim=(32, 1, 1))
    with pytest.raises(CompileError, match="f64"):
        f64_local.source("wgsl", cube_dim=(32, 1, 1))



@cube(launch=True)
def same_name_twice(out: Array[i32]):
    a = LocalArray(i32, 2)
    a = LocalArray(i32, 3)
    out[0] = a[0]


def test_local_array_name_is_bound_once():
    with pytest.raises(CompileError, match="'a' names a buffer and can be assigned only once"):
        same_name_twice.source("cuda", cube_dim=(4, 1, 1))


# -- dynamic shared memory -----------------------------------------------------------------
@cube(launch=True)
def chunk_sums(x: Array[f32], out: Array[f32], lens: Array[u32]):
    """Cube c sums x[c*n:(c+1)*n] with a tree reduction in shared memory of n floats,
    n = shared_mem // 4 chosen at launch (a power of two)."""
    s = DynamicSharedMemory(f32)
    n = len(s)
    for i in range(UNIT_POS, n, CUBE_DIM):
        s[i] = x[CUBE_POS * n + i]
    sync_cube()
    step = n // u32(2)
    while step > u32(0):
        for i in range(UNIT_POS, step, CUBE_DIM):
            s[i] += s[i + step]
        sync_cube()
        step = step // u32(2)
    if UNIT_POS == u32(0):
        out[CUBE_POS] = s[0]
        lens[CUBE_POS] = n


@pytest.mark.parametrize("floats", [64, 512])
def test_dynamic_shared_reduction_two_sizes(runtime_client, floats):
    c = runtime_client
    cubes = 3
    rng = np.random.default_rng(floats)
    x = rng.random(cubes * floats, dtype=np.float32)
    out, lens = c.zeros((cubes,), f32), c.zeros((cubes,), u32)
    chunk_sums.launch(c, CubeCount(cubes), CubeDim(32), c.tensor(x), out, lens,
                      shared_mem=floats * 4)
    np.testing.assert_allclose(out.numpy(), x.reshape(cubes, floats).sum(axis=1),
                               rtol=1e-5)
    np.testing.assert_array_equal(lens.numpy(), [floats] * cubes)


def test_dynamic_shared_sizes_are_separate_specialisations():
    small = chunk_sums.source("cuda", cube_dim=(32, 1, 1), shared_mem=64 * 4)
    big = chunk_sums.source("cuda", cube_dim=(32, 1, 1), shared_mem=100 * 4 + 3)
    assert "__shared__ float s[64];" in small
    assert "__shared__ float s[100];" in big  # the bytes past the last float are unused
    wgsl = chunk_sums.source("wgsl", cube_dim=(32, 1, 1), shared_mem=64 * 4)
    assert "var<workgroup> s: array<f32, 64>;" in wgsl
    metal = chunk_sums.source("metal", cube_dim=(32, 1, 1), shared_mem=64 * 4)
    assert "threadgroup float s[64];" in metal


@cube(launch=True)
def dyn_lines(x: Array[Line[f32]], out: Array[Line[f32]]):
    """A DynamicSharedMemory of lines, called twice (a device function and the kernel):
    both calls are the same memory, as every extern __shared__ array is in CUDA."""
    s = DynamicSharedMemory(Line[f32], x.line_size())
    s[UNIT_POS] = x[ABSOLUTE_POS]
    sync_cube()
    out[ABSOLUTE_POS] = neighbour_line(x.line_size())


@cube
def neighbour_line(line: Comptime[int]) -> Line[f32]:
    t = DynamicSharedMemory(Line[f32], line)
    return t[(UNIT_POS + u32(1)) % u32(len(t))]


def test_dynamic_shared_of_lines_shared_by_device_function(runtime_client):
    c = runtime_client
    units, line = 32, 4
    x = np.arange(units * 2 * line, dtype=np.float32)
    out = c.zeros((x.size,), f32)
    dyn_lines.launch(c, CubeCount(2), CubeDim(units), c.tensor(x).with_line_size(line),
                     out.with_line_size(line), shared_mem=units * line * 4)
    rows = x.reshape(2, units, line)
    np.testing.assert_array_equal(out.numpy().reshape(2, units, line),
                                  np.roll(rows, -1, axis=1))


@pytest.mark.nvcc
@pytest.mark.parametrize("kernel,spec", [
    (chunk_sums, {"shared_mem": 256 * 4}),
    (dyn_lines, {"shared_mem": 32 * 16, "line_sizes": {"x": 4, "out": 4}}),
], ids=["reduction", "lines"])
def test_dynamic_shared_sources_compile(tmp_path, kernel, spec):
    validate_sources(kernel, tmp_path, cube_dim=(32, 1, 1), **spec)


@cube(launch=True)
def two_dynamic_types(out: Array[f32]):
    s = DynamicSharedMemory(f32)
    t = DynamicSharedMemory(i32)
    out[0] = s[0] + f32(t[0])


@cube(launch=True)
def no_dynamic(out: Array[f32]):
    out[0] = f32(1)


def test_dynamic_shared_needs_its_size():
    with pytest.raises(CompileError, match=r"given at launch: kernel.launch\(\.\.\., "
                                           r"shared_mem=<bytes>\)"):
        chunk_sums.source("cuda", cube_dim=(32, 1, 1))
    with pytest.raises(CompileError, match="shared_mem=3 bytes holds no f32 element"):
        chunk_sums.source("cuda", cube_dim=(32, 1, 1), shared_mem=3)
    with pytest.raises(CompileError, match="already holds f32"):
        two_dynamic_types.source("cuda", cube_dim=(32, 1, 1), shared_mem=64)
    with pytest.raises(CompileError, match="no_dynamic declares none"):
        no_dynamic.source("cuda", cube_dim=(32, 1, 1), shared_mem=64)
    with pytest.raises(cubepy.OptionError, match="shared_mem is the byte size"):
        chunk_sums.source("cuda", cube_dim=(32, 1, 1), shared_mem=-4)


def test_dynamic_shared_launch_errors_name_shared_mem(runtime_client):
    c = runtime_client
    x, out, lens = c.zeros((64,), f32), c.zeros((1,), f32), c.zeros((1,), u32)
    limit = c.limits.max_shared_bytes
    for bad in (-1, 2.5, "64", True):
        with pytest.raises(cubepy.LaunchError, match="shared_mem is the byte size") as err:
            chunk_sums.launch(c, CubeCount(1), CubeDim(32), x, out, lens, shared_mem=bad)
        assert err.value.param == "shared_mem"
    with pytest.raises(cubepy.LaunchError, match="max_shared_bytes") as err:
        chunk_sums.launch(c, CubeCount(1), CubeDim(32), x, out, lens,
                          shared_mem=limit + 4)
    assert err.value.param == "shared_mem"
    assert "shared_mem=" in str(err.value)


# -- uniformity and types --------------------------------------------------------------------
@cube(launch=True)
def barrier_under_local_read(out: Array[f32]):
    a = LocalArray(f32, 2)
    a[0] = f32(UNIT_POS)
    if a[0] > f32(3):
        sync_cube()
    out[ABSOLUTE_POS] = a[0]


def test_barrier_under_a_local_array_read_is_a_compile_error():
    with pytest.raises(CompileError, match="a local array") as err:
        barrier_under_local_read.source("cuda", cube_dim=(32, 1, 1))
    assert "a[...]" in str(err.value)


@cube(launch=True)
def local_scalars(out: Array[u32], flag: Array[u32]):
    """bool, u32 and i32 local arrays, written under a per-unit condition."""
    b = LocalArray(cubepy.bool_, 3)
    u = LocalArray(u32, 3)
    s = LocalArray(i32, 3)
    k = ABSOLUTE_POS % u32(3)
    if flag[ABSOLUTE_POS] != u32(0):
        b[k] = True
        u[k] = ABSOLUTE_POS
        s[k] = i32(0) - i32(ABSOLUTE_POS)
    total = u32(0)
    for i in range(3):
        total = total + u32(b[i]) * u32(1000000) + u[i] + u32(s[i] * i32(-1000))
    out[ABSOLUTE_POS] = total


def test_local_arrays_of_bool_and_integers(runtime_client):
    c = runtime_client
    flag = (np.arange(N) % 2).astype(np.uint32)
    out = c.zeros((N,), u32)
    local_scalars.launch(c, CubeCount(CUBES), CubeDim(DIM), out, c.tensor(flag))
    pos = np.arange(N, dtype=np.uint64)
    want = np.where(flag != 0, 1000000 + pos + 1000 * pos, 0)
    np.testing.assert_array_equal(out.numpy(), want.astype(np.uint32))


def test_cpu_batches_fit_local_arrays_in_memory(monkeypatch):
    """The cpu runtime runs fewer cubes per batch when local arrays are large (one row
    of each array per lane), and the result does not depend on the batch size."""
    from cubepy.runtime import cpu
    c = cubepy.client("cpu")
    n, cubes = 6, 40
    x = np.random.default_rng(5).integers(-50, 50, size=cubes * DIM * n).astype(np.int32)
    out = c.zeros((x.size,), i32)
    batches = []
    builtins = cpu.CpuExecutable.builtins

    def counting(self, count, dim, first, n_cubes):
        batches.append(n_cubes)
        return builtins(self, count, dim, first, n_cubes)
    monkeypatch.setattr(cpu.CpuExecutable, "builtins", counting)
    monkeypatch.setattr(cpu, "LOCAL_ARRAY_BYTES", DIM * n * 4 * 3)  # 3 cubes per batch
    sort_rows.launch(c, CubeCount(cubes), CubeDim(DIM), c.tensor(x), out, n)
    assert batches == [3] * 13 + [1]
    np.testing.assert_array_equal(out.numpy(), np.sort(x.reshape(-1, n), axis=1).ravel())


@cube
def fill_from(a: Array[f32], v: f32):
    for i in range(len(a)):
        a[i] = v + f32(i)


@cube
def array_total(a: Array[f32]) -> f32:
    t = f32(0)
    for i in range(len(a)):
        t += a[i]
    return t


@cube(launch=True)
def local_through_device_functions(x: Array[f32]):
    a = LocalArray(f32, 4)
    fill_from(a, x[ABSOLUTE_POS])
    x[ABSOLUTE_POS] = array_total(a)


def test_local_array_passed_to_device_functions(runtime_client):
    c = runtime_client
    x = c.tensor(np.arange(DIM, dtype=np.float32))
    local_through_device_functions.launch(c, CubeCount(1), CubeDim(DIM), x)
    np.testing.assert_array_equal(x.numpy(), 4 * np.arange(DIM, dtype=np.float32) + 6)


@cube(launch=True)
def has_shared_mem_param(out: Array[u32], shared_mem: u32):
    out[ABSOLUTE_POS] = shared_mem


def test_a_parameter_called_shared_mem_keeps_the_keyword(runtime_client):
    c = runtime_client
    out = c.zeros((4,), u32)
    has_shared_mem_param.launch(c, CubeCount(1), CubeDim(4), out, shared_mem=7)
    np.testing.assert_array_equal(out.numpy(), [7] * 4)


@cube(launch=True)
def too_much_local(out: Array[f32], n: Comptime[int]):
    a = LocalArray(f32, 1024)
    b = LocalArray(f32, n)
    out[0] = a[0] + b[0]


def test_local_arrays_are_limited_per_unit():
    assert "float b[130048] = {};" in too_much_local.source("cuda", cube_dim=(1, 1, 1),
                                                           n=128 * 1024 - 1024)
    with pytest.raises(CompileError, match="after 4096 in earlier ones: a kernel's local "
                                           "arrays hold at most 524288 bytes per unit"):
        too_much_local.source("cuda", cube_dim=(1, 1, 1), n=128 * 1024 - 1023)
