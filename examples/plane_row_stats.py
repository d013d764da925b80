"""Row sums and maxima with plane (warp / subgroup) reductions.

    python examples/plane_row_stats.py                   # best runtime present
    python examples/plane_row_stats.py --runtime cpu --rows 100 --cols 3000
    python examples/plane_row_stats.py --show-source wgsl

One cube per row: each unit accumulates a strided slice of the row, `plane_sum` and
`plane_max` combine the units of each plane, lane 0 of every plane leaves its partial in
shared memory, and unit 0 combines the CUBE_DIM // PLANE_DIM partials. The kernel reads
PLANE_DIM, so it works with any plane size (32 on CUDA, 8 on llvmpipe, ...). The results
are checked against numpy.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import cubepy
from cubepy import (CUBE_DIM, CUBE_POS, PLANE_DIM, UNIT_POS, UNIT_POS_PLANE, Array,
                    CubeCount, CubeDim, SharedMemory, Tensor, cube, f32, sync_cube)

UNITS = 256


@cube(launch=True)
def row_stats(x: Tensor[f32], sums: Array[f32], maxes: Array[f32]):
    """sums[r], maxes[r] = the sum and the maximum of row r of x (rows x cols)."""
    row = CUBE_POS
    cols = x.shape(1)
    part_sum = SharedMemory(f32, 256)  # one partial per plane: room for planes of 1
    part_max = SharedMemory(f32, 256)
    base = row * cols
    s = f32(0.0)
    m = x[base]  # an element of the row: a neutral start for the maximum
    for j in range(UNIT_POS, cols, CUBE_DIM):
        v = x[base + j]
        s += v
        m = max(m, v)
    s = cubepy.plane_sum(s)
    m = cubepy.plane_max(m)
    if UNIT_POS_PLANE == 0:
        part_sum[UNIT_POS // PLANE_DIM] = s
        part_max[UNIT_POS // PLANE_DIM] = m
    sync_cube()
    if UNIT_POS == 0:
        total = f32(0.0)
        best = part_max[0]
        for p in range(CUBE_DIM // PLANE_DIM):
            total += part_sum[p]
            best = max(best, part_max[p])
        sums[row] = total
        maxes[row] = best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "wgpu", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else the best present: "
                             "cuda, then wgpu on a GPU, then cpu)")
    parser.add_argument("--show-source", choices=("cuda", "wgsl", "metal"),
                        help="print the generated source and exit")
    parser.add_argument("--rows", type=int, default=64,
                        help="rows of the matrix, one cube each (default 64)")
    parser.add_argument("--cols", type=int, default=1000,
                        help="columns of the matrix (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random input")
    args = parser.parse_args(argv)
    if args.show_source:
        print(row_stats.source(args.show_source, cube_dim=CubeDim(UNITS)))
        return 0

    client = cubepy.client(args.runtime)
    rng = np.random.default_rng(args.seed)
    x_h = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    t0 = time.perf_counter()
    x = client.tensor(x_h)
    sums = client.zeros((args.rows,), f32)
    maxes = client.zeros((args.rows,), f32)
    row_stats.launch(client, CubeCount(args.rows), CubeDim(UNITS), x, sums, maxes)
    got_sums, got_maxes = sums.numpy(), maxes.numpy()
    elapsed = time.perf_counter() - t0

    want_sums = x_h.sum(axis=1, dtype=np.float64)
    ok_sums = np.allclose(got_sums, want_sums, rtol=1e-4, atol=1e-3)
    ok_maxes = np.array_equal(got_maxes, x_h.max(axis=1))
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device}")
    print(f"shape:   {args.rows} rows x {args.cols} cols, {UNITS} units per row")
    print(f"time:    {elapsed * 1e3:.1f} ms (compile + upload + launch + read)")
    err = float(np.max(np.abs(got_sums - want_sums))) if args.rows else 0.0
    print(f"sums:    {'OK' if ok_sums else 'MISMATCH'} (max abs error {err:.2e})")
    print(f"maxima:  {'OK' if ok_maxes else 'MISMATCH'}")
    return 0 if ok_sums and ok_maxes else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
