"""Can the compiler's modules be imported while the client starts? Fresh processes,
interleaved, two ways:

    python benchmarks/probe_client_overlap.py [RUNTIME] [RUNS] [--out DIR]

- `plain`: import cubepy, create the client, then decorate and launch axpy with an empty
  cache folder (bench_startup.py's cold first launch);
- `overlap`: the same, but a thread imports the modules a first compile loads (found by
  a first child) while the main thread creates the client. The thread stops between two
  modules once the client exists, and the main thread waits for it before the launch.

On cuda, a third child times the client's parts (PyCUDA's import, cuInit, the primary
context) while a thread counts how many 1 ms steps of pure Python it can run meanwhile:
about the call's length where the call lets go of the GIL, about none where it holds it.

Each child reports the client's creation time, the first launch's, their sum, and how
many of the modules the thread had imported when the client existed. Where the client's
creation holds the GIL throughout (a driver call that does not release it), the thread
only takes turns with it: the client then takes longer by what the launch saves, and the
sum does not drop. Saves <out>/client_overlap_<runtime>.json.

To compare two checkouts, run each one's copy with its own root as the working
directory: the children are `python -c` processes, which put the working directory
first on sys.path. Results: `benchmarks/results/client_start_ab_h200.md`.
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
from bench_startup import KERNEL, _env  # noqa: E402
from host import describe_host  # noqa: E402

CHILD = r"""
import importlib, sys, threading, time
import numpy as np
import cubepy
from cubepy import CubeCount, CubeDim, f32
runtime, variant, kernel_file = sys.argv[1], sys.argv[2], sys.argv[3]
modules = sys.argv[4:]
before = set(sys.modules)
stop = threading.Event()
done = []
def prewarm():
    for name in modules:
        if stop.is_set():
            return
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        done.append(name)
t0 = time.perf_counter()
thread = None
if variant == "overlap":
    thread = threading.Thread(target=prewarm)
    thread.start()
client = cubepy.client(runtime)
t1 = time.perf_counter()
stop.set()
imported_by_client = len(done)
if thread is not None:
    thread.join()
t2 = time.perf_counter()
x = client.tensor(np.ones(1024, np.float32)); y = client.zeros(1024, f32)
client.sync()
t3 = time.perf_counter()
namespace = {}
exec(compile(open(kernel_file).read(), kernel_file, "exec"), namespace)
namespace["axpy"].launch(client, CubeCount(4), CubeDim(256), 2.0, x, y)
client.sync()
t4 = time.perf_counter()
assert float(y.numpy()[0]) == 2.0
print({"client_ms": 1e3 * (t1 - t0), "join_ms": 1e3 * (t2 - t1),
       "first_launch_ms": 1e3 * (t4 - t3),
       "client_and_launch_ms": 1e3 * ((t2 - t0) + (t4 - t3)),
       "imported_by_client": imported_by_client, "modules": len(modules),
       "loaded": [m for m in sys.modules if m not in before and m.startswith("cubepy")]})
"""


# Where a cuda client's creation goes (PyCUDA's import, cuInit, the primary context), and
# whether cuInit and the context's creation let another thread run: a thread counts in
# 1 ms steps of pure Python meanwhile.
CUDA_PHASES_CHILD = r"""
import threading, time
import numpy, cubepy
ticks = [0]
stop = threading.Event()
def count():
    while not stop.is_set():
        end = time.perf_counter() + 1e-3
        while time.perf_counter() < end:
            pass
        ticks[0] += 1
t0 = time.perf_counter()
import pycuda.driver as cuda
t1 = time.perf_counter()
thread = threading.Thread(target=count); thread.start()
cuda.init()
t2 = time.perf_counter(); init_ticks = ticks[0]
ctx = cuda.Device(0).retain_primary_context()
t3 = time.perf_counter(); ctx_ticks = ticks[0] - init_ticks
stop.set(); thread.join()
print({"import_pycuda_ms": 1e3 * (t1 - t0), "cu_init_ms": 1e3 * (t2 - t1),
       "cu_init_thread_ms": float(init_ticks), "primary_context_ms": 1e3 * (t3 - t2),
       "primary_context_thread_ms": float(ctx_ticks)})
"""


def _run(args: list[str], cache: str, code: str = CHILD) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], env=_env(cache),
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return eval(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runtime", nargs="?", default="cuda")
    parser.add_argument("runs", nargs="?", type=int, default=8)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        kernel_file = os.path.join(tmp, "axpy.py")
        with open(kernel_file, "w") as fh:
            fh.write("from cubepy import *\n" + KERNEL)
        # A throwaway child fills __pycache__ and names the modules a first compile loads
        first = _run([args.runtime, "plain", kernel_file], tempfile.mkdtemp(dir=tmp))
        modules = first["loaded"]
        rows: dict[str, list[dict]] = {"plain": [], "overlap": []}
        phases = []
        for _ in range(args.runs):
            for variant in rows:
                rows[variant].append(_run([args.runtime, variant, kernel_file, *modules],
                                          tempfile.mkdtemp(dir=tmp)))
            if args.runtime == "cuda":
                phases.append(_run([], tmp, CUDA_PHASES_CHILD))
    keys = ("client_ms", "join_ms", "first_launch_ms", "client_and_launch_ms",
            "imported_by_client")
    medians = {v: {k: statistics.median(r[k] for r in rs) for k in keys}
               for v, rs in rows.items()}
    if phases:
        medians["cuda_phases"] = {k: statistics.median(p[k] for p in phases)
                                  for k in phases[0]}
    for variant, med in medians.items():
        print(variant, {k: round(v, 2) for k, v in med.items()})
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"client_overlap_{args.runtime}.json")
    with open(path, "w") as fh:
        json.dump({"host": describe_host(), "runtime": args.runtime, "modules": modules,
                   "medians": medians, "runs": rows,
                   "cuda_phases": phases}, fh, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
