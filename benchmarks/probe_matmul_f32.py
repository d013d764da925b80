"""f32 matmul on the SIMT units: every config of the benchmark's kernels against cuBLAS
(torch, TF32 off), timed in interleaved rounds.

    python benchmarks/probe_matmul_f32.py [--size 4096] [--rounds 5] [--reps 5]
        [--runtimes cuda,wgpu] [--root DIR] [--out FILE.json]

Variants: `matmul` (scalar shared-memory reads, the unit's rows and columns strided by
the cube's size) with each of its configs, and `matmul_lines` (A staged as lines of 4
rows, B and C in lines of 4, 16-byte shared-memory reads, two shared copies and one
barrier per step) with each of its. Each round times every variant once with
`cubepy.bench` (a cold L2, as the benchmark), the order rotated from round to round;
the figures are medians over rounds. Every variant is checked against float64 on a few
rows first (a wrong one, or one the device refuses, is left out and listed). Prints each
variant's median, TFLOP/s and ratio to cuBLAS; writes the times per round as JSON. The
size must be a multiple of 128 (the launches are unchecked).

`--root` puts DIR (a checkout holding `cubepy/` and `benchmarks/`) first on the path, as
in probe_wgmma_configs.py: fresh processes alternating two checkouts time what a
compiler change does to each config (the scalar `matmul`, with no lines, is the
control for a change to lines).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np


def variants(client, a_h, b_h, n):
    """name -> (launch, check) for every config of both kernels on `client`, each with an
    output of its own (a config that wrote nothing must not pass on another's result)."""
    from cubepy import f32
    from benchmarks.kernels import matmul
    a, b = client.tensor(a_h), client.tensor(b_h)
    out = {}
    for kernel in (matmul.matmul, matmul.matmul_lines):
        for cfg in kernel.configs:
            c = client.zeros((n, n), f32)
            label = f"{kernel.kernel.__name__} " + " ".join(
                f"{k}={v}" for k, v in cfg.items() if k != "cube_dim")

            def launch(kernel=kernel, cfg=cfg, c=c):
                matmul.run(client, a, b, c, checked=False, config=cfg, kernel=kernel)

            def check(c=c):
                want = a_h[:8].astype(np.float64) @ b_h.astype(np.float64)
                np.testing.assert_allclose(c.numpy()[:8], want, rtol=1e-3,
                                           atol=1e-3 * n ** 0.5)
            out[label] = (launch, check)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runtimes", default="cuda,wgpu")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    import cubepy
    if not Path(cubepy.__file__).resolve().is_relative_to(root):
        sys.exit(f"cubepy came from {cubepy.__file__}, not from {root}")
    from benchmarks import peers
    from benchmarks.host import describe_host, present_clients
    n = args.size
    rng = np.random.default_rng(0)
    a_h = rng.standard_normal((n, n), dtype=np.float32)
    b_h = rng.standard_normal((n, n), dtype=np.float32)
    timed = {}  # name -> callable returning a time in ms
    left_out = {}  # name -> why
    for client in present_clients(args.runtimes.split(",")):
        for name, (launch, check) in variants(client, a_h, b_h, n).items():
            name = f"{client.runtime} {name}"
            try:
                launch()
                client.sync()
                check()
            except (AssertionError, cubepy.LaunchError, cubepy.CompileError) as e:
                left_out[name] = str(e).strip().splitlines()[0][:200]
                print(f"{name}: left out ({left_out[name]})")
                continue
            timed[name] = (
                lambda launch=launch, client=client:
                cubepy.bench(launch, client=client, warmup=1, reps=args.reps).median_ms)
    for name, fn in peers.matmul_peers(a_h, b_h).items():
        timed[f"cuda {name}"] = (lambda fn=fn: peers.time_cuda(fn, 1, args.reps).median_ms)
    names = list(timed)
    rounds = {name: [] for name in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            rounds[name].append(timed[name]())
    med = {name: statistics.median(ts) for name, ts in rounds.items()}
    peer = next((v for k, v in med.items() if "cuBLAS" in k), None)
    for name in names:
        tflops = 2 * n ** 3 / med[name] / 1e9
        ratio = f"{peer / med[name]:6.1%} of cuBLAS" if peer else ""
        print(f"{name:70s} {med[name]:8.4f} ms {tflops:7.2f} TFLOP/s {ratio}")
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"host": describe_host(), "root": str(root), "size": n, "rounds": rounds,
             "median_ms": med, "left_out": left_out}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
