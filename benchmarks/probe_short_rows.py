"""Every plan of the row softmax and layernorm, timed on each GPU runtime present.

    python benchmarks/probe_short_rows.py --out probe.json [--runtimes cuda,wgpu]
        [--rows 4096] [--warmup 3] [--reps 30]

For softmax 4096 x {1024, 4096, 16384} f32 and layernorm 4096 x {1024, 4096, 8192}
f16/f32, times with `cubepy.bench` (flushing L2 before each repetition, as the benchmark
does) every plan `run` may choose (one plane per row, one cube per row in registers, the
online / three-pass kernel), the online softmax at each of its autotune configs, the
plane-per-row kernels up to 32 lines per unit (past the 16 `run` considers), and `run`
itself with the plan it chose; on wgpu also a raw wgpu-py copy of the same bytes. Each
plan is checked against numpy on its first 64 rows before it is timed. A runtime that is
not present is skipped; a plan that fails is printed and recorded with its error. Prints
a table and writes every row as JSON to --out.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cubepy  # noqa: E402
from cubepy import CubeCount, f16, f32  # noqa: E402
from benchmarks.host import present_clients  # noqa: E402
from benchmarks.kernels import layernorm, softmax  # noqa: E402

SOFTMAX_COLS = (1024, 4096, 16384)
LAYERNORM_COLS = (1024, 4096, 8192)
EPS = 1e-5
CHECK_ROWS = 64
PROBE_MAX_LINES = 32  # plane-per-row plans past run's MAX_PLANE_LINES, to see the trend


def plans_for(client, lines: int) -> list[tuple]:
    """run's candidates, then the longer plane-per-row plans run leaves out."""
    plans = softmax.candidate_plans(client, lines)
    longer = softmax.plane_row_plans(lines, client.limits.plane_dim,
                                     client.limits.max_units_per_cube, PROBE_MAX_LINES)
    return plans + [("plane", u, p) for u, p in longer if ("plane", u, p) not in plans]


def softmax_runs(client, rows: int, cols: int) -> tuple[dict[str, Callable], Callable,
                                                      Callable[[], str]]:
    """name -> launch for every softmax plan, a check of `out` after one, and the plan
    `run` chose (in words)."""
    rng = np.random.default_rng(cols)
    x_h = rng.standard_normal((rows, cols), dtype=np.float32)
    x, out = client.tensor(x_h), client.zeros((rows, cols), f32)
    n = softmax.line_size_for(cols)
    xl, ol = x.with_line_size(n), out.with_line_size(n)
    runs: dict[str, Callable] = {}
    for plan in plans_for(client, cols // n):
        runs[softmax.describe_plan(plan)] = (
            lambda plan=plan: softmax.launch_plan(client, plan, xl, ol, checked=False))
    for cfg in softmax.softmax.configs:
        if cfg["cube_dim"].x <= client.limits.max_units_per_cube:
            runs[f"online, {cfg['cube_dim'].x} units"] = (
                lambda cfg=cfg: softmax.softmax.kernel.launch_unchecked(
                    client, CubeCount(rows), cfg["cube_dim"], xl, ol))
    runs["run (chosen)"] = lambda: softmax.run(client, x, out, checked=False)
    want = softmax.reference(x_h[:CHECK_ROWS])

    def check():
        np.testing.assert_allclose(out.numpy()[:CHECK_ROWS], want, rtol=1e-4, atol=1e-7)
    return runs, check, lambda: softmax.chosen_plan(client, x)


def layernorm_runs(client, rows: int, cols: int, dtype):
    """As softmax_runs, for layernorm on `dtype`."""
    rng = np.random.default_rng(cols)
    x_h = rng.standard_normal((rows, cols)).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(cols).astype(dtype.numpy) for _ in range(2))
    x, w, b = client.tensor(x_h), client.tensor(w_h), client.tensor(b_h)
    y = client.zeros((rows, cols), dtype)
    n = layernorm.line_size_for(cols, dtype)
    args = tuple(t.with_line_size(n) for t in (x, w, b, y)) + (EPS,)
    runs: dict[str, Callable] = {}
    for plan in layernorm.own_plans(plans_for(client, cols // n)) + [None]:
        name = ("three-pass, 256 units" if plan is None else softmax.describe_plan(plan))
        runs[name] = lambda plan=plan: layernorm.launch_plan(client, plan, args, False)
    runs["run (chosen)"] = lambda: layernorm.run(client, x, w, b, y, EPS, checked=False)
    want = layernorm.reference(x_h[:CHECK_ROWS], w_h, b_h, EPS).astype(np.float64)
    tol = 1e-4 if dtype == f32 else 2e-2

    def check():
        np.testing.assert_allclose(y.numpy()[:CHECK_ROWS].astype(np.float64), want,
                                   rtol=tol, atol=tol)
    return runs, check, lambda: layernorm.chosen_plan(client, x)


def time_case(client, kernel: str, rows: int, cols: int, itemsize: int, made,
              warmup: int, reps: int) -> list[dict]:
    """Checks then times every run of one case; failures become rows with an error."""
    base = {"kernel": kernel, "size": f"{rows}x{cols}", "runtime": client.runtime,
            "device": client.device, "plane_dim": client.limits.plane_dim}
    nbytes = 2 * itemsize * rows * cols
    out = []
    try:
        runs, check, chosen = made()
    except Exception as e:  # e.g. a buffer beyond this device's limits
        return [dict(base, plan="(setup)", error=f"{type(e).__name__}: {e}")]
    for name, launch in runs.items():
        row = dict(base, plan=name)
        try:
            launch()
            client.sync()
            check()
            result = cubepy.bench(launch, client=client, warmup=warmup, reps=reps)
            row.update(median_ms=result.median_ms, iqr_ms=result.iqr_ms,
                       gbs=result.bandwidth_gbs(nbytes), method=result.method)
            if name == "run (chosen)":
                row["chosen"] = chosen()
        except Exception as e:  # one failing plan must not end the probe
            row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200]}"
            traceback.print_exc(limit=2)
        out.append(row)
        print(describe(row), flush=True)
    if client.runtime == "wgpu":
        out.append(wgpu_copy_row(base, nbytes, warmup, reps))
        print(describe(out[-1]), flush=True)
    return out


def wgpu_copy_row(base: dict, nbytes: int, warmup: int, reps: int) -> dict:
    """A raw wgpu-py copy of the case's bytes (read + write = nbytes)."""
    row = dict(base, plan="raw wgpu-py copy (same size)")
    try:
        from benchmarks.wgpu_copy import WgpuCopy
        result = WgpuCopy(nbytes // 2 // 4).bench(warmup, reps)
        row.update(median_ms=result.median_ms, iqr_ms=result.iqr_ms,
                   gbs=result.bandwidth_gbs(nbytes), method=result.method)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
    return row


def describe(row: dict) -> str:
    head = f"{row['kernel']:>13} {row['size']:>10} [{row['runtime']:>4}] {row['plan']:<48}"
    if row.get("error"):
        return f"{head} error: {row['error']}"
    chosen = f"  -> {row['chosen']}" if row.get("chosen") else ""
    return f"{head} {row['median_ms']:9.4f} ms {row['gbs']:8.1f} GB/s{chosen}"


def table(rows: list[dict]) -> str:
    """A markdown table; each time also as a share of the fastest CUDA plan."""
    best_cuda: dict = {}
    for r in rows:
        if r["runtime"] == "cuda" and "median_ms" in r and r["plan"] != "run (chosen)":
            key = (r["kernel"], r["size"])
            best_cuda[key] = min(best_cuda.get(key, float("inf")), r["median_ms"])
    lines = ["| kernel | size | runtime | plan | ms | GB/s | fastest CUDA plan / this |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['kernel']} | {r['size']} | {r['runtime']} | {r['plan']} | "
                         f"error: {r['error'][:80]} | | |")
            continue
        ref = best_cuda.get((r["kernel"], r["size"]))
        share = f"{100 * ref / r['median_ms']:.0f}%" if ref else ""
        plan = r["plan"] + (f" ({r['chosen']})" if r.get("chosen") else "")
        lines.append(f"| {r['kernel']} | {r['size']} | {r['runtime']} | {plan} | "
                     f"{r['median_ms']:.4f} | {r['gbs']:.1f} | {share} |")
    return "\n".join(lines)


def probe(runtimes: list[str], rows: int, warmup: int, reps: int) -> list[dict]:
    out: list[dict] = []
    for client in present_clients(runtimes):
        runtime = client.runtime
        print(f"{runtime}: {client.device}, plane {client.limits.plane_dim}", flush=True)
        for cols in SOFTMAX_COLS:
            out += time_case(client, "softmax", rows, cols, 4,
                             lambda: softmax_runs(client, rows, cols), warmup, reps)
        for dtype in (f16, f32):
            if dtype not in client.limits.dtypes:
                print(f"{runtime}: no {dtype}, layernorm_{dtype} skipped", flush=True)
                continue
            for cols in LAYERNORM_COLS:
                out += time_case(
                    client, f"layernorm_{dtype}", rows, cols, np.dtype(dtype.numpy).itemsize,
                    lambda: layernorm_runs(client, rows, cols, dtype), warmup, reps)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file for every row")
    parser.add_argument("--runtimes", default="cuda,wgpu")
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args(argv)
    rows = probe([r.strip() for r in args.runtimes.split(",") if r.strip()], args.rows,
                 args.warmup, args.reps)
    print()
    print(table(rows))
    Path(args.out).write_text(json.dumps(rows, indent=1))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
