"""Line sizes on a GPU: effective bandwidth of a vectorised axpy and bias + ReLU at line
sizes 1, 2, 4 and 8, checked and unchecked.

    python3 benchmarks/bench_lines.py [--runtime cuda] [--elements 67108864]

Each kernel moves 3 (axpy: read x and y, write y) or 2 (ReLU: read x, write out) f32 per
element; the time is the best of several batches of back-to-back launches divided by the
batch size, after a warm-up. Writes lines_<runtime>.md under benchmarks/results/.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import cubepy  # noqa: E402
from cubepy import (ABSOLUTE_POS, CubeCount, CubeDim, Float, Line, Tensor, cube,  # noqa: E402
                    select)

UNITS = 256


@cube(launch=True)
def axpy_lines(a: Float, x: Tensor[Line[Float]], y: Tensor[Line[Float]]):
    i = ABSOLUTE_POS
    if i < y.len():
        y[i] = a * x[i] + y[i]


@cube(launch=True)
def relu_lines(x: Tensor[Line[Float]], out: Tensor[Line[Float]]):
    i = ABSOLUTE_POS
    if i < out.len():
        v = x[i]
        out[i] = select(v > 0.0, v, 0.0)


def _time(client, launch, batch: int = 20, reps: int = 5) -> float:
    launch()
    client.sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(batch):
            launch()
        client.sync()
        best = min(best, (time.perf_counter() - t0) / batch)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", default=None)
    parser.add_argument("--elements", type=int, default=1 << 26)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    c = cubepy.client(args.runtime)
    n_el = args.elements
    rng = np.random.default_rng(0)
    x_h = rng.standard_normal(n_el).astype(np.float32)
    y_h = rng.standard_normal(n_el).astype(np.float32)
    x0, y0, out0 = c.tensor(x_h), c.tensor(y_h), c.zeros((n_el,), cubepy.f32)
    rows = []
    for n in (1, 2, 4, 8):
        x, y, out = (t.with_line_size(n) for t in (x0, y0, out0))
        count = CubeCount(-(-(n_el // n) // UNITS))
        for checked in (True, False):
            go = axpy_lines.launch if checked else axpy_lines.launch_unchecked
            t_axpy = _time(c, lambda: go(c, count, CubeDim(UNITS), 1.0001, x, y))
            go = relu_lines.launch if checked else relu_lines.launch_unchecked
            t_relu = _time(c, lambda: go(c, count, CubeDim(UNITS), x, out))
            rows.append((n, "checked" if checked else "unchecked",
                         3 * 4 * n_el / t_axpy / 1e9, 2 * 4 * n_el / t_relu / 1e9))
    relu_ok = np.array_equal(out0.numpy(), np.maximum(x_h, 0))
    lines = [f"# Line sizes on {c.runtime}: {c.device}", "",
             f"{n_el} f32 elements, {UNITS} units per cube; effective bandwidth (GB/s, "
             f"best of 5 batches of 20 launches). ReLU output checked: "
             f"{'OK' if relu_ok else 'MISMATCH'}.", "",
             "| line size | launch | axpy GB/s | ReLU GB/s |", "| --- | --- | --- | --- |"]
    lines += [f"| {n} | {kind} | {a:.1f} | {r:.1f} |" for n, kind, a, r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"lines_{c.runtime}.md"), "w") as fh:
        fh.write(text)
    return 0 if relu_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
