"""What NVRTC's first compile in a process costs, and what takes it down: fresh
processes holding a CUDA context (as a cuda client's does), variants interleaved.

    python benchmarks/probe_nvrtc_first_compile.py [RUNS]

Each process loads cubepy's libnvrtc (nvrtc_lib.load), does its variant's preparation,
then compiles a small kernel (axpy as cubepy generates it, with cubepy's NVRTC options)
twice, timing each:

- `plain`: nothing before;
- `builtins`: libnvrtc-builtins (which NVRTC's first compile loads) opened first;
- `empty`: an empty program compiled first;
- `empty_kernel`: an empty kernel compiled first;
- `minimal`: nothing before, both compiles with --minimal.

Prints the median load, preparation, first and second compile per variant and which
libraries each step mapped; writes every row to $OUT/nvrtc_first_compile.json (or /tmp).
Results: benchmarks/results/startup_cold_h200.md ("--minimal, and setting NVRTC up").
"""
from __future__ import annotations

import ast
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

AXPY = r"""
struct cube_info_t { float a; unsigned int x_buffer_len; unsigned int y_buffer_len;
                     unsigned int y_len; };
extern "C" __global__ void __launch_bounds__(256) axpy(
    const float* __restrict__ x, float* __restrict__ y, const cube_info_t info) {
    const unsigned int i = blockIdx.x * 256u + threadIdx.x;
    if (i < info.y_len && i < info.y_buffer_len) {
        y[i] = info.a * (i < info.x_buffer_len ? x[i] : 0.0f) + y[i];
    }
}
"""

CHILD = r"""
import ctypes, os, sys, time
import pycuda.driver as drv
drv.init()
context = drv.Device(0).make_context()
from cubepy.runtime import cuda_compile, nvrtc_lib
variant, source = sys.argv[1], sys.argv[2]
arch = "sm_%d%d" % drv.Device(0).compute_capability()
options = cuda_compile.nvrtc_options(arch, minimal=variant == "minimal")

def mapped():
    return {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}

m0 = mapped()
t0 = time.perf_counter()
nvrtc = nvrtc_lib.load()
t1 = time.perf_counter()
if variant == "builtins":
    folder = os.path.dirname(nvrtc.path)
    for name in sorted(os.listdir(folder)):
        if name.startswith("libnvrtc-builtins.so"):
            ctypes.CDLL(os.path.join(folder, name))
            break
elif variant == "empty":
    nvrtc.compile("", "k.cu", options)
elif variant == "empty_kernel":
    nvrtc.compile('extern "C" __global__ void k() {}', "k.cu", options)
t2 = time.perf_counter()
m1 = mapped()
nvrtc.compile(source, "k.cu", options)
t3 = time.perf_counter()
m2 = mapped()
nvrtc.compile(source.replace("axpy", "axpz"), "k.cu", options)
t4 = time.perf_counter()
print(repr({"load_ms": 1e3 * (t1 - t0), "prep_ms": 1e3 * (t2 - t1),
            "first_ms": 1e3 * (t3 - t2), "second_ms": 1e3 * (t4 - t3),
            "prep_mapped": sorted(os.path.basename(p) for p in m1 - m0),
            "first_mapped": sorted(os.path.basename(p) for p in m2 - m1)}))
context.pop()
"""

VARIANTS = ("plain", "builtins", "empty", "empty_kernel", "minimal")
TIMES = ("load_ms", "prep_ms", "first_ms", "second_ms")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    rows: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    for _ in range(runs):
        for variant in VARIANTS:
            out = subprocess.run([sys.executable, "-c", CHILD, variant, AXPY], env=env,
                                 capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                raise SystemExit(out.stderr)
            rows[variant].append(ast.literal_eval(out.stdout.strip().splitlines()[-1]))
    for variant, got in rows.items():
        medians = {k: round(statistics.median(r[k] for r in got), 1) for k in TIMES}
        print(variant, medians, "mapped by the preparation:", got[0]["prep_mapped"],
              "by the first compile:", got[0]["first_mapped"])
    out = os.path.join(os.environ.get("OUT", "/tmp"), "nvrtc_first_compile.json")
    with open(out, "w") as fh:
        json.dump(rows, fh)


if __name__ == "__main__":
    main()
