"""Layernorm's plans at the working tree against the same kernels from another file
(the module at an earlier revision), timed interleaved, on each GPU runtime present.

    git show REV:benchmarks/kernels/layernorm.py > benchmarks/kernels/_layernorm_old.py
    python benchmarks/probe_layernorm_ab.py [--rounds 5] [--out FILE.json]

For a change meant to leave the generated kernels' speed alone (a refactor of the
kernels' source): every plan of `candidate_plans` at 4096 x 1024 and 4096 x 4096, f32
and f16, is timed by `cubepy.bench` (30 repetitions, a cold L2 each) in `--rounds`
rounds, old and new alternating, and each output is checked against numpy. Prints and
writes the median of the round medians per plan, old and new, and their ratio.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cubepy  # noqa: E402
from cubepy import f16, f32  # noqa: E402

SHAPES = ((4096, 1024), (4096, 4096))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                      "layernorm_ab.json"))
    opts = parser.parse_args()
    new = importlib.import_module("benchmarks.kernels.layernorm")
    old = importlib.import_module("benchmarks.kernels._layernorm_old")
    rows_out = []
    for runtime in ("cuda", "wgpu"):
        try:
            client = cubepy.client(runtime)
        except Exception as e:  # (a runtime absent here)
            print(f"{runtime}: skipped ({e})")
            continue
        for (rows, cols) in SHAPES:
            for dtype in (f32, f16):
                rows_out += _compare(client, old, new, rows, cols, dtype, opts.rounds)
    with open(opts.out, "w") as fh:
        json.dump({"device": str(cubepy.client().device), "rows": rows_out}, fh, indent=1)
    print("wrote", opts.out)


def _compare(client, old, new, rows, cols, dtype, rounds) -> list[dict]:
    rng = np.random.default_rng(0)
    x_h = (rng.standard_normal((rows, cols)) * 3 + 1).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(cols).astype(dtype.numpy) for _ in range(2))
    want = new.reference(x_h, w_h, b_h).astype(np.float64)
    n = new.line_size_for(cols, dtype)
    x, w, b = (client.tensor(a).with_line_size(n) for a in (x_h, w_h, b_h))
    out = []
    for plan in [None] + new.candidate_plans(client, cols // n):
        times: dict[str, list[float]] = {"old": [], "new": []}
        try:
            new.launch_plan(client, plan, (x, w, b, client.zeros((rows, cols), dtype)
                                           .with_line_size(n), 1e-5))
        except cubepy.LaunchError:  # a plan beyond this device's limits
            continue
        for _ in range(rounds):
            for name, module in (("old", old), ("new", new)):
                y = client.zeros((rows, cols), dtype).with_line_size(n)
                args = (x, w, b, y, 1e-5)
                result = cubepy.bench(module.launch_plan, client, plan, args, reps=30)
                times[name].append(result.median_ms * 1e3)
                tol = 1e-4 if dtype == f32 else 2e-2
                np.testing.assert_allclose(y.numpy().astype(np.float64), want,
                                           rtol=tol, atol=tol)
        row = {"runtime": client.runtime, "shape": [rows, cols], "dtype": dtype.name,
               "plan": new.describe_plan(plan),
               "old_us": statistics.median(times["old"]),
               "new_us": statistics.median(times["new"])}
        row["new_over_old"] = row["new_us"] / row["old_us"]
        print(f"{row['runtime']} {rows}x{cols} {dtype.name} {row['plan']}: old "
              f"{row['old_us']:.2f} us, new {row['new_us']:.2f} ({row['new_over_old']:.3f})",
              flush=True)
        out.append(row)
    return out


if __name__ == "__main__":
    main()
