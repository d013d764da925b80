"""Row softmax: every plan the benchmark's softmax chooses from, against Triton's tutorial
kernel and a copy of the same bytes, timed in interleaved rounds on CUDA.

    python benchmarks/probe_softmax_plans.py [--rows 4096] [--cols 1024,4096,16384]
        [--rounds 7] [--reps 10] [--runtime cuda] [--min-cubes M,...]
        [--cache-hints LD/ST,...] [--out FILE.json]

`softmax.choose_plan` keeps the fastest candidate plan. At 4096 x 4096 its pick ran at
98-99% of Triton's time in the benchmark when it timed each plan once; this probe asks
whether a plan reaches Triton and how often one timing picks the fastest. Each round
times every variant once (`cubepy.bench` or CUDA events, a cold L2 as the benchmark),
the order rotated from round to round; the figures are the medians over rounds. Besides
the plans (`plan ...`):

- `expf ...`: the register plans with `math.exp(x - max)`, CUDA's `expf`, as the
  kernels had it before they computed `exp2(x * log2(e) - max * log2(e))` (one
  multiply-add and the hardware's base-2 exponential per element, as Triton lowers its
  `exp`). In the first run (`benchmarks/results/softmax_plans_h200_expf.json`) the
  plans still used `expf`, and these variants, named `exp2 ...` there, were the new
  form;
- `one sync ...` (runs before 2026-12-03): the register plans with one reduction where
  they have two, now the benchmark's own `cube_one_barrier` plans
  (`softmax_in_registers_one_barrier`);
- `16 lines ...`: the register plan with 16 lines per unit where that makes a cube of 64
  to 512 units (256 units at 16384 columns: twice the lines in flight per unit of the
  512-unit plan the benchmark takes there), which `register_plans` leaves out (at most
  8);
- `streamed N cubes ...`: N cubes (the H200's 132 multiprocessors, once and twice)
  looping over the rows, each reading the next row into a second set of registers before
  this row's reduction (`softmax_streamed`);
- `prefetched, cubes of R rows ...`: cubes looping over R rows each, the next row
  copied into shared memory asynchronously (`pipeline.memcpy_async`) while this one is
  reduced, so the cube holds one row's registers (`softmax_prefetched`);
- `min M cubes/SM ...` (with `--min-cubes M,...`): the register plans of one cube per
  row with `__launch_bounds__(units, M)` in their CUDA, so that ptxas keeps to the
  registers M cubes per multiprocessor leave (the generated source edited in this
  process, the disk cache off while it compiles). At 16384 columns the 512-unit plan
  takes 62 registers, which leaves room for 2 cubes; 3 need at most 42;
- `LD/ST ...` (with `--cache-hints LD/ST,...`, e.g. `ldcs/stcs,-/stcs`): the register
  plans with their 16-byte loads and stores through CUDA's cache-hinted intrinsics
  (`__ldcs`, `__ldcg`, `__ldlu`; `__stcs`, `__stcg`, `__stwt`; `-` for a plain access),
  the generated CUDA edited as for `--min-cubes`;
- the peers of the benchmark (`triton (tutorial)`, `torch copy_ (same size)`,
  `torch.softmax`).

Every cubepy variant's output is checked against numpy first (a wrong one is left out
and listed). Prints per shape each variant's median, its ratio to Triton's time, and how
many rounds it was the fastest cubepy variant; writes the times per round as JSON.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import statistics
import sys
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cubepy  # noqa: E402
from cubepy import (CUBE_COUNT, CUBE_DIM, CUBE_POS, UNIT_POS, Comptime,  # noqa: E402
                    CubeCount, CubeDim, Line, LocalArray, SharedMemory, Tensor, cube, f32,
                    math, pipeline, u32, unroll)
from benchmarks import peers  # noqa: E402
from benchmarks.host import describe_host  # noqa: E402
from benchmarks.kernels import softmax  # noqa: E402
from benchmarks.kernels.cube_reduce import row_max, row_sum  # noqa: E402


@cube(launch=True)
def softmax_expf(x: Tensor[Line[f32]], out: Tensor[Line[f32]], per_unit: Comptime[int]):
    """softmax_in_registers with exp(v - top) through `math.exp`."""
    width = x.line_size()
    first = CUBE_POS * (per_unit * CUBE_DIM) + UNIT_POS
    held = LocalArray(Line[f32], per_unit, x.line_size())
    m = f32(-3.0e38)
    for k in unroll(range(per_unit)):
        v = x[first + k * CUBE_DIM]
        held[k] = v
        m = max(m, softmax.line_max(v, width))
    top = row_max(m, 0)
    s = f32(0.0)
    for k in unroll(range(per_unit)):
        e = math.exp(held[k] - top)
        held[k] = e
        s += softmax.line_sum(e, width)
    scale = 1.0 / row_sum(s, 0)
    for k in unroll(range(per_unit)):
        out[first + k * CUBE_DIM] = held[k] * scale


@cube(launch=True)
def softmax_streamed(x: Tensor[Line[f32]], out: Tensor[Line[f32]], per_unit: Comptime[int]):
    """`softmax.softmax_in_registers_one_barrier` over rows CUBE_POS, CUBE_POS +
    CUBE_COUNT, ... (fewer cubes than rows, each looping): the next row's lines are read
    into a second set of registers before this row's reduction, so they are in flight
    across its barrier instead of the cube's loads stopping while it reduces."""
    width = x.line_size()
    rows = x.shape(0)
    row_lines = per_unit * CUBE_DIM
    held = LocalArray(Line[f32], per_unit, x.line_size())
    ahead = LocalArray(Line[f32], per_unit, x.line_size())
    row = CUBE_POS
    if row < rows:
        for k in unroll(range(per_unit)):
            ahead[k] = x[row * row_lines + UNIT_POS + k * CUBE_DIM]
    parity = u32(0)
    while row < rows:
        for k in unroll(range(per_unit)):
            held[k] = ahead[k]
        following = row + CUBE_COUNT
        if following < rows:
            for k in unroll(range(per_unit)):
                ahead[k] = x[following * row_lines + UNIT_POS + k * CUBE_DIM]
        softmax.write_row_one_barrier(out, row * row_lines + UNIT_POS, held, parity,
                                      per_unit, width)
        row = following
        parity = 1 - parity


@cube(launch=True)
def softmax_prefetched(x: Tensor[Line[f32]], out: Tensor[Line[f32]], per_unit: Comptime[int],
                       units: Comptime[int]):
    """As `softmax_streamed`, but the next row goes into shared memory by asynchronous
    copies (`units`: the cube dim, known when compiling as the shared row's size needs),
    so the cube keeps the registers of one row: each unit copies, and reads back, only
    its own lines, its own `pipeline.wait` is all the ordering they need, and it starts
    the next row's copies into the lines it has just read only after its maximum has
    used every one of them."""
    rows = x.shape(0)
    width = x.line_size()
    row_lines = per_unit * CUBE_DIM
    ahead = SharedMemory(Line[f32], per_unit * units, x.line_size())
    held = LocalArray(Line[f32], per_unit, x.line_size())
    row = CUBE_POS
    if row < rows:
        for k in unroll(range(per_unit)):
            pipeline.memcpy_async(ahead, UNIT_POS + k * CUBE_DIM,
                                  x, row * row_lines + UNIT_POS + k * CUBE_DIM)
    pipeline.commit()
    parity = u32(0)
    while row < rows:
        pipeline.wait(0)  # this unit's copies of the row have landed
        m = f32(-3.0e38)
        for k in unroll(range(per_unit)):
            v = ahead[UNIT_POS + k * CUBE_DIM]
            held[k] = v
            m = max(m, softmax.line_max(v, width))
        following = row + CUBE_COUNT
        if following < rows:
            for k in unroll(range(per_unit)):
                pipeline.memcpy_async(ahead, UNIT_POS + k * CUBE_DIM,
                                      x, following * row_lines + UNIT_POS + k * CUBE_DIM)
        pipeline.commit()
        softmax.write_row_one_barrier(out, row * row_lines + UNIT_POS, held, parity,
                                      per_unit, width)
        row = following
        parity = 1 - parity


STREAM_CUBES = (132, 264)  # the H200's multiprocessors, once and twice
PREFETCHED_ROWS_PER_CUBE = (16, 32)


@contextlib.contextmanager
def edited_cuda(edit: Callable[[str], str]):
    """Kernels compiled inside get `edit(source)` as their CUDA. The disk cache is off
    meanwhile, so an edited source never reaches it."""
    from cubepy.codegen import cuda as cuda_codegen
    real = cuda_codegen.emit_cuda.record  # (what code generation calls for cuda)

    def edited(kernel, abi, checked):
        compiled = real(kernel, abi, checked)
        return dataclasses.replace(compiled, source=edit(compiled.source))
    saved = os.environ.get("CUBEPY_NO_CACHE")
    cuda_codegen.emit_cuda.record, os.environ["CUBEPY_NO_CACHE"] = edited, "1"
    try:
        yield
    finally:
        cuda_codegen.emit_cuda.record = real
        if saved is None:
            del os.environ["CUBEPY_NO_CACHE"]
        else:
            os.environ["CUBEPY_NO_CACHE"] = saved


def min_cubes_per_sm(cubes: int):
    """Kernels compiled inside ask ptxas for at least `cubes` cubes per multiprocessor:
    the generated CUDA's `__launch_bounds__(units)` becomes `(units, cubes)`."""
    return edited_cuda(lambda source: re.sub(
        r"__launch_bounds__\((\d+)\)", rf"__launch_bounds__(\1, {cubes})", source))


_LINE_LOAD = re.compile(r"\*reinterpret_cast<const float4\*>\((&\w+\[[^\]]+\])\)")
_LINE_STORE = re.compile(r"\*reinterpret_cast<float4\*>\((&\w+\[[^\]]+\])\) = (.+);")


def cache_hints(load: str, store: str) -> Callable[[str], str]:
    """An edit of generated CUDA: its 16-byte loads through `__<load>` and stores through
    `__<store>` (CUDA's cache-hinted intrinsics; "-" leaves them plain)."""
    def edit(source: str) -> str:
        if load != "-":
            source = _LINE_LOAD.sub(rf"__{load}(reinterpret_cast<const float4*>(\1))", source)
        if store != "-":
            source = _LINE_STORE.sub(rf"__{store}(reinterpret_cast<float4*>(\1), \2);",
                                     source)
        return source
    return edit


def edited_variants(client, x, out, rows: int, lines: int, min_cubes: tuple[int, ...],
                    hints: tuple[str, ...]) -> list[tuple]:
    """The register plans compiled with edited CUDA: `min_cubes_per_sm` and
    `cache_hints` (module docstring)."""
    edits = [(f"min {m} cubes/SM", lambda m=m: min_cubes_per_sm(m)) for m in min_cubes]
    edits += [(pair, lambda pair=pair: edited_cuda(cache_hints(*pair.split("/"))))
              for pair in hints]
    found = []
    for kind in ("cube", "cube_one_barrier"):
        for units, per_unit in softmax.register_plans(lines):
            if units > client.limits.max_units_per_cube:
                continue
            for label, context in edits:
                kernel = cube(launch=True)(softmax.ROW_KERNELS[kind].fn)  # its own compile

                def launch(k=kernel, u=units, p=per_unit):
                    k.launch_unchecked(client, CubeCount(rows), CubeDim(u), x, out, p)
                with context():
                    launch()
                    client.sync()
                name = f"{label} {softmax.describe_plan((kind, units, per_unit))}"
                print(f"  {name}: {registers(kernel)}")
                found.append((name, None, launch))
    return found


def registers(kernel) -> str:
    """Registers and local memory (spills) of `kernel`'s latest launch (PyCUDA's function
    attributes of the executable its launch plan holds)."""
    function = getattr(getattr(kernel._newest_plan, "executable", None), "function", None)
    if not hasattr(function, "num_regs"):
        return "registers unknown"
    return f"{function.num_regs} registers, {function.local_size_bytes} bytes of local memory"


def variants(client, x, out, rows: int, lines: int, min_cubes: tuple[int, ...] = (),
             hints: tuple[str, ...] = ()) -> list[tuple]:
    """(name, plan, launch()) of every cubepy variant for the shape (plan: the
    benchmark's plan, or None for the probe's own kernels)."""
    found = [(f"plan {softmax.describe_plan(plan)}", plan,
              lambda plan=plan: softmax.launch_plan(client, plan, x, out, False))
             for plan in softmax.candidate_plans(client, lines) + [None]]
    found += [(f"expf cube per row in registers, {units} units, {per_unit} lines/unit",
               None, lambda u=units, p=per_unit: softmax_expf.launch_unchecked(
                   client, CubeCount(rows), CubeDim(u), x, out, p))
              for units, per_unit in softmax.register_plans(lines)
              if units <= client.limits.max_units_per_cube]
    found += [(f"16 lines cube per row in registers, {units} units, 16 lines/unit", None,
               lambda u=units: softmax.launch_plan(client, ("cube", u, 16), x, out, False))
              for units in (64, 128, 256, 512) if units * 16 == lines
              and units <= client.limits.max_units_per_cube]
    found += [(f"streamed {cubes} cubes, {units} units, {per_unit} lines/unit", None,
               lambda u=units, p=per_unit, c=cubes: softmax_streamed.launch_unchecked(
                   client, CubeCount(c), CubeDim(u), x, out, p))
              for units, per_unit in softmax.register_plans(lines)
              if 256 <= units <= client.limits.max_units_per_cube and per_unit >= 4
              for cubes in STREAM_CUBES if cubes < rows]
    found += [(f"prefetched, cubes of {r} rows, {units} units, {per_unit} lines/unit", None,
               lambda u=units, p=per_unit, r=r: softmax_prefetched.launch_unchecked(
                   client, CubeCount(-(-rows // r)), CubeDim(u), x, out, p, u))
              for units, per_unit in softmax.register_plans(lines)
              if units <= client.limits.max_units_per_cube
              and lines * 16 <= client.limits.max_shared_bytes
              for r in PREFETCHED_ROWS_PER_CUBE]
    if (min_cubes or hints) and client.runtime == "cuda":
        found += edited_variants(client, x, out, rows, lines, min_cubes, hints)
    return found


def probe_shape(client, rows: int, cols: int, rounds: int, reps: int,
                min_cubes: tuple[int, ...] = (), hints: tuple[str, ...] = ()) -> dict:
    rng = np.random.default_rng(0)
    x_h = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    n = softmax.line_size_for(cols)
    x = client.tensor(x_h).with_line_size(n)
    out = client.zeros((rows, cols), f32).with_line_size(n)
    want = softmax.reference(x_h)
    mine, errors, left_out = [], {}, []
    for name, plan, launch in variants(client, x, out, rows, cols // n, min_cubes, hints):
        if plan is not None and plan[0] == "plane" and not softmax.plane_plan_agrees(
                client, plan, cols, n):
            print(f"  {name}: disagrees with numpy on a few rows, left out")
            left_out.append(name)
            continue
        launch()
        errors[name] = float(np.abs(out.numpy() - want).max())
        if not np.allclose(out.numpy(), want, rtol=1e-4, atol=1e-7):
            print(f"  {name}: WRONG (largest error {errors[name]:.2e}), left out")
            left_out.append(name)
            continue
        mine.append((name, launch))
    others = list(peers.softmax_peers(x_h).items())
    times: dict[str, list[float]] = {name: [] for name, _ in mine + others}
    fastest: dict[str, int] = {name: 0 for name, _ in mine}
    everything = mine + others
    for r in range(rounds):
        order = everything[r % len(everything):] + everything[:r % len(everything)]
        this_round = {}
        for name, fn in order:
            if name in fastest:
                t = cubepy.bench(fn, client=client, warmup=1, reps=reps).median_ms
            else:  # (the peers need torch on a CUDA device)
                t = peers.time_cuda(fn, 1, reps).median_ms
            times[name].append(t)
            this_round[name] = t
        fastest[min((m for m, _ in mine), key=lambda m: this_round[m])] += 1
    triton = statistics.median(times["triton (tutorial)"]) if "triton (tutorial)" in times \
        else None
    print(f"\n{rows} x {cols} (medians of {rounds} rounds of {reps} repetitions, in us)")
    summary = {}
    for name, got in sorted(times.items(), key=lambda kv: statistics.median(kv[1])):
        med = statistics.median(got)
        ratio = triton / med if triton else None
        summary[name] = {"median_ms": med, "min_ms": min(got), "max_ms": max(got),
                         "of_triton": ratio, "fastest_rounds": fastest.get(name)}
        print(f"  {1e3 * med:8.2f}  {1e3 * min(got):8.2f}-{1e3 * max(got):<8.2f}"
              + (f" {100 * ratio:5.1f}% of triton" if ratio else "")
              + (f"  fastest in {fastest[name]}" if name in fastest else "")
              + f"  {name}")
    return {"rows": rows, "cols": cols, "times_ms": times, "summary": summary,
            "max_error": errors, "left_out": left_out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", default="1024,4096,16384")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--runtime", default="cuda", help="cuda; cpu or wgpu to try it out")
    ap.add_argument("--out", default="")
    ap.add_argument("--min-cubes", default="",
                    help="e.g. 2,3: the register plans with __launch_bounds__(units, M)")
    ap.add_argument("--cache-hints", default="",
                    help="e.g. ldcs/stcs,-/stcs: the register plans with cache-hinted lines")
    args = ap.parse_args(argv)
    ap_hints = tuple(h for h in args.cache_hints.split(",") if h)
    min_cubes = tuple(int(m) for m in args.min_cubes.split(",") if m)
    client = cubepy.client(args.runtime)
    results = {"host": describe_host(), "device": client.device_name,
               "rounds": args.rounds, "reps": args.reps,
               "shapes": [probe_shape(client, args.rows, int(c), args.rounds, args.reps,
                                      min_cubes, ap_hints) for c in args.cols.split(",")]}
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
