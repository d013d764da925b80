"""Row-wise fp8 quantization: each row of an f32 matrix scaled into e4m3's range (its
largest magnitude to 448) and stored as 8-bit floats, with the factor kept per row.

    python examples/fp8_quantize.py                 # cuda if present, else the cpu runtime
    python examples/fp8_quantize.py --runtime cpu --rows 64 --cols 1000
    python examples/fp8_quantize.py --show-source cuda

One plane (32 units) per row: the row's largest magnitude by `plane_max`, then each unit
converts its elements with `e4m3(x * factor)`, which rounds to nearest even and
saturates (docs/LANGUAGE.md, "8-bit floats"). The bits are checked against the host's
conversion (`cubepy.fp8`) and the dequantized values against the input. With PyTorch
installed the output is a `torch.float8_e4m3fn` tensor the kernel writes in place.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

import cubepy
from cubepy import (CUBE_POS, UNIT_POS, CubeCount, CubeDim, Tensor, cube, e4m3, f32, fp8,
                    plane_max, select)

E4M3_MAX = 448.0
PLANE = 32


@cube(launch=True)
def quantize_rows(x: Tensor[f32], q: Tensor[e4m3], factors: Tensor[f32]):
    """q[r, c] = e4m3(x[r, c] * factors[r]), factors[r] = 448 / max |x[r, :]| (1 for a
    row of zeros); one plane per row."""
    row = CUBE_POS
    cols = x.shape(1)
    top = f32(0.0)
    for c in range(UNIT_POS, cols, PLANE):
        top = max(top, abs(x[row * cols + c]))
    top = plane_max(top)
    factor = select(top > 0.0, E4M3_MAX / top, f32(1.0))
    if UNIT_POS == 0:
        factors[row] = factor
    for c in range(UNIT_POS, cols, PLANE):
        q[row * cols + c] = e4m3(x[row * cols + c] * factor)


def quantize(client, x: np.ndarray, q=None):
    """(q, factors): x (rows x cols, f32) quantized on `client`; `q` may be a tensor to
    write (a torch float8_e4m3fn tensor is written in place)."""
    rows, cols = x.shape
    if q is None:
        q = client.zeros((rows, cols), e4m3)
    factors = client.zeros(rows, f32)
    quantize_rows.launch(client, CubeCount(rows), CubeDim(PLANE), client.tensor(x), q,
                         factors)
    return q, factors.numpy()


def check(x: np.ndarray, q_values: np.ndarray, factors: np.ndarray) -> float:
    """Raises unless q holds exactly the host's rounding of x * factor; returns the
    largest relative error of the dequantized values (at most 2^-4 for e4m3)."""
    expect = fp8.round_to(x * factors[:, None], "e4m3")
    if not np.array_equal(q_values, expect):
        raise AssertionError("the kernel's fp8 values differ from the host's rounding")
    back = q_values / factors[:, None]
    top = np.abs(x).max(axis=1, keepdims=True)
    err = float((np.abs(back - x) / np.where(top > 0, top, 1)).max())
    if err > 2.0 ** -4:
        raise AssertionError(f"dequantized values are off by {err:.3g} of the row's range")
    return err


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else cuda if present, "
                             "else cpu; WGSL has no 8-bit float)")
    parser.add_argument("--show-source", choices=("cuda",),
                        help="print the generated CUDA and exit")
    parser.add_argument("--rows", type=int, default=256, help="rows of the matrix")
    parser.add_argument("--cols", type=int, default=4096, help="columns of the matrix")
    args = parser.parse_args(argv)
    if args.show_source:
        print(quantize_rows.source(args.show_source, cube_dim=(PLANE, 1, 1)))
        return 0
    if args.rows <= 0 or args.cols <= 0:
        parser.error("--rows and --cols must be positive")
    runtime = (args.runtime or os.environ.get("CUBEPY_RUNTIME")
               or ("cuda" if "cuda" in cubepy.available_runtimes() else "cpu"))
    client = cubepy.client(runtime)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((args.rows, args.cols)) *
         rng.uniform(0.01, 100, (args.rows, 1))).astype(np.float32)
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device}")
    print(f"shape:   {args.rows} x {args.cols} f32 into e4m3, one factor per row")
    q, factors = quantize(client, x)
    err = check(x, q.numpy(), factors)  # raises unless the bits are the host's
    print(f"result:  OK (the host's rounding bit for bit; largest error {err:.4f} of a "
          f"row's range)")
    try:
        import torch
    except ImportError:
        return 0
    device = "cuda" if client.runtime == "cuda" else "cpu"
    tq = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=device)
    _, factors = quantize(client, x, tq)  # written in place
    check(x, tq.float().cpu().numpy(), factors)
    print(f"torch:   OK (a torch.float8_e4m3fn tensor on {device}, written in place)")
    return 0


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
