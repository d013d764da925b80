"""NVRTC alone, in fresh processes: its bindings' import, the library's load, and the
first and second compile of the cold launch's axpy source, with and without a CUDA
context in the process and with an empty kernel compiled first.

    python benchmarks/probe_nvrtc_setup.py

Variants (medians of 5 processes each, interleaved): `bare` (nothing else loaded),
`empty` (an empty kernel compiled first), `numpy` (numpy imported first), `pycuda`
(a PyCUDA context made first, as cubepy's cuda client has), `pycuda+empty`.
Results: benchmarks/results/startup_cold_h200.md.
"""
from __future__ import annotations

import ast
import os
import runpy
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import bench_startup as b  # noqa: E402

CHILD = r'''
import sys, time
pre = sys.argv[3]
t = time.perf_counter
t0 = t()
if "numpy" in pre:
    import numpy
if "pycuda" in pre:
    import pycuda.driver as drv; drv.init(); ctx = drv.Device(0).make_context()
t1 = t()
from cuda.bindings import nvrtc
t2 = t()
nvrtc.nvrtcVersion()
t3 = t()
opts = [o.encode() for o in open(sys.argv[2]).read().splitlines()]
def comp(source):
    err, prog = nvrtc.nvrtcCreateProgram(source, b"k.cu", 0, [], [])
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    assert int(err) == 0
    nvrtc.nvrtcDestroyProgram(prog)
if "empty" in pre:
    comp(b'extern "C" __global__ void e() {}\n')
t4 = t()
src = open(sys.argv[1], "rb").read()
comp(src)
t5 = t()
comp(src)
t6 = t()
print({"pre": 1e3*(t1-t0), "import": 1e3*(t2-t1), "version": 1e3*(t3-t2),
       "empty": 1e3*(t4-t3), "first": 1e3*(t5-t4), "second": 1e3*(t6-t5)})
if "pycuda" in pre:
    ctx.pop()
'''
VARIANTS = ["bare", "empty", "numpy", "pycuda", "pycuda+empty"]


def main() -> None:
    from cubepy.runtime import cuda_compile
    tmp = tempfile.mkdtemp()
    kernel_file = os.path.join(tmp, "k.py")
    with open(kernel_file, "w") as fh:
        fh.write("import cubepy\nfrom cubepy import *\n" + b.KERNEL)
    source = runpy.run_path(kernel_file)["axpy"].source("cuda", cube_dim=(256, 1, 1))
    with open(kernel_file + ".cu", "w") as fh:
        fh.write(source)
    with open(kernel_file + ".opts", "w") as fh:
        fh.write("\n".join(cuda_compile.nvrtc_options("sm_90")))
    rows: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    for _ in range(5):
        for variant in VARIANTS:
            out = subprocess.run([sys.executable, "-c", CHILD, kernel_file + ".cu",
                                  kernel_file + ".opts", variant],
                                 capture_output=True, text=True, env=b._env(None))
            if out.returncode:
                print(variant, out.stderr[-500:])
                continue
            rows[variant].append(ast.literal_eval(out.stdout.strip().splitlines()[-1]))
    for variant, got in rows.items():
        if got:
            print(variant, {k: round(statistics.median(r[k] for r in got), 1)
                            for k in got[0]})


if __name__ == "__main__":
    main()
