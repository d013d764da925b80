"""Cold first launches on cuda, fresh processes interleaved, under variants of the
NVRTC loading thread, against NVRTC alone in the same run.

    python benchmarks/probe_cold_launch.py [RUNS] [PAUSE_S]

Each process is benchmarks/bench_startup.py's launch child (import, client, then the
timed decoration + first launch + sync of axpy with an empty cache folder); a variant
adds one line before the timed part:

- `now`: the code as it stands (NVRTC through ctypes);
- `cdll`: libnvrtc opened by ctypes.CDLL, whose dlopen holds the GIL (as until the
  loader's dlopen was called as a foreign function, which releases it);
- `no_minimal`: every compile without NVRTC's --minimal (compile_nvrtc), as before it;
- `cuda_python`: the loading thread first imports cuda-python's NVRTC bindings, as it
  did while NVRTC was reached through them (until nvrtc_lib.py), so the two designs are
  compared in one run.

Between them, NVRTC alone: bench_startup.py's ctypes child (a fresh process with a CUDA
context opens the libnvrtc cubepy loaded and compiles the cold launch's source with its
options), so each variant's median can be set against NVRTC's own time + 20 ms; and,
where CuPy is installed, its RawModule compiling and loading the same source with an
empty kernel cache (bench_startup.py's CuPy child).

PAUSE_S (default 0) is a sleep before each process, so that the previous one's exit
(its CUDA context torn down) is over before the next is timed.

Prints the median, minimum and every time per variant, with the medians of the cold
processes' phases (the compiler step, cubepy's frontend, the cyclic GC), and writes them
as JSON ({"first_launch_ms": {variant: times}, "phases_ms": {variant: [phases per
process]}}) to $OUT/cold_launch.json (or /tmp). Results: benchmarks/results/startup_cold_h200.md.
"""
from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_startup as b  # noqa: E402

PATCH = {
    "now": "",
    "cdll": "import ctypes as _ct\nfrom cubepy.runtime import nvrtc_lib as _nl\n"
            "_nl._open = _ct.CDLL\n",
    "no_minimal": "from cubepy.runtime import cuda_compile as _cc\n"
                  "_cc._has_minimal = lambda nvrtc: False\n",
    "cuda_python": "from cubepy.runtime import cuda_compile as _cc\n"
                   "_load = _cc._load_nvrtc\n"
                   "def _load_through_cuda_python(*args):\n"
                   "    from cuda.bindings import nvrtc\n"
                   "    _load(*args)\n"
                   "_cc._load_nvrtc = _load_through_cuda_python\n",
}


# What each cold process reports of its first launch (bench_startup.py's launch child):
# the CUDA compiler step, cubepy's frontend, passes and code generation (with the
# compiler modules' import), and the cyclic GC's time.
PHASES = ("compiler_ms", "frontend_ms", "gc_ms")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    times: dict[str, list[float]] = {k: [] for k in PATCH}
    phases: dict[str, list[dict]] = {k: [] for k in PATCH}
    with tempfile.TemporaryDirectory() as tmp:
        kernel_file = os.path.join(tmp, "axpy_kernel.py")
        with open(kernel_file, "w") as fh:
            fh.write(b.KERNEL)
        b._child(b.IMPORT_CHILD, [], None)  # fills __pycache__
        times["nvrtc_alone_ctypes"] = []
        with_cupy = importlib.util.find_spec("cupy") is not None
        if with_cupy:
            times["cupy_rawmodule"] = []
        files = [kernel_file + ext for ext in (".cu", ".opts", ".lib")]
        for i in range(runs):
            for variant, patch in PATCH.items():
                code = b.LAUNCH_CHILD.replace("KERNEL_FILE", repr(kernel_file)).replace(
                    "before = set(sys.modules)", patch + "before = set(sys.modules)")
                time.sleep(pause)
                row = b._child(code, ["cuda", "cold"], os.path.join(tmp, f"c{i}{variant}"))
                times[variant].append(row["first_launch_ms"])
                phases[variant].append({k: row[k] for k in PHASES})
            time.sleep(pause)
            row = b._child(b.NVRTC_CTYPES_CHILD, files, None)
            times["nvrtc_alone_ctypes"].append(row["nvrtc_total_ms"])
            if with_cupy:
                time.sleep(pause)
                row = b._child(b.CUPY_CHILD, files, None)
                times["cupy_rawmodule"].append(row["cupy_compile_load_ms"])
    for variant, values in times.items():
        print(f"{variant}: median {statistics.median(values):.1f} min {min(values):.1f} ms  "
              f"{[round(x, 1) for x in values]}")
        if phases.get(variant):
            print("   of which, medians: " + ", ".join(
                f"{k} {statistics.median(p[k] for p in phases[variant]):.1f}"
                for k in PHASES))
    out = os.path.join(os.environ.get("OUT", "/tmp"), "cold_launch.json")
    with open(out, "w") as fh:
        json.dump({"first_launch_ms": times, "phases_ms": phases}, fh)


if __name__ == "__main__":
    main()
