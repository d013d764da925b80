"""Does the folder cubepy is imported from change its cold start?

    python benchmarks/probe_import_location.py [RUNS] [--copy-to DIR ...] [--out DIR]

The cold first compile's excess over NVRTC is mostly Python importing cubepy's compiler
modules (about 36 of them). An import is a few file-system calls per module (the
folder's listing, the source's stat, the bytecode's open and read) before its code
runs, so a slow file system (an overlay or network mount holding a checkout) can weigh
on it more than on NVRTC, a single library. This probe copies the `cubepy` package into
each --copy-to folder (a user's install lives in site-packages on a local disk) and
times, in fresh processes taking the locations in turns, with bytecode cached:

- `imports`: `import cubepy`, then the modules a cold compile of axpy loads;
- `frontend`: decorating axpy and generating its CUDA source with an empty cache folder
  (the imports above included; no GPU needed).

It also reports each location's file system (from /proc/mounts) and how long a `stat`
of each of the package's files takes there. Saves <out>/import_location_<name>.json.
Results: benchmarks/results/import_location_h200.json, docs/PERFORMANCE.md ("Where the
package lives").
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_startup import KERNEL, tree_child  # noqa: E402
from host import describe_host  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import importlib, json, os, sys, time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import cubepy
t2 = time.perf_counter()
if sys.argv[1] == "imports":
    for name in sys.argv[3:]:
        importlib.import_module(name)
    t3 = time.perf_counter()
    result = {"import_cubepy_ms": 1e3 * (t2 - t1), "compiler_modules_ms": 1e3 * (t3 - t2)}
else:
    before = set(sys.modules)
    scope = {n: getattr(cubepy, n) for n in ("cube", "f32", "Array", "ABSOLUTE_POS")}
    path = sys.argv[2]
    t3 = time.perf_counter()
    exec(compile(open(path).read(), path, "exec"), scope)
    scope["axpy"].source("cuda")
    t4 = time.perf_counter()
    result = {"import_cubepy_ms": 1e3 * (t2 - t1), "frontend_ms": 1e3 * (t4 - t3),
              "loaded": sorted(m for m in set(sys.modules) - before
                               if m.startswith("cubepy."))}
result["cubepy_file"] = cubepy.__file__
print(json.dumps(result))
"""


def file_system(path: str) -> str:
    """The type and mount point of the file system holding `path` (Linux)."""
    path = os.path.realpath(path)
    best = ("", "unknown")
    try:
        with open("/proc/mounts") as fh:
            for line in fh:
                _, mount, kind = line.split()[:3]
                inside = path == mount or path.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best[0]):
                    best = (mount, kind)
    except OSError:
        pass
    return f"{best[1]} at {best[0] or '?'}"


def stat_us(package: str) -> float:
    """Microseconds per os.stat of the package's files (median of 5 passes; the kernel's
    metadata cache is warm after the first)."""
    files = [os.path.join(d, f) for d, _, names in os.walk(package) for f in names]
    passes = []
    for _ in range(5):
        start = time.perf_counter()
        for f in files:
            os.stat(f)
        passes.append((time.perf_counter() - start) / len(files) * 1e6)
    return statistics.median(passes)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="?", type=int, default=7)
    ap.add_argument("--copy-to", action="append", default=[],
                    help="a folder to copy the cubepy package into (repeatable)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--name", default=socket.gethostname(), help="the result file's suffix")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp()
    kernel = os.path.join(work, "axpy_kernel.py")
    with open(kernel, "w") as fh:
        fh.write(KERNEL)
    trees = {"checkout": ROOT}
    try:
        for folder in args.copy_to:
            tree = tempfile.mkdtemp(dir=folder, prefix="cubepy-probe-")
            trees[folder] = tree
            shutil.copytree(os.path.join(ROOT, "cubepy"), os.path.join(tree, "cubepy"),
                            ignore=shutil.ignore_patterns("__pycache__"))
        report = measure(trees, kernel, work, args.runs)
    finally:  # the copies and the children's cache folders go, whatever happened
        for tree in list(trees.values())[1:]:
            shutil.rmtree(tree, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"import_location_{args.name}.json")
    with open(path, "w") as fh:
        json.dump(report, fh, indent=1)
    print("saved", path)


def measure(trees: dict[str, str], kernel: str, work: str, runs: int) -> dict:
    """The report of `runs` rounds over `trees` (name -> the folder holding `cubepy`),
    each child in `work`; printed as it is summed up."""
    first = {}
    for name, tree in trees.items():  # fills each copy's __pycache__; finds the modules
        first[name] = tree_child(CHILD, ["frontend", kernel], tree, work)
        assert first[name]["cubepy_file"].startswith(tree), first[name]["cubepy_file"]
    modules = first["checkout"]["loaded"]
    rows: dict[str, dict[str, list[float]]] = {n: {} for n in trees}
    for round_ in range(runs):
        names = list(trees)
        names = names[round_ % len(names):] + names[:round_ % len(names)]
        for name in names:
            for kind, extra in (("imports", modules), ("frontend", [])):
                out = tree_child(CHILD, [kind, kernel, *extra], trees[name], work)
                for key, value in out.items():
                    if key.endswith("_ms"):
                        rows[name].setdefault(key, []).append(value)
    report = {"host": describe_host(), "runs": runs, "modules": modules, "locations": {}}
    print(f"{len(modules)} compiler modules; medians of {runs} fresh processes (ms)")
    for name, tree in trees.items():
        medians = {k: statistics.median(v) for k, v in rows[name].items()}
        where = {"path": tree, "file_system": file_system(tree),
                 "stat_us": stat_us(os.path.join(tree, "cubepy")),
                 "medians_ms": medians, "samples_ms": rows[name]}
        report["locations"][name] = where
        print(f"{name}: {where['file_system']}, stat {where['stat_us']:.1f} us; "
              + ", ".join(f"{k} {v:.1f}" for k, v in medians.items()))
    return report


if __name__ == "__main__":
    main()
