"""A cold autotune in fresh processes: the time from a ready client and inputs to the
first result of an autotuned matmul with an empty cache (every config generated,
compiled and timed), for the repository's cubepy and other trees in turns.

    python benchmarks/probe_compile_ahead.py [--runtime cuda] [--kernels tc,wgmma,f32]
        [--size 4096] [--runs 3] [--tree LABEL=PATH ...] [--triton] [--out FILE]

Kernels: `f32` (matmul_lines, 8 configs), `tc` (matmul_tc f16, 17 configs), `wgmma`
(matmul_wgmma f16, 33 configs). Each process also reports the frontend's share (code
generation of every config, which holds the GIL), how many kernels the client built
(the configs, and the kernel `cubepy.bench` reads its L2-flushing buffer with) and the
cubepy it ran. `--tree base=/path` runs the cubepy found under /path (a checkout or an
unpacked `git archive`), e.g. the commit before compiles ahead, in turns with this one.
`--triton` adds the peer: Triton's tutorial matmul (f16, 8 configs) tuned with an empty
Triton cache, first call to result. Writes every process's record as JSON (--out,
default $OUT/compile_ahead.json or /tmp). Results: benchmarks/results/compile_ahead_h200.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_startup  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(ROOT, "benchmarks")

# name -> (module under benchmarks/kernels, autotuned kernel, numpy dtype, line size)
KERNELS = {"f32": ("matmul", "matmul_lines", "float32", 1),
           "tc": ("matmul_tc", "matmul_tc", "float16", 8),
           "wgmma": ("matmul_wgmma", "matmul_wgmma", "float16", 8)}

CHILD = r"""
import json, sys, time
runtime, module_name, kernel_name, dtype, line, size = sys.argv[1:7]
sys.path.insert(0, sys.argv[7])  # the benchmarks folder, for its kernels
import numpy as np
import cubepy
module = __import__("kernels." + module_name, fromlist=["run"])
tuned = getattr(module, kernel_name)
client = cubepy.client(runtime)
n, line = int(size), int(line)
rng = np.random.default_rng(0)
a = client.tensor(rng.standard_normal((n, n)).astype(dtype))
b = client.tensor(rng.standard_normal((n, n)).astype(dtype))
c = client.zeros((n, n), getattr(cubepy, "f16" if dtype == "float16" else "f32"))
if line > 1:
    a, b, c = a.with_line_size(line), b.with_line_size(line), c.with_line_size(line)
client.sync()
built = [0]
compile_ = client.compile
def counting(*args, **kwargs):
    built[0] += 1
    return compile_(*args, **kwargs)
client.compile = counting
import cubepy.kernel  # the frontend's time: generating every config's code
frontend = [0.0]
compile_spec = cubepy.kernel._compile_spec
def timed_spec(*args, **kwargs):
    s = time.perf_counter()
    try:
        return compile_spec(*args, **kwargs)
    finally:
        frontend[0] += 1e3 * (time.perf_counter() - s)
cubepy.kernel._compile_spec = timed_spec
t0 = time.perf_counter()
module.run(client, a, b, c)
client.sync()
t1 = time.perf_counter()
print(json.dumps({"first_result_ms": 1e3 * (t1 - t0), "frontend_ms": frontend[0],
                  "configs_built": built[0],
                  "configs": len(tuned.configs), "cubepy": cubepy.__path__[0],
                  "compiler": getattr(getattr(client, "compiler", None), "last_compiler",
                                      None)}))
"""


TRITON_CHILD = r"""
import json, os, sys, time
size = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])
import torch
from triton_kernels import matmul
a = torch.randn(size, size, device="cuda", dtype=torch.float16)
b = torch.randn(size, size, device="cuda", dtype=torch.float16)
c = torch.empty(size, size, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
t0 = time.perf_counter()
matmul(a, b, c)
torch.cuda.synchronize()
t1 = time.perf_counter()
want = a.float() @ b.float()
assert torch.allclose(c.float(), want, rtol=2e-2, atol=0.5), "triton matmul is wrong"
print(json.dumps({"first_result_ms": 1e3 * (t1 - t0), "frontend_ms": 0.0,
                  "configs_built": None, "configs": 8, "cubepy": None, "compiler": "triton",
                  "triton_cache_entries": len(os.listdir(os.environ["TRITON_CACHE_DIR"]))}))
"""


def _triton_child(size: int, folder: str) -> dict:
    """Triton's tutorial matmul tuned cold (an empty TRITON_CACHE_DIR): the peer."""
    env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(dir=folder))
    out = subprocess.run([sys.executable, "-c", TRITON_CHILD, str(size), BENCHMARKS],
                         env=env, cwd=folder, capture_output=True, text=True, timeout=580)
    if out.returncode:
        raise RuntimeError(f"triton child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _child(runtime: str, kernel: str, size: int, tree: str, folder: str) -> dict:
    module, name, dtype, line = KERNELS[kernel]
    return bench_startup.tree_child(CHILD, [runtime, module, name, dtype, str(line),
                                            str(size), BENCHMARKS], tree, folder, timeout=580)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", default="cuda")
    parser.add_argument("--kernels", default="f32,tc,wgmma")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=PATH",
                        help="another cubepy tree to run in turns with this repository's")
    parser.add_argument("--triton", action="store_true",
                        help="also time Triton's tutorial matmul (f16) tuned cold")
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                      "compile_ahead.json"))
    args = parser.parse_args(argv)
    trees = [("here", ROOT)] + [tuple(t.split("=", 1)) for t in args.tree]
    kernels = args.kernels.split(",")
    records: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.runs):
            for kernel in kernels:
                for label, path in (trees if run % 2 == 0 else trees[::-1]):
                    record = _child(args.runtime, kernel, args.size, path, folder)
                    record.update(kernel=kernel, tree=label, run=run, size=args.size)
                    records.append(record)
                    print(f"{kernel} {label}: {record['first_result_ms']:.0f} ms "
                          f"({record['configs_built']} of {record['configs']} configs "
                          f"built)", flush=True)
            if args.triton:
                record = _triton_child(args.size, folder)
                record.update(kernel="triton", tree="triton", run=run, size=args.size)
                records.append(record)
                print(f"triton: {record['first_result_ms']:.0f} ms", flush=True)
    with open(args.out, "w") as fh:
        json.dump({"runtime": args.runtime, "records": records}, fh, indent=1)
    groups = [(kernel, label) for kernel in kernels for label, _ in trees]
    if args.triton:
        groups.append(("triton", "triton"))
    for kernel, label in groups:
        rows = [r for r in records if (r["kernel"], r["tree"]) == (kernel, label)]
        times = [r["first_result_ms"] for r in rows]
        print(f"{kernel} {label}: median {statistics.median(times):.0f} ms "
              f"({min(times):.0f}-{max(times):.0f}, {len(times)} processes), frontend "
              f"{statistics.median(r['frontend_ms'] for r in rows):.0f} ms")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
