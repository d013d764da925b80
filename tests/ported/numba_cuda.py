"""Ported from Numba's CUDA documentation examples (numba/numba,
numba/cuda/tests/doc_examples/). Line by line where cubepy has the construct; where the
port departs from the original, the comment at that line says how and why."""
from __future__ import annotations

import math

import numpy as np

from cubepy import (ABSOLUTE_POS, CUBE_DIM_X, CUBE_POS_X, UNIT_POS_X, Array, CubeCount,
                    CubeDim, Float, SharedMemory, cube, f32, i32, sync_cube, terminate)

from . import best_float, ported

DOCS = "numba/numba: numba/cuda/tests/doc_examples/"


# ----------------------------------------------------------------------------- vecadd

@cube(launch=True)
def vecadd(a: Array[Float], b: Array[Float], c: Array[Float]):
    tid = ABSOLUTE_POS  # cuda.grid(1)
    size = len(c)
    if tid < size:
        c[tid] = a[tid] + b[tid]


@ported(DOCS + "test_vecadd.py::test_ex_vecadd")
def numba_vecadd(client):
    F, rtol = best_float(client)
    np.random.seed(1)
    n = 100000
    a, b = np.random.random(n).astype(F.numpy), np.random.random(n).astype(F.numpy)
    c = client.empty(n, F)
    nthreads = 256
    nblocks = (n // nthreads) + 1
    vecadd.launch(client, CubeCount(nblocks), CubeDim(nthreads),
                  client.tensor(a), client.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=rtol)


# ----------------------------------------------------------------------------- cpu/gpu compat

@cube
def business_logic(x: Float, y: Float, z: Float) -> Float:
    return 4 * z * (2 * x - (4 * y) / 2 * math.pi)


@cube(launch=True)
def compat_kernel(res: Array[Float], xarr: Array[i32], yarr: Array[i32], zarr: Array[i32]):
    tid = ABSOLUTE_POS
    if tid < len(xarr):
        # the original passes integers and lets `/` promote; cubepy converts explicitly
        res[tid] = business_logic(Float(xarr[tid]), Float(yarr[tid]), Float(zarr[tid]))


@ported(DOCS + "test_cpu_gpu_compat.py::test_ex_cpu_gpu_compat")
def numba_cpu_gpu_compat(client):
    F, rtol = best_float(client)
    x, y, z = [1, 10, 234], [2, 2, 4014], [3, 14, 2211]
    results = client.zeros(3, F)
    compat_kernel.launch(client, CubeCount(1), CubeDim(32), results,
                         *(client.tensor(np.array(v, np.int32)) for v in (x, y, z)))
    expect = [-126.79644737231007, 416.28324559588634, -218912930.2987788]
    np.testing.assert_allclose(results.numpy(), expect, rtol=max(rtol, 1e-15))


# ----------------------------------------------------------------------------- reduction

NELEM = 1024


@cube(launch=True)
def array_sum(data: Array[i32]):
    tid = UNIT_POS_X
    size = len(data)
    # The original wraps the body in `if tid < size:` with barriers inside; a barrier in
    # a branch that depends on the unit is an error in cubepy, so the units past the end
    # leave with terminate() (they still arrive at the barriers).
    if tid >= size:
        terminate()
    i = ABSOLUTE_POS
    shr = SharedMemory(i32, NELEM)
    shr[tid] = data[i]
    sync_cube()
    s = 1
    while s < CUBE_DIM_X:
        if tid % (2 * s) == 0:
            shr[tid] += shr[tid + s]
        s *= 2
        sync_cube()
    if tid == 0:
        data[tid] = shr[tid]


@ported(DOCS + "test_reduction.py::test_ex_reduction")
def numba_reduction(client):
    a = client.tensor(np.arange(1024, dtype=np.int32))
    array_sum.launch(client, CubeCount(1), CubeDim(1024), a)
    assert int(a.numpy()[0]) == 523776 == sum(np.arange(1024))


# ----------------------------------------------------------------------------- parallel max

@cube(launch=True)
def max_reduce_kernel(input_array: Array[f32], output_array: Array[f32]):
    """Find the maximum value in each block and store in output array."""
    temp = SharedMemory(f32, 1024)
    tx = UNIT_POS_X
    tid = ABSOLUTE_POS
    block_size = CUBE_DIM_X
    if tid < len(input_array):
        temp[tx] = input_array[tid]
    else:
        temp[tx] = -math.inf
    sync_cube()
    s = block_size // 2
    while s > 0:
        if tx < s and tid < len(input_array):
            temp[tx] = max(temp[tx], temp[tx + s])
        sync_cube()
        s //= 2
    if tx == 0:
        output_array[CUBE_POS_X] = temp[0]


@ported(DOCS + "test_parallel_max.py::test_ex_parallel_max")
def numba_parallel_max(client):
    np.random.seed(42)
    n = 100000
    test_array = np.random.uniform(-1000, 1000, n).astype(np.float32)
    threads_per_block = 1024
    blocks_per_grid = math.ceil(n / threads_per_block)
    d_output = client.empty(blocks_per_grid, f32)
    max_reduce_kernel.launch(client, CubeCount(blocks_per_grid), CubeDim(threads_per_block),
                             client.tensor(test_array), d_output)
    assert np.max(d_output.numpy()) == np.max(test_array)
