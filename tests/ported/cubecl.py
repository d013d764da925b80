"""Ported from CubeCL's runtime tests (tracel-ai/cubecl,
crates/cubecl-core/src/runtime_tests/). `F::new(x)` is `Float(x)`, `Shared::<F>::new()`
a one-element SharedMemory, `terminate!()` terminate(), `Line::empty(n).fill(v)` a
broadcast store, `output[0].fetch_add(v)` atomic_add(output, 0, v)."""
from __future__ import annotations

import numpy as np

from cubepy import (ABSOLUTE_POS, UNIT_POS, Array, CubeCount, CubeDim, Float, Line, Numeric,
                    SharedMemory, Tensor, atomic_add, atomic_max, atomic_min, cube, f32, i32,
                    plane_all, plane_any, plane_broadcast, plane_max, plane_min, plane_prod,
                    plane_sum, select, sync_cube, sync_plane, terminate, u32)

from . import plane_width, ported

TESTS = "tracel-ai/cubecl: crates/cubecl-core/src/runtime_tests/"


# ----------------------------------------------------------------------------- branch.rs

@cube(launch=True)
def kernel_select(output: Array[Float], cond: u32):
    if UNIT_POS == 0:
        output[0] = select(cond == 1, Float(3.0), Float(5.0))


@ported(TESTS + "branch.rs::test_select")
def cubecl_select(client):
    for cond in (True, False):
        handle = client.tensor(np.array([0.0], np.float32))
        kernel_select.launch(client, CubeCount(1), CubeDim(1), handle, 1 if cond else 0)
        assert handle.numpy()[0] == (3.0 if cond else 5.0)


# ----------------------------------------------------------------------------- different_rank.rs

@cube(launch=True)
def kernel_different_rank(lhs: Tensor[Line[Float]], rhs: Tensor[Line[Float]],
                          output: Tensor[Line[Float]]):
    output[ABSOLUTE_POS] = lhs[ABSOLUTE_POS] + rhs[ABSOLUTE_POS]


@ported(TESTS + "different_rank.rs::test_kernel_different_rank_first_biggest/"
        "last_biggest")
def cubecl_different_rank(client):
    vectorisation = 2
    for shape_lhs, shape_rhs, shape_out in (((2, 2, 2), (8,), (2, 4)),
                                            ((2, 4), (8,), (2, 2, 2))):
        lhs = client.tensor(np.arange(8, dtype=np.float32).reshape(shape_lhs))
        rhs = client.tensor(np.arange(3, 11, dtype=np.float32).reshape(shape_rhs))
        out = client.zeros(shape_out, f32)
        cube_dim = min(16, client.limits.max_cube_dim[0])
        cube_count = 32 // cube_dim
        kernel_different_rank.launch(client, CubeCount(cube_count), CubeDim(cube_dim),
                                     lhs.with_line_size(vectorisation),
                                     rhs.with_line_size(vectorisation),
                                     out.with_line_size(vectorisation))
        assert out.numpy().ravel().tolist() == [3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0, 17.0]


# ----------------------------------------------------------------------------- synchronization.rs

@cube(launch=True)
def kernel_test_sync_cube(buffer: Array[u32], out: Array[u32]):
    buffer[UNIT_POS] = UNIT_POS
    sync_cube()
    if UNIT_POS != 0:
        out[UNIT_POS] = buffer[UNIT_POS - 1] + buffer[UNIT_POS]


@ported(TESTS + "synchronization.rs::test_sync_cube")
def cubecl_sync_cube(client):
    handle, test = client.zeros(32, u32), client.zeros(32, u32)
    kernel_test_sync_cube.launch(client, CubeCount(1), CubeDim(8, 2), test, handle)
    expected = [max(2 * i - 1, 0) for i in range(16)]
    assert handle.numpy()[1:16].tolist() == expected[1:16]


@cube(launch=True)
def kernel_test_finished_sync_cube(buffer: Array[u32], out: Array[u32]):
    buffer[UNIT_POS] = UNIT_POS
    if UNIT_POS > 16:
        terminate()
    sync_cube()
    sync_cube()
    if UNIT_POS != 0:
        out[UNIT_POS] = buffer[UNIT_POS - 1] + buffer[UNIT_POS]
    sync_cube()


@ported(TESTS + "synchronization.rs::test_finished_sync_cube")
def cubecl_finished_sync_cube(client):
    handle, test = client.zeros(32, u32), client.zeros(32, u32)
    kernel_test_finished_sync_cube.launch(client, CubeCount(2), CubeDim(8, 2), test, handle)
    expected = [max(2 * i - 1, 0) for i in range(8)]
    assert handle.numpy()[1:8].tolist() == expected[1:8]


@cube(launch=True)
def kernel_test_sync_cube_shared(out: Array[Float]):
    shared_memory = SharedMemory(Float, 1)
    if UNIT_POS == 0:
        shared_memory[0] = Float(1)
    sync_cube()
    out[UNIT_POS] = shared_memory[0]


@ported(TESTS + "synchronization.rs::test_sync_cube_shared")
def cubecl_sync_cube_shared(client):
    handle = client.zeros(64, f32)
    kernel_test_sync_cube_shared.launch(client, CubeCount(1), CubeDim(32, 2), handle)
    assert handle.numpy().tolist() == [1.0] * 64


# ----------------------------------------------------------------------------- topology.rs

@cube(launch=True)
def kernel_absolute_pos(output1: Array[u32]):
    if ABSOLUTE_POS >= len(output1):
        terminate()
    output1[ABSOLUTE_POS] = ABSOLUTE_POS


@ported(TESTS + "topology.rs::test_kernel_topology_absolute_pos")
def cubecl_topology_absolute_pos(client):
    cube_count, cube_dim = (3, 5, 7), (16, 16, 1)
    length = int(np.prod(cube_count) * np.prod(cube_dim))
    handle1 = client.zeros(length, u32)
    kernel_absolute_pos.launch(client, CubeCount(*cube_count), CubeDim(*cube_dim), handle1)
    assert (handle1.numpy() == np.arange(length)).all()


# ----------------------------------------------------------------------------- unroll.rs

@cube(launch=True)
def unroll_load_store(output: Array[Line[Float]]):
    if UNIT_POS != 0:
        terminate()
    a = output[0]
    b = Float(3)  # Line::<F>::empty(8).fill(F::from_int(3)): a scalar broadcasts
    c = a + b
    output[0] = c


@ported(TESTS + "unroll.rs::test_unroll_load_store")
def cubecl_unroll_load_store(client):
    handle = client.tensor(np.arange(8, dtype=np.float32))
    unroll_load_store.launch(client, CubeCount(1), CubeDim(1), handle.with_line_size(8))
    assert handle.numpy().tolist() == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]


# ----------------------------------------------------------------------------- atomic.rs

@cube(launch=True)
def kernel_atomic_add(output: Array[Numeric]):
    if UNIT_POS == 0:
        atomic_add(output, 0, Numeric(5))


@cube(launch=True)
def kernel_atomic_min(output: Array[Numeric]):
    if UNIT_POS == 0:
        atomic_min(output, 0, Numeric(5))


@cube(launch=True)
def kernel_atomic_max(output: Array[Numeric]):
    if UNIT_POS == 0:
        atomic_max(output, 0, Numeric(5))


def _atomic_case(client, kernel, expected: int):
    for dtype in (i32, f32):  # testgen_atomic_int / testgen_atomic_float
        handle = client.tensor(np.array([12], dtype.numpy))
        kernel.launch(client, CubeCount(1), CubeDim(1), handle)
        assert handle.numpy()[0] == expected, dtype


@ported(TESTS + "atomic.rs::test_kernel_atomic_add")
def cubecl_atomic_add(client):
    _atomic_case(client, kernel_atomic_add, 17)


@ported(TESTS + "atomic.rs::test_kernel_atomic_min")
def cubecl_atomic_min(client):
    _atomic_case(client, kernel_atomic_min, 5)


@ported(TESTS + "atomic.rs::test_kernel_atomic_max")
def cubecl_atomic_max(client):
    _atomic_case(client, kernel_atomic_max, 12)


# ----------------------------------------------------------------------------- plane.rs

@cube(launch=True)
def kernel_sum(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_sum(val)
    if UNIT_POS == 0:
        output[0] = val2


@cube(launch=True)
def kernel_prod(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_prod(val)
    if UNIT_POS == 0:
        output[0] = val2


@cube(launch=True)
def kernel_max(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_max(val)
    if UNIT_POS == 0:
        output[0] = val2


@cube(launch=True)
def kernel_min(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_min(val)
    if UNIT_POS == 0:
        output[0] = val2


@cube(launch=True)
def kernel_all(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_all(val < Float(5.0))
    output[UNIT_POS] = Float(val2)


@cube(launch=True)
def kernel_any(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_any(val > Float(5.0))
    output[UNIT_POS] = Float(val2)


@cube(launch=True)
def kernel_broadcast(output: Tensor[Float]):
    val = output[UNIT_POS]
    val2 = plane_broadcast(val, 2)
    if UNIT_POS == 0:
        output[0] = val2


def _plane_case(client, kernel, inputs: np.ndarray, expected) -> None:
    """CubeCL's test_plane_operation at vectorisation 1: one cube of 32 units. The
    expectation is computed over the first plane (all 32 units on CUDA and cpu, as the
    original assumes; 8 on llvmpipe)."""
    p = plane_width(client)
    handle = client.tensor(inputs.astype(np.float32))
    kernel.launch(client, CubeCount(1), CubeDim(32), handle)
    want = np.asarray(expected(inputs.astype(np.float32), p), np.float32)
    np.testing.assert_allclose(handle.numpy(), want, rtol=1e-6)


def _first(fold):
    def expected(x, p):
        out = x.copy()
        out[0] = fold(x[:p])
        return out
    return expected


@ported(TESTS + "plane.rs::test_plane_sum")
def cubecl_plane_sum(client):
    _plane_case(client, kernel_sum, np.arange(32), _first(np.sum))


@ported(TESTS + "plane.rs::test_plane_prod")
def cubecl_plane_prod(client):
    x = np.array([(0.5, 1.25, 1.75)[i % 3] for i in range(32)])
    _plane_case(client, kernel_prod, x, _first(np.prod))


@ported(TESTS + "plane.rs::test_plane_max")
def cubecl_plane_max(client):
    x = np.arange(32, dtype=np.float32)
    x[16] = 999.0
    _plane_case(client, kernel_max, x, _first(np.max))


@ported(TESTS + "plane.rs::test_plane_min")
def cubecl_plane_min(client):
    x = np.arange(32, dtype=np.float32)
    x[16] = -5.0
    _plane_case(client, kernel_min, x, _first(np.min))


@ported(TESTS + "plane.rs::test_plane_all")
def cubecl_plane_all(client):
    x = (np.arange(32) % 5).astype(np.float32)
    x[4] = 10.0  # vectorisation 1: the one batch is made false

    def expected(x, p):
        return np.repeat([float((x[i:i + p] < 5).all()) for i in range(0, 32, p)], p)
    _plane_case(client, kernel_all, x, expected)


@ported(TESTS + "plane.rs::test_plane_any")
def cubecl_plane_any(client):
    x = (np.arange(32) % 5).astype(np.float32)
    x[4] = 10.0

    def expected(x, p):
        return np.repeat([float((x[i:i + p] > 5).any()) for i in range(0, 32, p)], p)
    _plane_case(client, kernel_any, x, expected)


@ported(TESTS + "plane.rs::test_plane_broadcast")
def cubecl_plane_broadcast(client):
    def expected(x, p):
        out = x.copy()
        out[0] = x[2]
        return out
    _plane_case(client, kernel_broadcast, np.arange(32), expected)


# ----------------------------------------------------------------------------- branch.rs: match

@cube(launch=True)
def kernel_switch_simple(output: Array[Float], case: u32):
    match case:
        case 0:
            output[0] = Float(1.0)
        case 1:
            output[0] = Float(3.0)
        case _:
            output[0] = Float(5.0)


@cube(launch=True)
def kernel_switch_value_expr(output: Array[Float], case: u32):
    if UNIT_POS == 0:
        match case:  # CubeCL's `let value = match case { ... }`: an arm per value
            case 0:
                value = Float(1.0)
            case 1:
                value = Float(3.0)
            case _:
                value = Float(5.0)
        output[0] = value


@cube(launch=True)
def kernel_switch_or_arm(output: Array[Float], case: u32):
    if UNIT_POS == 0:
        match case:
            case 0:
                value = Float(1.0)
            case 1 | 2:
                value = Float(3.0)
            case _:
                value = Float(5.0)
        output[0] = value


class _Cases:
    CASE_0 = 0
    CASE_1 = 1


@cube(launch=True)
def kernel_switch_const(output: Array[Float], case: u32):
    if UNIT_POS == 0:
        match case:
            case _Cases.CASE_0:
                value = Float(1.0)
            case _Cases.CASE_1:
                value = Float(3.0)
            case _:
                value = Float(5.0)
        output[0] = value


def _switch(client, kernel, case: int, launch_unchecked: bool = False) -> float:
    handle = client.tensor(np.array([0.0, 1.0], np.float32))
    launch = kernel.launch_unchecked if launch_unchecked else kernel.launch
    launch(client, CubeCount(1), CubeDim(1), handle, case)
    return float(handle.numpy()[0])


@ported(TESTS + "branch.rs::test_switch_statement/used_as_value/default/or_branch/const")
def cubecl_switch(client):
    assert _switch(client, kernel_switch_simple, 0, launch_unchecked=True) == 1.0
    assert _switch(client, kernel_switch_value_expr, 1) == 3.0
    assert _switch(client, kernel_switch_value_expr, 5) == 5.0
    assert _switch(client, kernel_switch_or_arm, 2) == 3.0
    assert _switch(client, kernel_switch_const, 1) == 3.0


# ----------------------------------------------------------------------------- synchronization.rs: sync_plane

@cube(launch=True)
def kernel_test_sync_plane(out: Array[Float]):
    shared_memory = SharedMemory(Float, 1)
    if UNIT_POS == 0:
        shared_memory[0] = Float(1)
    sync_plane()
    out[UNIT_POS] = shared_memory[0]


@ported(TESTS + "synchronization.rs::test_sync_plane")
def cubecl_sync_plane(client):
    handle = client.zeros(64, f32)
    kernel_test_sync_plane.launch(client, CubeCount(1), CubeDim(32, 2), handle)
    # the original's 32 lanes: the first plane sees unit 0's write after sync_plane
    p = plane_width(client)
    assert handle.numpy()[:p].tolist() == [1.0] * p
