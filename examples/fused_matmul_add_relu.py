"""The showcase: a fused matmul + add + ReLU kernel with batch broadcasting.

    python examples/fused_matmul_add_relu.py                  # best runtime present
    python examples/fused_matmul_add_relu.py --runtime cpu --batches 8 --rows 64
    python examples/fused_matmul_add_relu.py --show-source wgsl

Runs the kernel, checks it against numpy's `np.maximum(lhs @ rhs + bias, 0)`, and prints
the runtime, the device and the time taken.

The kernel is the seed kernel exactly as written: it reads the reduction length `dim_k`
from rhs's last dimension, so it multiplies [.., rows, K] by [.., K, cols] with K == cols.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import cubepy
from cubepy import (ABSOLUTE_POS_X, ABSOLUTE_POS_Y, ABSOLUTE_POS_Z, CubeCount, CubeDim,
                    Float, Tensor, cube, terminate)


@cube(launch=True)
def fused_matmul_add_relu_kernel(lhs: Tensor[Float], rhs: Tensor[Float],
                                 bias: Tensor[Float], output: Tensor[Float]):
    row = ABSOLUTE_POS_X
    col = ABSOLUTE_POS_Y
    batch = ABSOLUTE_POS_Z
    n_rows = output.shape(output.rank() - 2)
    n_cols = output.shape(output.rank() - 1)
    dim_k = rhs.shape(rhs.rank() - 1)
    if row >= n_rows or col >= n_cols:
        terminate()
    offset_output = batch * n_rows * n_cols
    offset_lhs = 0
    offset_rhs = 0
    batch_dims = output.rank() - 2
    for dim in range(batch_dims):
        offset_lhs += offset_output // output.stride(dim) % lhs.shape(dim) * lhs.stride(dim)
        offset_rhs += offset_output // output.stride(dim) % rhs.shape(dim) * rhs.stride(dim)
    sum = Float(0.0)
    for k in range(dim_k):
        sum += lhs[offset_lhs + row * dim_k + k] * rhs[offset_rhs + k * n_cols + col]
    index = offset_output + row * n_cols + col
    output[index] = max(sum + bias[index], Float(0.0))


def launch_forward(client, lhs, rhs, bias, out) -> None:
    """The forward launch: one unit per output element, 16x16 units per cube."""
    cube_dim = CubeDim(16, 16, 1)
    n_rows, n_cols = out.shape[-2], out.shape[-1]
    batches = int(np.prod(out.shape[:-2], dtype=np.int64))
    cube_count = CubeCount(-(-n_rows // cube_dim.x), -(-n_cols // cube_dim.y), batches)
    fused_matmul_add_relu_kernel.launch(client, cube_count, cube_dim, lhs, rhs, bias, out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "wgpu", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else the best present: "
                             "cuda, then wgpu on a GPU, then cpu)")
    parser.add_argument("--show-source", choices=("cuda", "wgsl", "metal"),
                        help="print the generated source for this target and exit")
    parser.add_argument("--batches", type=int, default=32,
                        help="batches of rhs and bias; lhs is broadcast over them (default 32)")
    parser.add_argument("--rows", type=int, default=32, help="rows of lhs and out (default 32)")
    parser.add_argument("--cols", type=int, default=32,
                        help="columns of out, also the reduction length K (default 32)")
    parser.add_argument("--dtype", default="f32", choices=("f32", "f16"),
                        help="element type of every tensor (default f32)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = parser.parse_args(argv)

    dtype = cubepy.f32 if args.dtype == "f32" else cubepy.f16
    if args.show_source:
        print(fused_matmul_add_relu_kernel.source(args.show_source, cube_dim=CubeDim(16, 16, 1),
                                                  Float=dtype))
        return 0

    client = cubepy.client(args.runtime)
    rng = np.random.default_rng(args.seed)
    np_dtype = dtype.numpy
    lhs_h = rng.random((1, args.rows, args.cols)).astype(np_dtype)          # broadcast over batch
    rhs_h = rng.random((args.batches, args.cols, args.cols)).astype(np_dtype)
    bias_h = (rng.random((args.batches, args.rows, args.cols)) - 0.5).astype(np_dtype)

    t0 = time.perf_counter()
    lhs, rhs, bias = client.tensor(lhs_h), client.tensor(rhs_h), client.tensor(bias_h)
    out = client.empty((args.batches, args.rows, args.cols), dtype)
    launch_forward(client, lhs, rhs, bias, out)
    result = out.numpy()
    first = time.perf_counter() - t0

    t1 = time.perf_counter()
    launch_forward(client, lhs, rhs, bias, out)
    client.sync()
    again = time.perf_counter() - t1

    expected = np.maximum(lhs_h.astype(np.float64) @ rhs_h.astype(np.float64)
                          + bias_h.astype(np.float64), 0)
    tol = 1e-4 if dtype is cubepy.f32 else 5e-2
    ok = np.allclose(result.astype(np.float64), expected, rtol=tol, atol=tol * args.cols)
    err = float(np.max(np.abs(result.astype(np.float64) - expected)))
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device}")
    print(f"shapes:  lhs {lhs_h.shape} x rhs {rhs_h.shape} + bias {bias_h.shape} "
          f"-> out {out.shape} ({args.dtype})")
    print(f"time:    {first * 1e3:.1f} ms first run (compile + upload + launch + read), "
          f"{again * 1e3:.2f} ms second launch")
    print(f"check:   {'OK' if ok else 'MISMATCH'} against np.maximum(lhs @ rhs + bias, 0) "
          f"(max abs error {err:.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
