"""A tiled f16 matrix multiply on matrix units (tensor cores) with cubepy.cmma.

    python examples/cmma_matmul.py                  # cuda if present, else the cpu runtime
    python examples/cmma_matmul.py --runtime cpu --size 256
    python examples/cmma_matmul.py --show-source cuda

c = a @ b for size x size f16 matrices (size a multiple of 64), accumulated in f32. One
cube of 4 planes computes a 64 x 64 block of c: each plane a 32 x 32 tile held as 2 x 2
accumulator fragments of 16 x 16, stepping through k 16 at a time with two A and two B
fragments. CUDA runs it on wmma (sm_70+); the cpu runtime emulates the fragments; WGSL
has no matrix units. The result is checked against numpy.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import cubepy
from cubepy import CUBE_POS_X, CUBE_POS_Y, UNIT_POS, Array, CubeCount, CubeDim, cmma, cube
from cubepy import f16, f32, u32, unroll

BLOCK = 64  # rows and columns of c per cube
UNITS = 128  # 4 planes of 32


@cube(launch=True)
def matmul(a: Array[f16], b: Array[f16], c: Array[f32], size: u32):
    """c = a @ b, all row major, size x size."""
    plane = UNIT_POS // 32
    row0 = CUBE_POS_Y * 64 + (plane // 2) * 32
    col0 = CUBE_POS_X * 64 + (plane % 2) * 32
    fa = cmma.Matrices(2, cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrices(2, cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrices(4, cmma.ACCUMULATOR, 16, 16, 16, f32)
    for i in unroll(range(4)):
        cmma.fill(acc[i], 0.0)
    for k in range(0, size, 16):
        for i in unroll(range(2)):
            cmma.load(fa[i], a, (row0 + i * 16) * size + k, size)
            cmma.load(fb[i], b, k * size + col0 + i * 16, size)
        for i in unroll(range(2)):
            for j in unroll(range(2)):
                cmma.execute(fa[i], fb[j], acc[i * 2 + j], acc[i * 2 + j])
    for i in unroll(range(2)):
        for j in unroll(range(2)):
            cmma.store(c, (row0 + i * 16) * size + col0 + j * 16, acc[i * 2 + j], size,
                       cmma.ROW_MAJOR)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else cuda if present, "
                             "else cpu; WGSL has no matrix units)")
    parser.add_argument("--show-source", choices=("cuda",),
                        help="print the generated CUDA and exit")
    parser.add_argument("--size", type=int, default=128,
                        help="rows and columns of the matrices, a multiple of 64")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random input")
    args = parser.parse_args(argv)
    if args.show_source:
        print(matmul.source(args.show_source, cube_dim=CubeDim(UNITS)))
        return 0
    if args.size <= 0 or args.size % BLOCK:
        parser.error(f"--size must be a positive multiple of {BLOCK}")

    runtime = (args.runtime or os.environ.get("CUBEPY_RUNTIME")
               or ("cuda" if "cuda" in cubepy.available_runtimes() else "cpu"))
    client = cubepy.client(runtime)
    rng = np.random.default_rng(args.seed)
    n = args.size
    a_h = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    b_h = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    t0 = time.perf_counter()
    a, b = client.tensor(a_h.ravel()), client.tensor(b_h.ravel())
    c = client.zeros(n * n, f32)
    matmul.launch(client, CubeCount(n // BLOCK, n // BLOCK), CubeDim(UNITS), a, b, c, n)
    got = c.numpy().reshape(n, n)
    elapsed = time.perf_counter() - t0

    want = a_h.astype(np.float32) @ b_h.astype(np.float32)
    err = float(np.max(np.abs(got - want)))
    ok = err <= 1e-3 * np.sqrt(n)
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device}")
    print(f"shape:   {n} x {n} @ {n} x {n}, f16 into f32, {UNITS} units per cube")
    print(f"time:    {elapsed * 1e3:.1f} ms (compile + upload + launch + read)")
    print(f"result:  {'OK' if ok else 'MISMATCH'} (max abs error {err:.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
