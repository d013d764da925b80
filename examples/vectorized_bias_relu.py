"""Vectorised kernels with `Line[T]`: bias + ReLU over a matrix, and row sums.

    python examples/vectorized_bias_relu.py                   # best runtime present
    python examples/vectorized_bias_relu.py --runtime cpu --line-size 2
    python examples/vectorized_bias_relu.py --show-source cuda

Each unit handles one line (`--line-size` elements, 1, 2, 4 or 8) of a row: the same
kernel source serves every line size, chosen at launch with `tensor.with_line_size(n)`.
The results are checked against numpy.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CubeCount, CubeDim, Float, Line, Tensor, cube,
                    select, terminate, unroll)

UNITS = 64


@cube(launch=True)
def bias_relu(x: Tensor[Line[Float]], bias: Tensor[Line[Float]], out: Tensor[Line[Float]]):
    """out = max(x + bias, 0), with bias broadcast over the rows of x."""
    i = ABSOLUTE_POS
    if i >= out.len():
        terminate()
    lines_per_row = bias.len()
    v = x[i] + bias[i % lines_per_row]
    out[i] = select(v > Float(0.0), v, Float(0.0))


@cube(launch=True)
def row_sums(x: Tensor[Line[Float]], sums: Array[Float]):
    """sums[r] = the sum of row r: each unit adds up the lines of one row."""
    row = ABSOLUTE_POS
    if row >= sums.len():
        terminate()
    lines_per_row = x.shape(x.rank() - 1) // u32_line_size(x)
    acc = x[row * lines_per_row] * Float(0.0)
    for j in range(lines_per_row):
        acc += x[row * lines_per_row + j]
    total = Float(0.0)
    for k in unroll(range(x.line_size())):
        total += acc[k]
    sums[row] = total


@cube
def u32_line_size(t: Tensor[Line[Float]]) -> cubepy.u32:
    return cubepy.u32(t.line_size())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "wgpu", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else the best present: "
                             "cuda, then wgpu on a GPU, then cpu)")
    parser.add_argument("--show-source", choices=("cuda", "wgsl", "metal"),
                        help="print the generated source (line size 4) and exit")
    parser.add_argument("--rows", type=int, default=256, help="rows of x (default 256)")
    parser.add_argument("--cols", type=int, default=512,
                        help="columns of x, a multiple of the line size (default 512)")
    parser.add_argument("--line-size", type=int, default=4, choices=(1, 2, 4, 8),
                        help="elements each unit reads and writes at once (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = parser.parse_args(argv)
    n = args.line_size
    if args.show_source:
        print(bias_relu.source(args.show_source, cube_dim=CubeDim(UNITS), Float=cubepy.f32,
                               line_sizes={"x": 4, "bias": 4, "out": 4}))
        return 0

    client = cubepy.client(args.runtime)
    rng = np.random.default_rng(args.seed)
    x_h = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    bias_h = rng.standard_normal(args.cols).astype(np.float32)

    t0 = time.perf_counter()
    x = client.tensor(x_h).with_line_size(n)
    bias = client.tensor(bias_h).with_line_size(n)
    out = client.empty((args.rows, args.cols), cubepy.f32).with_line_size(n)
    sums = client.empty((args.rows,), cubepy.f32)
    bias_relu.launch(client, CubeCount(-(-out.len // UNITS)), CubeDim(UNITS), x, bias, out)
    row_sums.launch(client, CubeCount(-(-args.rows // UNITS)), CubeDim(UNITS), out, sums)
    got, got_sums = out.numpy(), sums.numpy()
    elapsed = time.perf_counter() - t0

    want = np.maximum(x_h + bias_h, 0)
    ok = np.allclose(got, want, atol=1e-6) and \
        np.allclose(got_sums, want.sum(1), rtol=1e-4, atol=1e-3)
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device}")
    print(f"shape:   ({args.rows}, {args.cols}) f32, line size {n} "
          f"({out.len} lines, {UNITS} units per cube)")
    print(f"time:    {elapsed * 1e3:.1f} ms (compile + upload + 2 launches + read)")
    print(f"check:   {'OK' if ok else 'MISMATCH'} against numpy "
          f"(max abs error {np.abs(got - want).max():.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
