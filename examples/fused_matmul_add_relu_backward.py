"""The backward pass of the fused matmul + add + ReLU showcase.

    python examples/fused_matmul_add_relu_backward.py            # best runtime present
    python examples/fused_matmul_add_relu_backward.py --runtime cpu --batches 4

Forward: out = relu(lhs @ rhs + bias), with lhs [1, rows, K] broadcast over the batches
of rhs [batches, K, cols] (K == cols, as the seed kernel reads K from rhs's last
dimension). Given grad_out, the backward kernels compute

    grad_pre  = grad_out * (out > 0)                 (also grad_bias)
    grad_lhs  = sum over the batches that read each lhs batch of grad_pre @ rhs^T
    grad_rhs  = lhs^T @ grad_pre, per rhs batch (summed where rhs is broadcast)

and every gradient is checked against numpy. Each kernel takes its batch offsets from
shapes and strides, as the forward kernel does, so any broadcast of lhs or rhs works.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cubepy  # noqa: E402
from cubepy import (ABSOLUTE_POS, ABSOLUTE_POS_X, ABSOLUTE_POS_Y, ABSOLUTE_POS_Z,  # noqa: E402
                    CubeCount, CubeDim, Float, Tensor, cube, terminate)
from fused_matmul_add_relu import launch_forward  # noqa: E402


@cube
def broadcast_offset(out_batch_offset: cubepy.u32, output: Tensor[Float],
                     operand: Tensor[Float]) -> cubepy.u32:
    """The offset of the operand's batch that the output batch at `out_batch_offset`
    reads (the forward kernel's broadcasting rule)."""
    offset = cubepy.u32(0)
    for dim in range(output.rank() - 2):
        offset += out_batch_offset // output.stride(dim) % operand.shape(dim) * operand.stride(dim)
    return offset


@cube(launch=True)
def relu_backward(grad_out: Tensor[Float], out: Tensor[Float], grad_pre: Tensor[Float]):
    """grad_pre = grad_out where the forward output is positive, else 0."""
    i = ABSOLUTE_POS
    if i < grad_pre.len():
        grad_pre[i] = grad_out[i] if out[i] > Float(0.0) else Float(0.0)


@cube(launch=True)
def matmul_grad_lhs(grad_pre: Tensor[Float], rhs: Tensor[Float], grad_lhs: Tensor[Float]):
    """grad_lhs[lb, m, k] = sum over output batches b reading lhs batch lb of
    sum_n grad_pre[b, m, n] * rhs[b, k, n]."""
    row = ABSOLUTE_POS_X
    k = ABSOLUTE_POS_Y
    lhs_batch = ABSOLUTE_POS_Z
    n_rows = grad_lhs.shape(grad_lhs.rank() - 2)
    dim_k = grad_lhs.shape(grad_lhs.rank() - 1)
    n_cols = grad_pre.shape(grad_pre.rank() - 1)
    if row >= n_rows or k >= dim_k:
        terminate()
    my_offset = lhs_batch * n_rows * dim_k
    n_batches = grad_pre.len() // (n_rows * n_cols)
    acc = Float(0.0)
    for b in range(n_batches):
        offset_out = b * n_rows * n_cols
        if broadcast_offset(offset_out, grad_pre, grad_lhs) == my_offset:
            offset_rhs = broadcast_offset(offset_out, grad_pre, rhs)
            for n in range(n_cols):
                acc += grad_pre[offset_out + row * n_cols + n] * rhs[offset_rhs + k * n_cols + n]
    grad_lhs[my_offset + row * dim_k + k] = acc


@cube(launch=True)
def matmul_grad_rhs(lhs: Tensor[Float], grad_pre: Tensor[Float], grad_rhs: Tensor[Float]):
    """grad_rhs[rb, k, n] = sum over output batches b reading rhs batch rb of
    sum_m lhs[b, m, k] * grad_pre[b, m, n]."""
    k = ABSOLUTE_POS_X
    col = ABSOLUTE_POS_Y
    rhs_batch = ABSOLUTE_POS_Z
    dim_k = grad_rhs.shape(grad_rhs.rank() - 2)
    n_cols = grad_rhs.shape(grad_rhs.rank() - 1)
    n_rows = grad_pre.shape(grad_pre.rank() - 2)
    if k >= dim_k or col >= n_cols:
        terminate()
    my_offset = rhs_batch * dim_k * n_cols
    n_batches = grad_pre.len() // (n_rows * n_cols)
    acc = Float(0.0)
    for b in range(n_batches):
        offset_out = b * n_rows * n_cols
        if broadcast_offset(offset_out, grad_pre, grad_rhs) == my_offset:
            offset_lhs = broadcast_offset(offset_out, grad_pre, lhs)
            for m in range(n_rows):
                acc += lhs[offset_lhs + m * dim_k + k] * grad_pre[offset_out + m * n_cols + col]
    grad_rhs[my_offset + k * n_cols + col] = acc


def _grid(rows: int, cols: int, batches: int, dim: CubeDim) -> CubeCount:
    return CubeCount(-(-rows // dim.x), -(-cols // dim.y), batches)


def launch_backward(client, lhs, rhs, out, grad_out):
    """The three backward launches; returns (grad_lhs, grad_rhs, grad_bias) tensors."""
    dtype = out.dtype
    grad_pre = client.empty(out.shape, dtype)
    grad_lhs = client.empty(lhs.shape, dtype)
    grad_rhs = client.empty(rhs.shape, dtype)
    relu_backward.launch(client, CubeCount(-(-grad_pre.len // 256)), CubeDim(256),
                         grad_out, out, grad_pre)
    dim = CubeDim(16, 16, 1)
    lhs_batches = int(np.prod(lhs.shape[:-2], dtype=np.int64))
    rhs_batches = int(np.prod(rhs.shape[:-2], dtype=np.int64))
    matmul_grad_lhs.launch(client, _grid(lhs.shape[-2], lhs.shape[-1], lhs_batches, dim), dim,
                           grad_pre, rhs, grad_lhs)
    matmul_grad_rhs.launch(client, _grid(rhs.shape[-2], rhs.shape[-1], rhs_batches, dim), dim,
                           lhs, grad_pre, grad_rhs)
    return grad_lhs, grad_rhs, grad_pre


def numpy_backward(lhs, rhs, bias, grad_out):
    """The reference gradients, in float64."""
    lhs, rhs, bias, grad_out = (a.astype(np.float64) for a in (lhs, rhs, bias, grad_out))
    pre = lhs @ rhs + bias
    grad_pre = grad_out * (pre > 0)
    grad_lhs = grad_pre @ np.swapaxes(rhs, -1, -2)
    grad_rhs = np.swapaxes(lhs, -1, -2) @ grad_pre
    # Sum over the batch dimensions each operand was broadcast along.
    grad_lhs = grad_lhs.sum(axis=tuple(i for i, s in enumerate(lhs.shape[:-2]) if s == 1),
                            keepdims=True) if lhs.shape != grad_lhs.shape else grad_lhs
    grad_rhs = grad_rhs.sum(axis=tuple(i for i, s in enumerate(rhs.shape[:-2]) if s == 1),
                            keepdims=True) if rhs.shape != grad_rhs.shape else grad_rhs
    return grad_lhs, grad_rhs, grad_pre


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "wgpu", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else the best present: "
                             "cuda, then wgpu on a GPU, then cpu)")
    parser.add_argument("--batches", type=int, default=8,
                        help="batches of rhs and bias; lhs is broadcast over them (default 8)")
    parser.add_argument("--rows", type=int, default=32, help="rows of lhs and out (default 32)")
    parser.add_argument("--cols", type=int, default=32,
                        help="columns of out, also the reduction length K (default 32)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = parser.parse_args(argv)

    client = cubepy.client(args.runtime)
    rng = np.random.default_rng(args.seed)
    k = args.cols
    lhs_h = rng.standard_normal((1, args.rows, k)).astype(np.float32)
    rhs_h = rng.standard_normal((args.batches, k, args.cols)).astype(np.float32)
    bias_h = rng.standard_normal((args.batches, args.rows, args.cols)).astype(np.float32)
    grad_out_h = rng.standard_normal((args.batches, args.rows, args.cols)).astype(np.float32)

    t0 = time.perf_counter()
    lhs, rhs, bias = client.tensor(lhs_h), client.tensor(rhs_h), client.tensor(bias_h)
    out = client.empty((args.batches, args.rows, args.cols), cubepy.f32)
    launch_forward(client, lhs, rhs, bias, out)
    grads = launch_backward(client, lhs, rhs, out, client.tensor(grad_out_h))
    got = [g.numpy() for g in grads]
    elapsed = time.perf_counter() - t0

    expected = numpy_backward(lhs_h, rhs_h, bias_h, grad_out_h)
    ok = True
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device}")
    for name, g, e in zip(("grad_lhs", "grad_rhs", "grad_bias"), got, expected):
        good = g.shape == e.shape and np.allclose(g, e, rtol=1e-4, atol=1e-3 * args.batches)
        ok &= good
        err = float(np.max(np.abs(g - e))) if g.shape == e.shape else float("inf")
        print(f"{name:9} {str(g.shape):15} {'OK' if good else 'MISMATCH'} "
              f"(max abs error {err:.2e})")
    print(f"time:    {elapsed * 1e3:.1f} ms (forward + backward, compile included)")
    return 0 if ok else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
