"""Cold first launches on cuda, fresh processes interleaved, under variants of the
NVRTC loading thread, against NVRTC alone in the same run.

    python benchmarks/probe_cold_launch.py [RUNS] [PAUSE_S] [VARIANT,VARIANT...]
        [--base DIR] [--tree NAME=DIR ...]

Each process is benchmarks/bench_startup.py's launch child (import, client, then the
timed decoration + first launch + sync of axpy with an empty cache folder); a variant
adds one line before the timed part:

- `now`: the code as it stands;
- `gc_promotion_off_on_312`: the cyclic GC's promotion after a compile skipped wherever
  the process holds frozen objects, as before it told the interpreter's own (Python
  3.12's immortal tuples) from a program's (cubepy/gc_pause.py);
- `eager_passes`: the compile first imports what a plain kernel's first compile no
  longer loads (the passes for lines, unrolling, long elif chains and uniform barriers,
  the C-like line accesses, cuda's cmma staging), as before passes/needs.py;
- `switch_1ms`, `switch_200us`: the interpreter's switch interval (how long a thread
  waiting for the GIL waits before it asks the holder to let go; 5 ms by default) set
  to 1 ms or 0.2 ms for the timed part, so that the NVRTC loading thread and the main
  thread hand the GIL over sooner after each other's system calls;
- `load_at_compile`: no loading thread, NVRTC loaded by the compile itself;
- `base` (with `--base DIR`), NAME (with `--tree NAME=DIR`): the code as it stands in
  another tree, DIR holding its `cubepy` package (for example `git archive REV cubepy |
  tar x -C DIR`), first on the path of its processes.

Each round runs the variants in a rotated order, so that none always follows the
same process.

(Earlier runs compared other variants: ctypes.CDLL's dlopen, compiles without
`--minimal`, NVRTC through cuda-python; their results keep those names.)

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
    "gc_promotion_off_on_312": "import gc as _gc, cubepy.gc_pause as _gp\n"
                               "_gp._only_immortal_objects_frozen = "
                               "lambda: _gc.get_freeze_count() == 0\n",
    "eager_passes": "import cubepy.kernel as _k\n"
                    "_compile_spec = _k._compile_spec\n"
                    "def _eager(*args, **kwargs):\n"
                    "    import cubepy.ir.passes.lines, cubepy.ir.passes.uniform\n"
                    "    import cubepy.ir.passes.unroll, cubepy.ir.passes.elif_chains\n"
                    "    import cubepy.codegen.clike_lines, cubepy.codegen.cuda_cmma_staging\n"
                    "    return _compile_spec(*args, **kwargs)\n"
                    "_k._compile_spec = _eager\n",
    "switch_1ms": "sys.setswitchinterval(0.001)\n",
    "switch_200us": "sys.setswitchinterval(0.0002)\n",
    "load_at_compile": "import cubepy.runtime.cuda_compile as _cc\n"
                       "_cc.start_loading_nvrtc = lambda: None\n",
}


# What each cold process reports of its first launch (bench_startup.py's launch child):
# the CUDA compiler step, cubepy's frontend, passes and code generation (with the
# compiler modules' import), and the cyclic GC's time.
PHASES = ("compiler_ms", "frontend_ms", "gc_ms")


def main() -> None:
    argv = sys.argv[1:]
    trees: dict[str, str] = {}  # variant -> the folder holding its cubepy
    for flag in ("--base", "--tree"):
        while flag in argv:
            at = argv.index(flag)
            name, _, folder = (("base", "", argv[at + 1]) if flag == "--base"
                               else argv[at + 1].partition("="))
            trees[name] = os.path.abspath(folder)
            del argv[at:at + 2]
    runs = int(argv[0]) if len(argv) > 0 else 7
    pause = float(argv[1]) if len(argv) > 1 else 0.0
    chosen = argv[2].split(",") if len(argv) > 2 else list(PATCH)
    chosen += [name for name in trees if name not in chosen]
    variants = {k: PATCH.get(k, "") for k in chosen}
    times: dict[str, list[float]] = {k: [] for k in variants}
    phases: dict[str, list[dict]] = {k: [] for k in variants}
    with tempfile.TemporaryDirectory() as tmp:
        kernel_file = os.path.join(tmp, "axpy_kernel.py")
        with open(kernel_file, "w") as fh:
            fh.write(b.KERNEL)
        b._child(b.IMPORT_CHILD, [], None)  # fills __pycache__
        for tree in trees.values():
            b._child(b.IMPORT_CHILD, [], None, tree)
        times["nvrtc_alone_ctypes"] = []
        with_cupy = importlib.util.find_spec("cupy") is not None
        if with_cupy:
            times["cupy_rawmodule"] = []
        files = [kernel_file + ext for ext in (".cu", ".opts", ".lib")]
        for i in range(runs):
            order = list(variants.items())
            shift = i % len(order)  # each variant first in turn (what runs before it
            for variant, patch in order[shift:] + order[:shift]:  # changes its time)
                code = b.LAUNCH_CHILD.replace("KERNEL_FILE", repr(kernel_file)).replace(
                    "before = set(sys.modules)", patch + "before = set(sys.modules)")
                time.sleep(pause)
                row = b._child(code, ["cuda", "cold"], os.path.join(tmp, f"c{i}{variant}"),
                               trees.get(variant))
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
