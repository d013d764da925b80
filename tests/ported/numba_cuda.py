"""Ported from Numba's CUDA documentation examples (numba/numba,
numba/cuda/tests/doc_examples/). Line by line where cubepy has the construct; where the
port departs from the original, the comment at that line says how and why."""
from __future__ import annotations

import math

import numpy as np

from cubepy import (ABSOLUTE_POS, ABSOLUTE_POS_X, ABSOLUTE_POS_Y, CUBE_COUNT_X, CUBE_DIM_X,
                    CUBE_POS_X, UNIT_POS_X, UNIT_POS_Y, Array, CubeCount, CubeDim, Float,
                    SharedMemory, Tensor, cube, f32, i32, sync_cube, terminate)

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


# ----------------------------------------------------------------------------- matmul

@cube(launch=True)
def matmul(A: Tensor[Float], B: Tensor[Float], C: Tensor[Float]):
    """Perform square matrix multiplication of C = A * B."""
    i, j = ABSOLUTE_POS_X, ABSOLUTE_POS_Y  # cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = Float(0.0)
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


TPB = 16


@cube(launch=True)
def fast_matmul(A: Tensor[Float], B: Tensor[Float], C: Tensor[Float]):
    """Perform matrix multiplication of C = A * B using shared memory."""
    sA = SharedMemory(Float, (TPB, TPB))
    sB = SharedMemory(Float, (TPB, TPB))
    x, y = ABSOLUTE_POS_X, ABSOLUTE_POS_Y
    tx = UNIT_POS_X
    ty = UNIT_POS_Y
    bpg = CUBE_COUNT_X  # blocks per grid
    tmp = Float(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        sync_cube()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        sync_cube()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


@ported(DOCS + "test_matmul.py::test_ex_matmul")
def numba_matmul(client):
    F, rtol = best_float(client)
    x_h = np.arange(16).reshape([4, 4]).astype(F.numpy)
    y_h = np.ones([4, 4], F.numpy)
    z = client.zeros((4, 4), F)
    matmul.launch(client, CubeCount(1), CubeDim(16, 16), client.tensor(x_h),
                  client.tensor(y_h), z)
    assert np.all(z.numpy() == x_h @ y_h)
    threadsperblock = (TPB, TPB)
    z = client.zeros((4, 4), F)
    blockspergrid = (math.ceil(4 / threadsperblock[0]), math.ceil(4 / threadsperblock[1]))
    fast_matmul.launch(client, CubeCount(*blockspergrid), CubeDim(*threadsperblock),
                       client.tensor(x_h), client.tensor(y_h), z)
    assert np.all(z.numpy() == x_h @ y_h), "fast_matmul incorrect, square case"
    x_h = np.arange(115).reshape([5, 23]).astype(F.numpy)
    y_h = np.ones([23, 7], F.numpy)
    z = client.zeros((5, 7), F)
    grid_y_max = max(x_h.shape[0], y_h.shape[0])
    grid_x_max = max(x_h.shape[1], y_h.shape[1])
    blockspergrid = (math.ceil(grid_x_max / threadsperblock[0]),
                     math.ceil(grid_y_max / threadsperblock[1]))
    fast_matmul.launch(client, CubeCount(*blockspergrid), CubeDim(*threadsperblock),
                       client.tensor(x_h), client.tensor(y_h), z)
    assert np.all(z.numpy() == x_h @ y_h), "fast_matmul incorrect, non-square case"


# ----------------------------------------------------------------------------- convolution

@cube(launch=True)
def convolution_kernel(image: Tensor[f32], kernel: Tensor[f32], output: Tensor[f32]):
    """Apply a 2D convolution filter to an image."""
    i, j = ABSOLUTE_POS_X, ABSOLUTE_POS_Y
    k_rows, k_cols = kernel.shape  # (fixes kernel's rank at 2: the launch checks it)
    k_center_y, k_center_x = k_rows // 2, k_cols // 2
    if i < output.shape[0] and j < output.shape[1]:
        val = f32(0.0)
        for k_i in range(k_rows):
            for k_j in range(k_cols):
                # signed positions: Numba's integers are int64, cubepy's shapes u32
                i_pos = i32(i) + (i32(k_i) - i32(k_center_y))
                j_pos = i32(j) + (i32(k_j) - i32(k_center_x))
                if 0 <= i_pos < i32(image.shape[0]) and 0 <= j_pos < i32(image.shape[1]):
                    val += image[i_pos, j_pos] * kernel[k_i, k_j]
        output[i, j] = val


@ported(DOCS + "test_convolution.py::test_ex_convolution")
def numba_convolution(client):
    image_size = 64
    image = np.zeros((image_size, image_size), dtype=np.float32)
    for i in range(image_size):
        for j in range(image_size):
            image[i, j] = (i + j) / (2 * image_size)
    gaussian = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=np.float32) / 16.0
    out = client.empty(image.shape, f32)
    blocks = (math.ceil(image.shape[0] / 16), math.ceil(image.shape[1] / 16))
    convolution_kernel.launch(client, CubeCount(*blocks), CubeDim(16, 16),
                              client.tensor(image), client.tensor(gaussian), out)
    # signal.convolve2d(image, gaussian, mode='same'), with numpy: zero padding, the
    # kernel flipped (it is symmetric)
    padded = np.pad(image, 1)
    expect = sum(padded[di:di + image_size, dj:dj + image_size] * gaussian[2 - di, 2 - dj]
                 for di in range(3) for dj in range(3))
    np.testing.assert_allclose(out.numpy(), expect, rtol=1e-5, atol=1e-5)
