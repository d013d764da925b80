"""A cold first launch's frontend in fresh processes, timed three ways (wall time, the
main thread's CPU time, the whole process's CPU time), with the client's creation, the
threads alive, and the CPU time every other thread of the process spent during the
launch; optionally with the compiler's modules imported before the timed part, and for
two cubepy trees interleaved (an A/B in one machine start).

    python benchmarks/probe_first_launch_threads.py [--runtimes cuda,wgpu] [--runs 5]
        [--preimport] [--tree LABEL=PATH ...] [--out FILE]

Each process imports cubepy, creates the client, moves two small tensors, then times
decorating axpy and its first launch + sync with an empty cache folder; the frontend is
cubepy's parse and `_compile_spec` (the compiler modules' import included unless
--preimport). The main thread's CPU time against the wall time tells the frontend
computing from it waiting (for the GIL, or for another thread). `--tree base=/path`
runs the cubepy found under /path (a checkout or an unpacked `git archive`) in turns
with the repository's own. Writes every process's record as JSON (--out, default
$OUT/first_launch_threads.json or /tmp). Results: benchmarks/results/wgpu_client_cffi_names_h200.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_startup  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, os, sys, threading, time
runtime, preimport = sys.argv[1], sys.argv[2] == "1"
t0 = time.perf_counter()
import numpy as np
import cubepy, cubepy.kernel
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32
t1 = time.perf_counter()
client = cubepy.client(runtime)
t2 = time.perf_counter()
x = client.tensor(np.ones(1024, np.float32)); y = client.zeros(1024, f32); client.sync()
if preimport:  # the modules a first compile loads, as a throwaway compile found them
    for name in os.environ["FIRST_LAUNCH_MODULES"].split():
        __import__(name)
phase = {"wall": 0.0, "thread": 0.0, "process": 0.0}
def timed(owner, name):
    inner = getattr(owner, name)
    def wrapper(*args, **kwargs):
        w, th, pr = time.perf_counter(), time.thread_time(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            phase["wall"] += 1e3 * (time.perf_counter() - w)
            phase["thread"] += 1e3 * (time.thread_time() - th)
            phase["process"] += 1e3 * (time.process_time() - pr)
    setattr(owner, name, wrapper)
timed(cubepy.kernel.CubeFunction, "_parse")
timed(cubepy.kernel, "_compile_spec")
def task_cpu_ms():  # thread id:name -> user + system CPU time (Linux; 10 ms ticks)
    out = {}
    if not os.path.isdir("/proc/self/task"):
        return out
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = open(f"/proc/self/task/{tid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        out[f"{tid}:{name}"] = ticks * 1000 // os.sysconf("SC_CLK_TCK")
    return out
before = set(sys.modules)
cpu0 = task_cpu_ms()
t3 = time.perf_counter()
kernel_file = os.environ["FIRST_LAUNCH_KERNEL"]
exec(compile(open(kernel_file).read(), kernel_file, "exec"))
axpy.launch(client, CubeCount(4), CubeDim(256), 2.0, x, y)
client.sync()
t4 = time.perf_counter()
cpu1 = task_cpu_ms()
assert float(y.numpy()[0]) == 2.0
main = f"{threading.main_thread().native_id}:"
others = {k: v - cpu0.get(k, 0) for k, v in cpu1.items()
          if not k.startswith(main) and v - cpu0.get(k, 0) > 0}
print(json.dumps({"cubepy": os.path.dirname(cubepy.__file__), "client_ms": 1e3 * (t2 - t1),
                  "first_launch_ms": 1e3 * (t4 - t3), "frontend_wall_ms": phase["wall"],
                  "frontend_thread_cpu_ms": phase["thread"],
                  "frontend_process_cpu_ms": phase["process"],
                  "threads": [t.name for t in threading.enumerate()],
                  "other_threads_cpu_ms": others,
                  "modules_loaded": sorted(m for m in sys.modules if m not in before)}))
"""

KERNEL = '''
@cube(launch=True)
def axpy(a: f32, x: Array[f32], y: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(x):
        y[i] = a * x[i] + y[i]
'''


def _child(runtime: str, tree: str, preimport: bool, modules: list[str], folder: str) -> dict:
    return bench_startup.tree_child(CHILD, [runtime, "1" if preimport else "0"], tree,
                                    folder, FIRST_LAUNCH_KERNEL=os.path.join(folder, "axpy.py"),
                                    FIRST_LAUNCH_MODULES=" ".join(modules))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtimes", default="cuda,wgpu")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--preimport", action="store_true",
                        help="also time each runtime with the compiler modules imported first")
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=PATH",
                        help="another cubepy tree to run in turns with this repository's")
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"),
                                                      "first_launch_threads.json"))
    args = parser.parse_args(argv)
    trees = [("here", ROOT)] + [tuple(t.split("=", 1)) for t in args.tree]
    records: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "axpy.py"), "w") as fh:
            fh.write(KERNEL)
        for runtime in args.runtimes.split(","):
            modules = {label: _child(runtime, path, False, [], folder)["modules_loaded"]
                       for label, path in trees}  # (the first process also fills __pycache__)
            for run in range(args.runs):
                for label, path in trees:
                    for preimport in ((False, True) if args.preimport else (False,)):
                        record = _child(runtime, path, preimport, modules[label], folder)
                        record.update(runtime=runtime, tree=label, preimport=preimport,
                                      run=run)
                        records.append(record)
    with open(args.out, "w") as fh:
        json.dump({"records": records}, fh, indent=1)
    groups = sorted({(r["runtime"], r["tree"], r["preimport"]) for r in records})
    for runtime, label, preimport in groups:
        rows = [r for r in records if (r["runtime"], r["tree"], r["preimport"])
                == (runtime, label, preimport)]
        line = ", ".join(f"{key} {statistics.median(r[key] for r in rows):.1f}"
                         for key in ("client_ms", "first_launch_ms", "frontend_wall_ms",
                                     "frontend_thread_cpu_ms", "frontend_process_cpu_ms"))
        print(f"{runtime} {label}{' preimported' if preimport else ''} "
              f"(medians of {len(rows)}): {line}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
