"""Whether NVRTC compiles run side by side on threads: matmul_tc's config sources (f16,
unchecked, as autotune compiles them) compiled one after another and on 2, 4, 8 and 16
threads, in one process holding a cuda client.

    python benchmarks/probe_nvrtc_threads.py [--threads 1,16,4,2,8,1,16] [--out FILE]

Each round compiles every source once, made unique for the round (an unused device
function appended) so that no round reuses what NVRTC kept from an earlier one; a last
serial round compiles the previous round's sources again. Prints and writes each round's
wall time and median compile (--out, default $OUT/nvrtc_threads.json or /tmp). Results:
benchmarks/results/compile_ahead_h200.md; cuda_compile.AHEAD_THREADS follows them.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def sources() -> list[str]:
    """The CUDA source of each of matmul_tc's configs, as autotune compiles them."""
    from cubepy import f16
    from kernels import matmul_tc
    kernel = matmul_tc.matmul_tc.kernel
    return [kernel.source("cuda", cube_dim=cfg["cube_dim"], checked=False, Float=f16,
                          line_sizes={"a": 8, "b": 8, "c": 8},
                          **{k: v for k, v in cfg.items() if k != "cube_dim"})
            for cfg in matmul_tc.CONFIGS]


def unique(source: str, tag: str) -> str:
    return source + f"\n__device__ int cubepy_probe_{tag}() {{ return 0; }}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,16,4,2,8,1,16")
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                      "nvrtc_threads.json"))
    args = parser.parse_args(argv)
    import cubepy
    from cubepy.runtime import cuda_compile
    client = cubepy.client("cuda")  # (NVRTC's first compile without a context is slower)
    arch = client.arch
    texts = sources()

    def one(source: str) -> float:
        start = time.perf_counter()
        cuda_compile.compile_nvrtc(source, arch)
        return 1e3 * (time.perf_counter() - start)

    rounds = []
    batch: list[str] = []
    for r, threads in enumerate(int(t) for t in args.threads.split(",")):
        batch = [unique(s, f"{r}_{i}") for i, s in enumerate(texts)]
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            each = list(pool.map(one, batch))
        rounds.append({"round": r, "threads": threads, "sources": len(batch),
                       "wall_ms": 1e3 * (time.perf_counter() - start),
                       "each_ms_median": statistics.median(each), "each_ms": each})
        print(f"{threads} thread(s): {rounds[-1]['wall_ms']:.0f} ms for {len(batch)} "
              f"sources (median compile {rounds[-1]['each_ms_median']:.0f} ms)", flush=True)
    start = time.perf_counter()
    for source in batch:
        one(source)
    again = 1e3 * (time.perf_counter() - start)
    print(f"the last round's sources again, one after another: {again:.0f} ms")
    with open(args.out, "w") as fh:
        json.dump({"device": client.device, "rounds": rounds, "same_sources_again_ms": again},
                  fh, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
