"""What NVRTC's loading thread costs the frontend it runs beside, in fresh processes.

    python benchmarks/probe_nvrtc_loader.py [ROUNDS]

Each process makes a cuda client (a CUDA context, as a cubepy process compiling a kernel
holds), then times the frontend of a cold compile of axpy (decoration + `source("cuda")`,
an empty cache folder) with, beside it on a thread:

- `alone`: nothing;
- `with_start`: what cubepy does at a launch's compile miss
  (`cuda_compile.start_loading_nvrtc`), and after the frontend the rest of the load
  that the compile then does (`finish_load_ms`);
- `with_full_load`: the whole load on the thread (listing the candidates, the dlopen,
  binding the functions, NVRTC's version, the library's path), as before 121d89a;
- `with_dlopen`: the dlopen alone;
- `with_spin`: 6 ms of pure Python (what any GIL-bound work on a thread costs);

and `steps`, the load's steps one after another on the main thread, without a frontend.
Every mode reports the frontend's wall and CPU time (`time.thread_time`): wall above CPU
is waiting (for the GIL), CPU above `alone`'s is work slowed down. The modes run in a
rotated order within each round. Prints the medians and writes every process's row to
$OUT/nvrtc_loader.json (or /tmp). Results: benchmarks/results/startup_cold_h200.md.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_startup as b  # noqa: E402

MODES = ("alone", "with_start", "with_full_load", "with_dlopen", "with_spin", "steps")

CHILD = r'''
import json, os, sys, threading, time
mode = sys.argv[1]
import numpy as np
import cubepy
from cubepy import ABSOLUTE_POS, Array, cube, f32
client = cubepy.client("cuda")
client.sync()
from cubepy.runtime import cuda_compile, nvrtc_lib
out = {"mode": mode}
steps = []


def step(label, fn, *args):
    wall, cpu = time.perf_counter(), time.thread_time()
    result = fn(*args)
    steps.append([label, 1e3 * (time.perf_counter() - wall), 1e3 * (time.thread_time() - cpu)])
    return result


def full_load():
    candidates = step("candidates", nvrtc_lib.library_candidates)
    lib = step("dlopen", nvrtc_lib._open, candidates[0])
    nvrtc = step("functions", nvrtc_lib.Nvrtc, lib, candidates[0])
    step("version", nvrtc.version)
    step("library_path", nvrtc_lib._library_path, lib, candidates[0])


def spin():
    end = time.perf_counter() + 0.006
    while time.perf_counter() < end:
        pass


path = os.path.join(os.environ["XDG_CACHE_HOME"], "axpy_kernel.py")
with open(path, "w") as fh:
    fh.write(KERNEL)
thread = None
if mode == "steps":
    full_load()
else:
    if mode == "with_full_load":
        thread = threading.Thread(target=full_load)
    elif mode == "with_dlopen":
        first = nvrtc_lib.library_candidates()[0]
        thread = threading.Thread(target=lambda: step("dlopen", nvrtc_lib._open, first))
    elif mode == "with_spin":
        thread = threading.Thread(target=lambda: step("spin", spin))
    wall, cpu = time.perf_counter(), time.thread_time()
    if thread is not None:
        thread.start()
    if mode == "with_start":
        cuda_compile.start_loading_nvrtc()
    exec(compile(KERNEL, path, "exec"))
    axpy.source("cuda")
    out["frontend_ms"] = 1e3 * (time.perf_counter() - wall)
    out["frontend_cpu_ms"] = 1e3 * (time.thread_time() - cpu)
    if thread is not None:
        thread.join()
    if mode == "with_start":
        cuda_compile.wait_for_nvrtc_load()
        start = time.perf_counter()
        cuda_compile.nvrtc_version()
        out["finish_load_ms"] = 1e3 * (time.perf_counter() - start)
out["steps"] = steps
print(json.dumps(out))
'''.replace("KERNEL", repr(b.KERNEL))


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_child(mode: str, folder: str) -> dict:
    """One fresh process of `mode`, with an empty cache folder under `folder`."""
    return b.tree_child(CHILD, [mode], ROOT, folder)


def summarise(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Medians per mode: the frontend's wall and CPU ms, the load's finish, each step."""
    summary: dict[str, dict[str, float]] = {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = [r for r in rows if r["mode"] == mode]
        med = summary[mode] = {}
        for key in ("frontend_ms", "frontend_cpu_ms", "finish_load_ms"):
            if all(key in r for r in mine):
                med[key] = statistics.median(r[key] for r in mine)
        for i, (label, _, _) in enumerate(mine[0]["steps"]):
            med[f"{label}_ms"] = statistics.median(r["steps"][i][1] for r in mine)
            med[f"{label}_cpu_ms"] = statistics.median(r["steps"][i][2] for r in mine)
    return summary


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        run_child("alone", tmp)  # fills __pycache__
        for i in range(rounds):
            shift = i % len(MODES)
            for mode in MODES[shift:] + MODES[:shift]:
                rows.append(run_child(mode, tmp))
    for mode, med in summarise(rows).items():
        print(mode, ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
    out = os.path.join(os.environ.get("OUT", "/tmp"), "nvrtc_loader.json")
    with open(out, "w") as fh:
        json.dump({"rows": rows, "medians": summarise(rows)}, fh, indent=1)


if __name__ == "__main__":
    main()
