"""Does a wgpu client that has run the benchmark's earlier cases time softmax and
layernorm slower than a fresh one? In `kernels_h200_full.md` every wgpu softmax plan at
4096 x 1024 took 16.1-21.2 us, against 14.3-14.5 us for the fastest in processes that
ran softmax alone (`softmax_wgpu_clamp_ab_h200.md`); the raw wgpu-py copy, which makes
a device of its own, did not move.

    python benchmarks/probe_wgpu_context.py [--rounds 5] [--reps 20] [--tier full]
        [--out FILE.json]

One process. Each step times, in rounds, softmax 4096 x {1024, 4096} (the plan the
first step chooses, kept for every step), layernorm f16 4096 x 1024 and a 16 MiB copy
kernel, all written in cubepy, with `cubepy.bench`:

1. `fresh`: on a new wgpu client (`WgpuClient(0)`);
2. `after cases`: on the same client, after the benchmark's copy and matmul cases (f32,
   and the tensor-core ones on CUDA) ran as `python -m benchmarks` runs them, this client
   the only cubepy one, with their CUDA peers where present;
3. `after gc`: the same, after `gc.collect()` and torch's `empty_cache()`;
4. `new client`: on a second `WgpuClient(0)` made now, the first still alive.

Prints each step's median per kernel and its ratio to `fresh`; writes every time as
JSON (default $OUT/wgpu_context.json, or /tmp). Results:
benchmarks/results/wgpu_context_h200.md (with each repetition waited for, a fresh client
timed every kernel about 3x slower than after the cases; with the repetitions queued,
as `cubepy.bench` now does, all four steps agreed within 2%).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cubepy  # noqa: E402
from cubepy import ABSOLUTE_POS, Line, Tensor, cube, f16, f32  # noqa: E402
from cubepy.runtime.wgpu_runtime import WgpuClient  # noqa: E402
from benchmarks import suite  # noqa: E402
from benchmarks.host import describe_host  # noqa: E402
from benchmarks.kernels import layernorm, softmax  # noqa: E402


@cube(launch=True)
def copy_lines(x: Tensor[Line[f32]], y: Tensor[Line[f32]]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = x[i]


def workloads(client, plans: dict) -> dict:
    """{name: launch} on `client`; `plans` holds the softmax plans the first client
    chose ({} on the first call, filled by it)."""
    rng = np.random.default_rng(0)
    runs = {}
    for cols in (1024, 4096):
        x = client.tensor(rng.standard_normal((4096, cols), dtype=np.float32))
        out = client.zeros((4096, cols), f32)
        xl, ol = x.with_line_size(4), out.with_line_size(4)
        if cols not in plans:
            plans[cols] = softmax.register_plan(client, 4096, cols // 4, xl, ol)
        plan = plans[cols]
        runs[f"softmax 4096x{cols} ({softmax.describe_plan(plan)})"] = (
            lambda p=plan, a=xl, b=ol: softmax.launch_plan(client, p, a, b, False))
    xh = rng.standard_normal((4096, 1024)).astype(np.float16)
    w, b = (client.tensor(rng.standard_normal(1024).astype(np.float16)) for _ in range(2))
    x16, y16 = client.tensor(xh), client.zeros((4096, 1024), f16)
    runs["layernorm f16 4096x1024"] = lambda: layernorm.run(client, x16, w, b, y16,
                                                            checked=False)
    n = 4 << 20  # 16 MiB of f32
    src, dst = client.tensor(np.ones(n, np.float32)), client.zeros(n, f32)
    sl, dl = src.with_line_size(4), dst.with_line_size(4)
    runs["copy 16 MiB (cubepy)"] = lambda: copy_lines.launch_unchecked(
        client, cubepy.CubeCount(n // 4 // 256), cubepy.CubeDim(256), sl, dl)
    for launch in runs.values():  # compiled, plans chosen, before any timing
        launch()
    client.sync()
    return runs


def time_step(client, runs: dict, rounds: int, reps: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, launch in runs.items():
            times[name].append(cubepy.bench(launch, client=client, warmup=3,
                                            reps=reps).median_ms)
    return times


def run_cases(client, tier: str) -> None:
    """The cases `python -m benchmarks` runs before softmax, as it runs them."""
    case_list = suite.cases(tier, {"copy", "matmul"})
    suite.run_all(case_list, [client], *suite.REPS[tier], log=lambda line: None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--tier", default="full", help="the sizes of the cases run between "
                    "(tiny to try it out on a software adapter)")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                  "wgpu_context.json"))
    args = ap.parse_args()
    first = WgpuClient(0)
    plans: dict = {}
    runs = workloads(first, plans)
    steps = {"fresh": time_step(first, runs, args.rounds, args.reps)}
    run_cases(first, args.tier)
    steps["after cases"] = time_step(first, runs, args.rounds, args.reps)
    suite._free_memory()
    steps["after gc"] = time_step(first, runs, args.rounds, args.reps)
    second = WgpuClient(0)
    steps["new client"] = time_step(second, workloads(second, plans), args.rounds,
                                    args.reps)
    base = {name: statistics.median(t) for name, t in steps["fresh"].items()}
    print(f"{first.device}; medians of {args.rounds} rounds of {args.reps}, in us")
    for step, times in steps.items():
        print(step)
        for name, t in times.items():
            m = statistics.median(t)
            print(f"  {1e3 * m:8.2f}  x{m / base[name]:.3f}  {name}")
    Path(args.out).write_text(json.dumps(
        {"host": describe_host(), "device": first.device, "rounds": args.rounds,
         "reps": args.reps, "steps": steps}, indent=1))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
