"""Benchmarks cubepy's kernels (benchmarks/kernels/) against every peer present.

    python -m benchmarks                 # every runtime and peer found; sizes by device
    python -m benchmarks --quick         # smaller sizes, fewer repetitions
    python -m benchmarks --runtimes cpu --only softmax,sum
    python -m benchmarks --size widths   # softmax and layernorm at models' row widths

Finds the runtimes (cuda, wgpu, cpu) and the peers (torch, Triton, CuPy, numpy, a raw
wgpu-py copy) present, runs each comparison that can run, checks cubepy's results
against numpy once, and writes benchmarks/results/kernels_<tag>.json and .md and one PNG
chart per kernel. With a GPU the issue's sizes run (about 2-4 minutes on an H200);
without one (the cpu runtime, a software wgpu adapter) tiny sizes do.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import socket
import sys
import time
from pathlib import Path

import cubepy

from . import report, suite
from .host import describe_host

RESULTS = Path(__file__).resolve().parent / "results"


def _clients(names: list[str] | None) -> list:
    """The clients to benchmark: those asked for, else every runtime present, without
    cpu when a GPU runtime is there (at the GPU's sizes it would take hours)."""
    if names:
        return [cubepy.client(n) for n in names]
    clients = [cubepy.client(n) for n in cubepy.available_runtimes()]
    on_gpu = [c for c in clients if c.runtime == "cuda" or
              (c.runtime == "wgpu" and not getattr(c, "is_software", False))]
    return on_gpu or clients


def _tier(args, clients: list) -> str:
    if args.size:
        return args.size
    real_gpu = any(c.runtime == "cuda" or (c.runtime == "wgpu" and not c.is_software)
                   for c in clients)
    if not real_gpu:
        return "tiny"
    return "quick" if args.quick else "full"


def _tag(clients: list) -> str:
    """A file-name tag: the GPU's model (h200, ...) when there is one, else the host."""
    for c in clients:
        if c.runtime in ("cuda", "wgpu") and not getattr(c, "is_software", False):
            m = re.search(r"\b([A-Z]+\d{2,4}[A-Za-z]*)\b", c.device)
            if m:
                return m.group(1).lower()
    return re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-") or "host"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one size per kernel and fewer repetitions")
    parser.add_argument("--size", choices=sorted(suite.SIZES),
                        help="the size tier (default: full with a GPU, else tiny)")
    parser.add_argument("--runtimes", help="comma-separated cubepy runtimes to run "
                        "(default: every GPU runtime present, else cpu and wgpu)")
    parser.add_argument("--only", help="comma-separated kernels (copy, matmul, softmax, "
                        "layernorm, sum, elementwise)")
    parser.add_argument("--reps", type=int, help="timed repetitions per measurement")
    parser.add_argument("--tag", help="names the result files (default: the GPU model)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args(argv)

    clients = _clients(args.runtimes.split(",") if args.runtimes else None)
    tier = _tier(args, clients)
    warmup, reps = suite.REPS["quick" if args.quick and tier == "full" else tier]
    reps = args.reps or reps
    tag = args.tag or _tag(clients)
    only = set(args.only.split(",")) if args.only else None
    print(f"cubepy benchmarks: tier {tier}, runtimes "
          f"{', '.join(f'{c.runtime} ({c.device})' for c in clients)}")
    t0 = time.perf_counter()
    rows = suite.run_all(suite.cases(tier, only), clients, warmup, reps)
    meta = {"tag": tag, "tier": tier, "warmup": warmup, "reps": reps,
            "host": describe_host(), "devices": [f"{c.runtime}: {c.device}" for c in clients],
            "command": "python -m benchmarks " + " ".join(map(shlex.quote, sys.argv[1:]
                                                               if argv is None else argv)),
            "seconds": round(time.perf_counter() - t0, 1), "cubepy": cubepy.__version__}
    args.out.mkdir(parents=True, exist_ok=True)
    report.write_json(rows, meta, args.out / f"kernels_{tag}.json")
    charts = report.write_charts(rows, args.out, tag)
    report.write_markdown(rows, meta, args.out / f"kernels_{tag}.md", charts)
    print(f"wrote {args.out / f'kernels_{tag}.md'} (.json, {len(charts)} charts) in "
          f"{meta['seconds']} s")
    return 1 if any(r.get("check", "").startswith("MISMATCH") for r in rows) else 0


if __name__ == "__main__":
    os.environ.setdefault("XDG_RUNTIME_DIR", "")  # keeps wgpu-native's warning quiet
    with cubepy.exit_on_error():
        raise SystemExit(main())
