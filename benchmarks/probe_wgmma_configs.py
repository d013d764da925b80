"""Every config of the warpgroup matmul (`matmul_wgmma`, f16) timed on CUDA, with the
cubepy found first on the path, so two versions of the compiler can be set side by side.

    python benchmarks/probe_wgmma_configs.py [--size 4096] [--reps 10] [--root DIR]
        [--out FILE.json]

`--root` puts DIR (a checkout holding `cubepy/` and `benchmarks/`) first on sys.path:
run the probe once with an older checkout and once with this one, alternating, to see
what a compiler change does to each config's time. Each config is launched unchecked
through `matmul_wgmma.run` and timed with `cubepy.bench` (2 warm-up launches, the median
of `--reps`, a cold L2). Prints the fastest config; writes each config's median (ms, by
its index in `matmul_wgmma.CONFIGS`; null where it did not run) as JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    import numpy as np
    import cubepy
    if not Path(cubepy.__file__).resolve().is_relative_to(root):
        sys.exit(f"cubepy came from {cubepy.__file__}, not from {root}")
    from cubepy import f16
    from benchmarks.host import describe_host
    from benchmarks.kernels import matmul_wgmma as mw
    n = args.size
    client = cubepy.client("cuda")
    rng = np.random.default_rng(0)
    a = client.tensor(rng.standard_normal((n, n)).astype(np.float16)).with_line_size(8)
    b = client.tensor(rng.standard_normal((n, n)).astype(np.float16)).with_line_size(8)
    c = client.zeros((n, n), f16).with_line_size(8)
    times: dict[int, float | None] = {}
    for i, cfg in enumerate(mw.CONFIGS):
        try:
            times[i] = cubepy.bench(lambda cfg=cfg: mw.run(client, a, b, c, config=cfg),
                                    client=client, warmup=2, reps=args.reps).median_ms
        except (cubepy.LaunchError, cubepy.CompileError) as e:
            print(f"config {i}: {str(e).splitlines()[0][:100]}")
            times[i] = None
    ran = {i: t for i, t in times.items() if t is not None}
    best = min(ran, key=ran.get)
    print(f"{root}: {n}^3 f16, fastest config {best}: {ran[best]:.4f} ms, "
          f"{2 * n ** 3 / ran[best] / 1e9:.1f} TFLOP/s")
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"host": describe_host(), "root": str(root), "size": n, "median_ms": times},
            indent=1))


if __name__ == "__main__":
    main()
