"""A long differential fuzz run: random kernels on every runtime present, against the
pure-Python reference of docs/LANGUAGE.md (tests/fuzz_kernels.py, tests/fuzz_programs.py).

    python -m tests.fuzz --kernels 10000 [--seed S] [--runtimes cpu,wgpu,cuda]
                         [--out FILE.json] [--batch 32] [--programs 0.2]

The expression kernels are compiled in batches (`--batch` expressions per kernel, one
output slot each), so one compile and one launch check many expressions; a batch that
fails to compile is split to name the expression at fault. A share (`--programs`) of
the kernels are random control-flow programs, run one per kernel. Integers must match
the reference bit for bit; floats follow the rules of docs/LANGUAGE.md (exact where the
operations are; a few ulp for division and the math functions; GPUs may reassociate
chains of float operations and WGSL may assume finite values, so those are compared on
the cpu runtime only). A runtime that is not present is reported and skipped.

Prints a summary and (with --out) writes every finding with a reproducer: the batch
seed, the kernel source and the inputs of the lane that differs. Exit status 1 when
anything was found.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_kernels as fk  # noqa: E402
import fuzz_programs as fp  # noqa: E402

LANES = 64
SENTINEL = 0x5EED
NP = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}
CTX = fk.Ctx({"i32": ["a0", "a1"], "u32": ["b0", "b1"], "f32": ["c0", "c1"]})
INPUTS = [(n, t) for t, names in CTX.leaves.items() for n in names]
FLOAT_CHAINS_EXACT = ("cpu",)  # see fuzz_kernels.float_chain
FINITE_MATH = ("wgpu",)  # see fuzz_kernels.finite_math_safe
# The documented accuracy of the one inexact operation at a root (docs/LANGUAGE.md,
# "Precision"), as (ulps, absolute error), where it is looser than the default below:
# WGSL's accuracy table on wgpu (sin/cos: absolute error 2^-11 on [-pi, pi]; the
# generated arguments are clamped to [-3, 3]). Integer results, `//` and `%` stay exact.
ACCURACY = {"wgpu": {"sin": (4, 2.0**-11), "cos": (4, 2.0**-11)}}


@dataclass
class Report:
    """Counts and findings of one run (what --out writes)."""
    seed: int
    runtimes: list[str]
    absent: dict[str, str] = field(default_factory=dict)
    kernels: int = 0
    expressions: int = 0
    programs: int = 0
    compiles: Counter = field(default_factory=Counter)
    mismatches: list[dict] = field(default_factory=list)
    internal_errors: list[dict] = field(default_factory=list)
    compile_errors: Counter = field(default_factory=Counter)
    compile_error_examples: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    generate_seconds: float = 0.0

    def as_json(self) -> dict:
        rate = self.kernels / self.seconds if self.seconds else 0.0
        return {"seed": self.seed, "runtimes": self.runtimes, "absent": self.absent,
                "kernels": self.kernels, "expressions": self.expressions,
                "programs": self.programs, "compiles_per_runtime": dict(self.compiles),
                "seconds": round(self.seconds, 1), "kernels_per_second": round(rate, 2),
                "generate_seconds": round(self.generate_seconds, 1),
                "mismatch_count": len(self.mismatches),
                "internal_error_count": len(self.internal_errors),
                "compile_errors_by_class": dict(self.compile_errors),
                "mismatches": self.mismatches, "internal_errors": self.internal_errors,
                "compile_error_examples": self.compile_error_examples}


# ----------------------------------------------------------------------------- generation

def generate(strategy, count: int, seed: int) -> list:
    """`count` examples of a hypothesis strategy, the same for the same seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed
    found: list = []
    if count <= 0:
        return found

    @with_seed(seed)
    @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(example=strategy)
    def collect(example):
        found.append(example)

    collect()
    return found[:count]


def expression_strategy(max_depth: int = 5):
    from hypothesis import strategies as st

    @st.composite
    def cases(draw):
        ty = draw(st.sampled_from(fk.NUM_TYPES))
        return draw(fk.root_exprs(ty, CTX, draw(st.integers(2, max(2, max_depth)))))
    return cases()


# ----------------------------------------------------------------------------- checking

def lane_ok(root: fk.Node, env: dict, got, runtime: str) -> bool:
    """Whether `got` is what docs/LANGUAGE.md allows for `root` on `runtime`."""
    if runtime not in FLOAT_CHAINS_EXACT and fk.float_chain(root):
        return True  # also under a cast to an integer: i32((x + a) % b) may differ
    if runtime in FINITE_MATH and not fk.finite_math_safe(root, env):
        return True
    if fk.has_signed_zero_choice(root, env):
        return True  # anywhere in the tree: a comparison can turn the zero's sign into ints
    want = root.ev(env)
    if root.ty != "f32":
        return int(got) == want
    ulps, atol = 0, 0.0
    if not root.exact:  # Vulkan's precision, as in tests/test_fuzz_semantics.py
        ulps, atol = 4, 2.0**-22
        if isinstance(root, fk.Un) and root.op == "exp":
            ulps = 3 + 2 * 30
        if isinstance(root, (fk.Un, fk.Bin)) and root.op in ACCURACY.get(runtime, {}):
            ulps, atol = ACCURACY[runtime][root.op]
    return fk.float_matches(want, float(got), ulps, atol=atol)


def error_class(exc: BaseException) -> str:
    """A CompileError's message with numbers and quoted names blanked (for counting)."""
    msg = str(getattr(exc, "msg", exc)).splitlines()[0]
    msg = re.sub(r"'[^']*'", "'_'", msg)
    return re.sub(r"\d+", "N", msg)[:100]


def batch_source(roots: list[fk.Node]) -> str:
    params = ", ".join([f"p_{n}: Array[{t}]" for n, t in INPUTS] +
                       [f"out_{t}: Array[{t}]" for t in fk.NUM_TYPES])
    lines = ["@cube(launch=True)", f"def kernel({params}):", "    i = ABSOLUTE_POS"]
    lines += [f"    {n} = p_{n}[i]" for n, _ in INPUTS]
    lines += [f"    out_{r.ty}[i * {len(roots)} + {j}] = {r.src({})}"
              for j, r in enumerate(roots)]
    return fk.HEADER + "\n".join(lines) + "\n"


def run_batch(client, roots: list[fk.Node], inputs: dict[str, list]) -> dict[str, np.ndarray]:
    import cubepy
    kernel = fk.load_kernel(batch_source(roots))
    args = [client.tensor(np.array(inputs[n], dtype=NP[t])) for n, t in INPUTS]
    outs = [client.zeros(LANES * len(roots), getattr(cubepy, t)) for t in fk.NUM_TYPES]
    kernel.launch(client, cubepy.CubeCount(1), cubepy.CubeDim(LANES), *args, *outs)
    return {t: o.numpy().reshape(LANES, len(roots)) for t, o in zip(fk.NUM_TYPES, outs)}


def folded_source(roots: list[fk.Node], envs: list[dict]) -> str:
    """Each expression with its inputs as literals: the frontend and the constant folder
    evaluate it (what is left runs on the target)."""
    lines = ["@cube(launch=True)",
             f"def kernel({', '.join(f'out_{t}: Array[{t}]' for t in fk.NUM_TYPES)}):"]
    for j, (root, env) in enumerate(zip(roots, envs)):
        texts = {n: fk.lit_src(env[n], t) for n, t in fk.input_names(root)}
        lines.append(f"    out_{root.ty}[{j}] = {root.src(texts)}")
    return fk.HEADER + "\n".join(lines) + "\n"


def run_folded(client, roots: list[fk.Node], envs: list[dict]) -> dict[str, np.ndarray]:
    import cubepy
    kernel = fk.load_kernel(folded_source(roots, envs))
    outs = [client.zeros(len(roots), getattr(cubepy, t)) for t in fk.NUM_TYPES]
    kernel.launch(client, cubepy.CubeCount(1), cubepy.CubeDim(1), *outs)
    return {t: o.numpy() for t, o in zip(fk.NUM_TYPES, outs)}


def check_folded(report: Report, clients: dict, roots: list[fk.Node], envs: list[dict],
                 seed: int) -> None:
    """The batch again with literal inputs (one lane's values per expression)."""
    for runtime, client in clients.items():
        try:
            got = run_folded(client, roots, envs)
            report.compiles[runtime] += 1
        except Exception:
            if len(roots) > 1:
                half = len(roots) // 2
                check_folded(report, {runtime: client}, roots[:half], envs[:half], seed)
                check_folded(report, {runtime: client}, roots[half:], envs[half:], seed)
            else:
                try:
                    run_folded(client, roots, envs)
                except Exception as exc:
                    record_error(report, runtime, folded_source(roots, envs), exc, seed)
            continue
        for j, (root, env) in enumerate(zip(roots, envs)):
            value = got[root.ty][j]
            if not lane_ok(root, env, value, runtime):
                report.mismatches.append({
                    "runtime": runtime, "seed": seed, "lane": None, "folded": True,
                    "inputs": {k: repr(v) for k, v in env.items()},
                    "got": repr(value.item()), "want": repr(root.ev(env)),
                    "source": folded_source([root], [env])})


def record_error(report: Report, runtime: str, source: str, exc: BaseException,
                 seed: int) -> None:
    import cubepy
    entry = {"runtime": runtime, "seed": seed, "source": source}
    if isinstance(exc, cubepy.CompileError):
        cls = error_class(exc)
        report.compile_errors[cls] += 1
        if report.compile_errors[cls] <= 3:
            report.compile_error_examples.append({**entry, "error": str(exc)})
    else:
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        report.internal_errors.append({**entry, "error": f"{type(exc).__name__}: {exc}",
                                       "traceback": "".join(tb[-6:])})


def check_batch(report: Report, clients: dict, roots: list[fk.Node], seed: int,
                folded: bool = True) -> None:
    """The batch on every runtime (split to name the expression at fault when it fails),
    then (`folded`) the same expressions with literal inputs."""
    rng = np.random.default_rng(seed)
    inputs = {n: fk.random_inputs(rng, t, LANES) for n, t in INPUTS}
    if folded:
        envs = [{n: inputs[n][j % LANES] for n, _ in INPUTS} for j in range(len(roots))]
        check_folded(report, clients, roots, envs, seed)
    for runtime, client in clients.items():
        try:
            got = run_batch(client, roots, inputs)
            report.compiles[runtime] += 1
        except Exception:  # split the batch: name the expression at fault
            if len(roots) > 1:
                half = len(roots) // 2
                check_batch(report, {runtime: client}, roots[:half], seed, False)
                check_batch(report, {runtime: client}, roots[half:], seed, False)
            else:
                try:
                    run_batch(client, roots, inputs)
                except Exception as exc:
                    record_error(report, runtime, fk.expr_kernel_source(roots[0]), exc, seed)
            continue
        for j, root in enumerate(roots):
            for lane in range(LANES):
                env = {n: inputs[n][lane] for n, _ in fk.input_names(root)}
                value = got[root.ty][lane, j]
                if not lane_ok(root, env, value, runtime):
                    report.mismatches.append({
                        "runtime": runtime, "seed": seed, "lane": lane,
                        "inputs": {k: repr(v) for k, v in env.items()},
                        "got": repr(value.item()), "want": repr(root.ev(env)),
                        "source": fk.expr_kernel_source(root)})
                    break


def check_program(report: Report, clients: dict, program, seed: int) -> None:
    import cubepy
    rng = np.random.default_rng(seed)
    inputs = {x: fk.random_inputs(rng, "i32", LANES) for x in program.inputs}
    source = program.source()
    for runtime, client in clients.items():
        try:
            kernel = fk.load_kernel(source)
            out = client.tensor(np.full(LANES * fp.SLOTS, SENTINEL, np.int32))
            args = [client.tensor(np.array(inputs[x], np.int32)) for x in program.inputs]
            kernel.launch(client, cubepy.CubeCount(1), cubepy.CubeDim(LANES), *args, out)
            got = out.numpy().reshape(LANES, fp.SLOTS).tolist()
            report.compiles[runtime] += 1
        except Exception as exc:
            record_error(report, runtime, source, exc, seed)
            continue
        for lane in range(LANES):
            env = {x: inputs[x][lane] for x in program.inputs}
            want = program.run(env, SENTINEL)
            if got[lane] != want:
                report.mismatches.append({"runtime": runtime, "seed": seed, "lane": lane,
                                          "inputs": env, "got": got[lane], "want": want,
                                          "source": source})
                break


# ----------------------------------------------------------------------------- driver

def open_clients(names: list[str], report: Report) -> dict:
    import cubepy
    clients = {}
    for name in names:
        try:
            clients[name] = cubepy.client(name)
        except cubepy.LaunchError as exc:
            report.absent[name] = str(exc)
            print(f"runtime {name}: not present here, skipped ({exc})", file=sys.stderr)
    return clients


def run(kernels: int, seed: int, runtimes: list[str], batch: int = 32, share: float = 0.2,
        max_depth: int = 5, progress: bool = True) -> Report:
    """Runs the whole fuzz campaign; see the module docstring."""
    report = Report(seed, runtimes)
    clients = open_clients(runtimes, report)
    start = time.perf_counter()
    n_programs = int(round(kernels * share))
    roots = generate(expression_strategy(max_depth), kernels - n_programs, seed)
    programs = generate(fp.programs(), n_programs, seed + 1)
    report.generate_seconds = time.perf_counter() - start
    if progress:
        print(f"generated {len(roots)} expressions, {len(programs)} programs in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    rng = np.random.default_rng(seed)
    for k in range(0, len(roots), batch):
        check_batch(report, clients, roots[k:k + batch], int(rng.integers(2**32)))
        report.expressions += len(roots[k:k + batch])
        if progress and (k // batch) % 20 == 0:
            print(f"  {report.expressions} expressions, {len(report.mismatches)} "
                  f"mismatches, {len(report.internal_errors)} internal errors, "
                  f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    for program in programs:
        check_program(report, clients, program, int(rng.integers(2**32)))
        report.programs += 1
    report.kernels = report.expressions + report.programs
    report.seconds = time.perf_counter() - start
    return report


def summary(report: Report) -> str:
    data = report.as_json()
    lines = [f"fuzz seed {report.seed}: {report.kernels} kernels ({report.expressions} "
             f"expressions in batches, {report.programs} control-flow programs) on "
             f"{', '.join(n for n in report.runtimes if n not in report.absent) or 'nothing'}"
             f" in {data['seconds']} s ({data['kernels_per_second']} kernels/s; "
             f"{data['generate_seconds']} s of it generating them)",
             f"  compiles: {dict(report.compiles)}",
             f"  mismatches: {len(report.mismatches)}",
             f"  internal errors: {len(report.internal_errors)}",
             f"  compile errors: {sum(report.compile_errors.values())}"]
    lines += [f"    {n} x {cls}" for cls, n in report.compile_errors.most_common()]
    for name, why in report.absent.items():
        lines.append(f"  {name}: absent ({why})")
    for m in report.mismatches[:5]:
        lines.append(f"  mismatch on {m['runtime']} (seed {m['seed']}, lane {m['lane']}, "
                     f"inputs {m['inputs']}): got {m['got']}, want {m['want']}\n"
                     f"{m['source']}")
    for e in report.internal_errors[:5]:
        lines.append(f"  internal error on {e['runtime']} (seed {e['seed']}): "
                     f"{e['error']}\n{e['source']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runtimes", default="cpu,wgpu,cuda",
                        help="comma-separated; absent ones are skipped")
    parser.add_argument("--batch", type=int, default=32, help="expressions per kernel")
    parser.add_argument("--programs", type=float, default=0.2,
                        help="share of control-flow programs among the kernels")
    parser.add_argument("--max-depth", type=int, default=5,
                        help="deepest expression tree (2 and up)")
    parser.add_argument("--out", help="write the report as JSON")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.runtimes.split(",") if n.strip()]
    report = run(args.kernels, args.seed, names, max(1, args.batch), args.programs,
                 args.max_depth)
    print(summary(report))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report.as_json(), fh, indent=1, default=str)
    found = report.mismatches or report.internal_errors or report.compile_errors
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
