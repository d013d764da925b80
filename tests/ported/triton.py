"""Ported from Triton's tutorials (triton-lang/triton, python/tutorials/). A Triton
program works on a block of elements at once; the port gives each program a cube and
each block element a unit (`tl.program_id(0)` is CUBE_POS_X, `tl.arange(0, BLOCK)` is
UNIT_POS_X plus a loop over blocks), and a block reduction (`tl.sum`, `tl.max`) becomes
a shared-memory tree over the cube. Inputs are the tutorials' own: torch's generator
with seed 0 where torch is installed, numpy's otherwise."""
from __future__ import annotations

import math

import numpy as np

from cubepy import (CUBE_DIM_X, CUBE_POS_X, UNIT_POS_X, Array, CubeCount, CubeDim, Float,
                    SharedMemory, cube, f16, f32, sync_cube, u32)

from . import ported

TUTORIALS = "triton-lang/triton: python/tutorials/"
REDUCE_UNITS = 256


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _rand(shape, normal: bool) -> np.ndarray:
    """torch.manual_seed(0) then torch.rand / torch.randn, as the tutorials draw."""
    torch = _torch()
    if torch is None:
        rng = np.random.default_rng(0)
        return (rng.standard_normal(shape) if normal else rng.random(shape)).astype(np.float32)
    torch.manual_seed(0)
    return (torch.randn(shape) if normal else torch.rand(shape)).numpy()


# ----------------------------------------------------------------------------- 01 vector add

BLOCK_SIZE = 1024


@cube(launch=True)
def add_kernel(x_ptr: Array[f32], y_ptr: Array[f32], output_ptr: Array[f32], n_elements: u32):
    pid = CUBE_POS_X
    block_start = pid * BLOCK_SIZE
    offsets = block_start + UNIT_POS_X  # one unit per element of tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    if mask:
        x = x_ptr[offsets]
        y = y_ptr[offsets]
        output = x + y
        output_ptr[offsets] = output


@ported(TUTORIALS + "01-vector-add.py")
def triton_vector_add(client):
    size = 98432
    torch = _torch()
    if torch is not None:
        torch.manual_seed(0)
        x, y = torch.rand(size).numpy(), torch.rand(size).numpy()
    else:
        x, y = _rand(size, False), _rand(size, False)[::-1].copy()
    output = client.empty(size, f32)
    grid = math.ceil(size / BLOCK_SIZE)  # triton.cdiv(n_elements, BLOCK_SIZE)
    add_kernel.launch(client, CubeCount(grid), CubeDim(BLOCK_SIZE), client.tensor(x),
                      client.tensor(y), output, size)
    assert np.max(np.abs(output.numpy() - (x + y))) == 0.0


# ----------------------------------------------------------------------------- shared reductions

@cube
def cube_sum(partial: Array[f32], value: f32) -> f32:
    """tl.sum over the cube: a shared-memory tree; every unit gets the total."""
    u = UNIT_POS_X
    partial[u] = value
    sync_cube()
    s = CUBE_DIM_X // 2
    while s > 0:
        if u < s:
            partial[u] += partial[u + s]
        sync_cube()
        s //= 2
    total = partial[0]
    sync_cube()  # the next reduction may overwrite partial[0]
    return total


@cube
def cube_max(partial: Array[f32], value: f32) -> f32:
    """tl.max over the cube, as cube_sum."""
    u = UNIT_POS_X
    partial[u] = value
    sync_cube()
    s = CUBE_DIM_X // 2
    while s > 0:
        if u < s:
            partial[u] = max(partial[u], partial[u + s])
        sync_cube()
        s //= 2
    total = partial[0]
    sync_cube()
    return total


# ----------------------------------------------------------------------------- 02 fused softmax

@cube(launch=True)
def softmax_kernel(output_ptr: Array[f32], input_ptr: Array[f32], input_row_stride: u32,
                   output_row_stride: u32, n_cols: u32):
    row_idx = CUBE_POS_X
    row_start_ptr = row_idx * input_row_stride
    partial = SharedMemory(f32, REDUCE_UNITS)
    # the row is read in blocks of REDUCE_UNITS columns (tl.arange over the block)
    row_max = -math.inf
    for col in range(UNIT_POS_X, n_cols, CUBE_DIM_X):
        row_max = max(row_max, input_ptr[row_start_ptr + col])
    row_max = cube_max(partial, row_max)
    denominator = f32(0.0)
    for col in range(UNIT_POS_X, n_cols, CUBE_DIM_X):
        denominator += math.exp(input_ptr[row_start_ptr + col] - row_max)
    denominator = cube_sum(partial, denominator)
    output_row_start_ptr = row_idx * output_row_stride
    for col in range(UNIT_POS_X, n_cols, CUBE_DIM_X):
        numerator = math.exp(input_ptr[row_start_ptr + col] - row_max)
        output_ptr[output_row_start_ptr + col] = numerator / denominator


@ported(TUTORIALS + "02-fused-softmax.py")
def triton_fused_softmax(client):
    x = _rand((1823, 781), True)
    n_rows, n_cols = x.shape
    y = client.empty((n_rows, n_cols), f32)
    softmax_kernel.launch(client, CubeCount(n_rows), CubeDim(REDUCE_UNITS), y,
                          client.tensor(x), n_cols, n_cols, n_cols)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    y_ref = e / e.sum(axis=1, keepdims=True)  # torch.softmax(x, axis=1)
    np.testing.assert_allclose(y.numpy(), y_ref, rtol=1e-5, atol=1e-8)


# ----------------------------------------------------------------------------- 05 layer norm

@cube(launch=True)
def _layer_norm_fwd_fused(X: Array[Float], Y: Array[Float], W: Array[Float],
                          B: Array[Float], Mean: Array[f32], Rstd: Array[f32],
                          stride: u32, N: u32, eps: f32):
    row = CUBE_POS_X
    Y_row = row * stride
    X_row = row * stride
    partial = SharedMemory(f32, REDUCE_UNITS)
    # compute mean
    _mean = f32(0.0)
    for cols in range(UNIT_POS_X, N, CUBE_DIM_X):
        _mean += f32(X[X_row + cols])
    mean = cube_sum(partial, _mean) / f32(N)
    # compute variance
    _var = f32(0.0)
    for cols in range(UNIT_POS_X, N, CUBE_DIM_X):
        x = f32(X[X_row + cols]) - mean
        _var += x * x
    var = cube_sum(partial, _var) / f32(N)
    rstd = 1 / math.sqrt(var + eps)
    # write mean / rstd
    if UNIT_POS_X == 0:
        Mean[row] = mean
        Rstd[row] = rstd
    # normalize and apply linear transformation
    for cols in range(UNIT_POS_X, N, CUBE_DIM_X):
        w = f32(W[cols])
        b = f32(B[cols])
        x = f32(X[X_row + cols])
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        Y[Y_row + cols] = Float(y)


@ported(TUTORIALS + "05-layer-norm.py::test_layer_norm(1151, 8192, torch.float16)",
        needs=(f16,))
def triton_layer_norm(client):
    M, N, eps = 1151, 8192, 1e-5
    torch = _torch()
    if torch is not None:
        torch.manual_seed(0)
        weight = torch.rand((N,)).half().numpy()
        bias = torch.rand((N,)).half().numpy()
        x = (-2.3 + 0.5 * torch.randn((M, N))).half().numpy()
    else:
        rng = np.random.default_rng(0)
        weight, bias = rng.random(N).astype(np.float16), rng.random(N).astype(np.float16)
        x = (-2.3 + 0.5 * rng.standard_normal((M, N))).astype(np.float16)
    y = client.empty((M, N), f16)
    mean, rstd = client.empty(M, f32), client.empty(M, f32)
    _layer_norm_fwd_fused.launch(client, CubeCount(M), CubeDim(REDUCE_UNITS),
                                 client.tensor(x), y, client.tensor(weight),
                                 client.tensor(bias), mean, rstd, N, N, eps)
    xf = x.astype(np.float32)  # torch.nn.functional.layer_norm in float32, then half
    mu = xf.mean(axis=1, keepdims=True)
    y_ref = ((xf - mu) / np.sqrt(xf.var(axis=1, keepdims=True) + eps)
             * weight.astype(np.float32) + bias.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(y.numpy().astype(np.float32), y_ref.astype(np.float32),
                               atol=1e-2, rtol=0)
