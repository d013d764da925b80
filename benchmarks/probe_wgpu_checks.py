"""What naga's runtime checks cost the benchmark kernels on wgpu.

    python benchmarks/probe_wgpu_checks.py --out checks.json [--only softmax,layernorm]
        [--size full] [--reps 30]

wgpu translates WGSL with naga, which adds bounds checks (every array index clamped
into range) and loop bounding (every loop counts its iterations) unless the module is
built "trusted" (cubepy/runtime/wgpu_modules.py). This probe runs the benchmark's cases
(benchmarks/suite.py, most launched unchecked, elementwise also checked) on wgpu once
per mode (`--modes`), each in a fresh process with its own cache folder (so each tunes
and compiles anew), and the same cases on CUDA when present. A mode is the set of
checks kept in the modules of generated kernels: `all` (both, as hand-written WGSL
has), `loop` (loop bounding only: cubepy's choice), `bounds` or `none`.

Prints one table (milliseconds, and each wgpu time as a percentage of CUDA's) and
writes every row as JSON to --out, after each mode.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODES = {"all": 3, "loop": 2, "bounds": 1, "none": 0}  # ShaderChecks bits
DEFAULT_ONLY = "matmul,softmax,layernorm,sum,elementwise"


def measure(mode: str, only: set[str], size: str, reps: int) -> list[dict]:
    """This process's rows: the cases on wgpu with `mode`'s checks, or on CUDA."""
    import cubepy
    from benchmarks import suite
    from cubepy.runtime.wgpu_modules import ShaderChecks
    client = cubepy.client("cuda" if mode == "cuda" else "wgpu")
    if mode != "cuda":
        client.generated_checks = ShaderChecks(MODES[mode])
    warmup = suite.REPS[size][0]
    rows = []
    for case in suite.cases(size, only):
        if case.cubepy is None or case.kernel.startswith("matmul_tc"):
            continue  # (WGSL has no matrix units)
        for row in suite._run_cubepy(case, client, case.inputs(), warmup,
                                     suite._reps_for(case, reps),
                                     lambda line: print(f"[{mode}] {line}", flush=True)):
            rows.append(dict(row, mode=mode))
    return rows


def table(rows: list[dict], modes: list[str]) -> str:
    """Markdown: one line per (kernel, size, impl), one column per mode."""
    by_key: dict[tuple, dict] = {}
    for r in rows:
        key = (r["kernel"], r["size"], r["impl"])
        by_key.setdefault(key, {})[r["mode"]] = r
    head = ["kernel", "size", "impl"] + [f"{m} ms" for m in modes]
    wg = [m for m in modes if m != "cuda"]
    if "cuda" in modes:
        head += [f"{m} % of cuda" for m in wg]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for (kernel, size, impl), got in by_key.items():
        def ms(m):
            r = got.get(m)
            return r.get("median_ms") if r and not r.get("error") else None
        cells = [kernel, size, impl]
        cells += [f"{ms(m):.4f}" if ms(m) else "-" for m in modes]
        if "cuda" in modes:
            cuda = ms("cuda")
            cells += [f"{100 * cuda / ms(m):.0f}%" if cuda and ms(m) else "-" for m in wg]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="JSON file for every row")
    parser.add_argument("--only", default=DEFAULT_ONLY, help="kernels (benchmarks names)")
    parser.add_argument("--size", default="full", help="the benchmark's size tier")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--modes", default="cuda,loop,all,bounds,none")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # mode, in a child process
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if args.child:
        print(json.dumps(measure(args.child, only, args.size, args.reps)))
        return 0
    import cubepy
    present = set(cubepy.available_runtimes())
    modes = [m for m in args.modes.split(",")
             if (m == "cuda" and "cuda" in present) or (m in MODES and "wgpu" in present)]
    rows: list[dict] = []
    for mode in modes:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, CUBEPY_CACHE_DIR=cache)
            done = subprocess.run([sys.executable, __file__, "--child", mode, "--only",
                                   args.only, "--size", args.size, "--reps", str(args.reps)],
                                  env=env, capture_output=True, text=True)
        sys.stderr.write(done.stderr[-2000:] if done.returncode else "")
        out_lines = done.stdout.strip().splitlines()
        for line in out_lines[:-1]:
            print(line, flush=True)
        if done.returncode or not out_lines:
            print(f"[{mode}] failed (rc {done.returncode})")
            continue
        rows += json.loads(out_lines[-1])
        if args.out:  # after each mode, so a run cut short keeps what it measured
            args.out.write_text(json.dumps(rows, indent=1))
    print(table(rows, modes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
