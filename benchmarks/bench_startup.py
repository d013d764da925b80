"""Start-up of a fresh process: the first launch of a kernel after the client exists,
with a cold and with a warm disk cache, and what it loaded.

    python3 benchmarks/bench_startup.py [--runtime cuda] [--runs 5] [--out DIR]

Each measurement is a new Python process that imports cubepy, creates the client, then
times decorating an axpy kernel plus its first launch and a sync (the "first launch"
figure the issue targets: from a ready client to the launched kernel). The cold run uses
an empty cache folder; the warm runs reuse the folder the cold run filled. Each child
also reports whether NVRTC's library was mapped into the process and whether jinja2 was
imported. Writes startup_<runtime>.json and .md.
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
from host import describe_host  # noqa: E402

KERNEL = """@cube(launch=True)
def axpy(a: f32, x: Array[f32], y: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = a * x[i] + y[i]
"""

CHILD = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32
t2 = time.perf_counter()
client = cubepy.client(sys.argv[1])
x = client.tensor(np.ones(1024, np.float32)); y = client.zeros(1024, f32)
client.sync()
t3 = time.perf_counter()
exec(compile(open(KERNEL_FILE).read(), KERNEL_FILE, "exec"))
axpy.launch(client, CubeCount(4), CubeDim(256), 2.0, x, y)
client.sync()
t4 = time.perf_counter()
assert float(y.numpy()[0]) == 2.0
maps = open("/proc/self/maps").read() if sys.platform == "linux" else ""
print({"import_numpy_ms": 1e3 * (t1 - t0), "import_cubepy_ms": 1e3 * (t2 - t1),
       "client_ms": 1e3 * (t3 - t2), "first_launch_ms": 1e3 * (t4 - t3),
       "nvrtc_loaded": "libnvrtc" in maps, "jinja2_imported": "jinja2" in sys.modules})
"""


def run_child(runtime: str, cache: str, kernel_file: str) -> dict:
    env = dict(os.environ, CUBEPY_CACHE_DIR=cache)
    code = CHILD.replace("KERNEL_FILE", repr(kernel_file))
    with open(kernel_file, "w") as fh:  # cubepy reads a kernel's source from its file
        fh.write(KERNEL)
    out = subprocess.run([sys.executable, "-c", code, runtime], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    import ast
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default="cuda")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache, kernel_file = os.path.join(tmp, "cache"), os.path.join(tmp, "axpy_kernel.py")
        cold = run_child(args.runtime, cache, kernel_file)
        warm = [run_child(args.runtime, cache, kernel_file) for _ in range(args.runs)]
    summary = {k: statistics.median(w[k] for w in warm) for k in warm[0]
               if isinstance(warm[0][k], float)}
    report = {"runtime": args.runtime, "host": describe_host(), "cold": cold,
              "warm_runs": warm, "warm_median": summary,
              "warm_nvrtc_loaded": [w["nvrtc_loaded"] for w in warm],
              "warm_jinja2_imported": [w["jinja2_imported"] for w in warm]}
    lines = [f"# Start-up on {args.runtime}", "", f"Host: {report['host']}", "",
             "| | cold cache | warm cache (median of %d) |" % args.runs, "|---|---|---|"]
    for k in ("import_numpy_ms", "import_cubepy_ms", "client_ms", "first_launch_ms"):
        lines.append(f"| {k} | {cold[k]:.1f} | {summary[k]:.1f} |")
    lines += [f"| NVRTC loaded | {cold['nvrtc_loaded']} | {any(report['warm_nvrtc_loaded'])} |",
              f"| jinja2 imported | {cold['jinja2_imported']} | "
              f"{any(report['warm_jinja2_imported'])} |"]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"startup_{args.runtime}")
    with open(base + ".json", "w") as fh:
        json.dump(report, fh, indent=2)
    with open(base + ".md", "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
