"""Runs the GPU-marked tests in parallel pytest processes, on a machine with a GPU.

    python tools/gpu_tests.py [--jobs 12] [--timeout 540] [--marks EXPR] [--out DIR]
                              [PATH ...]

(from the project's root: PATH defaults to tests)

Collects the tests that the marks select (default: every test needing a GPU or nvcc)
once, deals them round-robin to --jobs pytest processes and runs those side by side,
each with a cache folder of its own ($CUBEPY_CACHE_DIR). Dealing tests rather than
files keeps one slow file (the gallery's autotuned kernels take minutes on an H200) from
holding the whole run.

Each process writes DIR/logs/jobN.log unbuffered, so a process cut by --timeout still
shows how far it got. DIR/summary.txt holds the totals, each process's last line and
every failure's short line. Exits 0 when every process finished and no test failed or
errored, else 1.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GPU_MARKS = "cuda or wgpu or gpu or nvcc"
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error", "errors",
            "deselected")


def _pytest(marks: str) -> list[str]:
    # Node ids are relative to the rootdir and read back relative to the working folder:
    # the same folder for both, in the collection and in every process.
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
            f"--rootdir={os.getcwd()}", "-m", marks]


def collect(marks: str, paths: list[str]) -> list[str]:
    """The node ids of the tests `marks` selects under `paths`."""
    proc = subprocess.run([*_pytest(marks), "--collect-only", "-q", *paths],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 5):  # 5: nothing selected
        raise SystemExit(f"collection failed:\n{proc.stdout}\n{proc.stderr}")
    return [line for line in proc.stdout.splitlines() if re.match(r"\S+\.py::", line)]


def deal(ids: list[str], jobs: int) -> list[list[str]]:
    """`ids` dealt round-robin into at most `jobs` non-empty hands."""
    hands = [ids[i::jobs] for i in range(jobs)]
    return [hand for hand in hands if hand]


def outcome_counts(last_line: str) -> dict[str, int]:
    """The counts in pytest's final line ("3 passed, 1 skipped in 2.0s"); "errors" is
    counted as "error"."""
    counts: dict[str, int] = {}
    for number, word in re.findall(r"(\d+) (\w+)", last_line):
        if word in OUTCOMES:
            word = "error" if word == "errors" else word
            counts[word] = counts.get(word, 0) + int(number)
    return counts


def _last_line(log: Path) -> str:
    lines = [line.strip("= \n") for line in log.read_text(errors="replace").splitlines()
             if line.strip()]
    return lines[-1] if lines else ""


def run(hands: list[list[str]], marks: str, out: Path, timeout: float) -> list[dict]:
    """Runs one pytest process per hand; returns per process its log, return code (None
    when cut by `timeout`) and final line."""
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cubepy-gpu-tests-") as caches:
        procs = []
        for n, hand in enumerate(hands):
            env = dict(os.environ, PYTHONUNBUFFERED="1",
                       CUBEPY_CACHE_DIR=os.path.join(caches, f"job{n}"))
            log = logs / f"job{n}.log"
            with open(log, "w") as fh:
                procs.append((log, subprocess.Popen(
                    [*_pytest(marks), "-q", "-rfE", *hand], env=env, stdout=fh,
                    stderr=subprocess.STDOUT)))
        deadline = time.monotonic() + timeout
        results = []
        for log, proc in procs:
            try:
                code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = None
            results.append({"log": log, "code": code, "last": _last_line(log)})
    return results


def summarise(results: list[dict], collected: int) -> tuple[str, bool]:
    """The summary's text, and whether the run passed."""
    totals: dict[str, int] = {}
    lines, failures = [], []
    for r in results:
        cut = r["code"] is None
        if not cut:
            for word, number in outcome_counts(r["last"]).items():
                totals[word] = totals.get(word, 0) + number
        cut_note = "CUT by the timeout; last line: " if cut else ""
        lines.append(f"{r['log'].name}: {cut_note}{r['last']}")
        failures += [line for line in r["log"].read_text(errors="replace").splitlines()
                     if line.startswith(("FAILED ", "ERROR "))]
    finished = all(r["code"] is not None for r in results)
    # (pytest exits 0 only when every test it ran passed or was skipped)
    ok = all(r["code"] == 0 for r in results)
    head = (f"{collected} tests collected; " +
            ", ".join(f"{n} {w}" for w, n in sorted(totals.items())) +
            ("" if finished else "; some processes were cut (their counts left out)"))
    return "\n".join([head, *lines, *failures]) + "\n", ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=["tests"])
    parser.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=540.0,
                        help="seconds for the whole run (default 540)")
    parser.add_argument("--marks", default=GPU_MARKS,
                        help=f'pytest -m expression (default "{GPU_MARKS}")')
    parser.add_argument("--out", type=Path, default=Path("gpu-tests"))
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    ids = collect(args.marks, args.paths)
    if not ids:
        print("no test selected")
        return 1
    results = run(deal(ids, args.jobs), args.marks, args.out.resolve(), args.timeout)
    text, ok = summarise(results, len(ids))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.txt").write_text(text)
    print(text, end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
