"""Row softmax (f32): one cube per row, an online max/sum pass, then a normalising pass.

The first pass reads the row once, keeping per unit a running maximum `m` and a sum `s`
of `exp(x - m)` (rescaled whenever `m` grows: the "online softmax"). Plane reductions
combine the units of each plane, shared memory the planes of the cube. The second pass
reads the row again (from L2 on a GPU for rows up to a few hundred KiB) and writes
`exp(x - max) / sum`. Each unit reads lines of `x` (line size chosen at launch, 4 when
the row allows it) so the exponentials of a line share one rescale.

When the row splits evenly into at most 8 lines per unit (every size the benchmark
runs), `softmax_in_registers` reads it once into a LocalArray (registers, as Triton's
tutorial keeps its block): max, exponentials and sum come from the registers, and the
row is written once, so the kernel moves the bytes of a copy. A row of up to 8 lines per
unit that the units do not split evenly (1000 columns: 250 lines) is held the same way
by `softmax_ragged_rows`, whose units skip the lines past the row's end. Longer rows take
the online kernel above, which reads the row twice (the second read hits L2).

`softmax_in_registers_one_barrier` holds the row the same way with one cube barrier per
row instead of four: each unit's exponentials are taken against its own maximum and
rescaled once one reduction of (maximum, sum) pairs has given the row's. At 4096 x 16384
on an H200 it was the fastest plan in all 19 rounds of three runs, by 0.4-1.0 us
(0.3-0.7%); at 4096 columns the plain plan was (`benchmarks/results/softmax_streamed_h200.md`).

Every exponential is `exp2(x * log2(e) - shift)` with `shift = max * log2(e)`: one
multiply-add and the hardware's base-2 exponential per element, where CUDA's `expf`
takes several instructions (Triton's `exp` is lowered the same way). The exponentials are
what a cube computes between its loads and its stores. On an H200 the change took the
4096 x 4096 register plan from 38.1 to 36.7 us in one run and from 37.9 to 37.1 in
another; Triton's kernel took 36.6 and 36.5 (`benchmarks/probe_softmax_plans.py`,
`benchmarks/results/softmax_exp2_h200.md`).

For short rows, `softmax_plane_rows` gives each row to one plane instead of one cube: a
cube of CUBE_DIM units takes CUBE_DIM / plane rows, each lane holds `lines / plane` lines
(at most 16) in registers, and `plane_max` / `plane_sum` give the row's maximum and sum,
with no shared memory and no `sync_cube` (each cube's barriers cost more under Vulkan
than under CUDA); `softmax_ragged_plane_rows` does the same for a row the plane does not
split evenly (1000 or 1600 columns), each lane skipping the lines past the row's end.
`plane` is the client's plane size (`limits.plane_dim`). `run` times every candidate
plan (`candidate_plans`) and the online kernel once per shape and client on a GPU, in
three interleaved rounds, and keeps the fastest median (after checking each plane plan
on a few rows: `plane_plan_agrees`); the cpu runtime takes the first candidate.
"""
from __future__ import annotations

import statistics
from typing import Callable

import numpy as np

import cubepy
from cubepy import (CUBE_DIM, CUBE_POS, PLANE_DIM, UNIT_POS, UNIT_POS_PLANE, Array,
                    Comptime, CubeCount, CubeDim, Line, LocalArray, SharedMemory, Tensor, cube,
                    f32, sync_cube, u32, unroll)
from cubepy import math

from .cube_reduce import MAX_PLANES, row_max, row_sum


@cube
def line_max(v: Line[f32], size: cubepy.Comptime[int]) -> f32:
    best = v[0]
    for k in unroll(range(1, size)):
        best = max(best, v[k])
    return best


@cube
def line_sum(v: Line[f32], size: cubepy.Comptime[int]) -> f32:
    total = v[0]
    for k in unroll(range(1, size)):
        total += v[k]
    return total


LOG2E = 1.4426950408889634  # log2(e): exp(x - m) = exp2(x * LOG2E - m * LOG2E)


@cube
def exp_shifted(v: Line[f32], shift: f32) -> Line[f32]:
    """exp(v - m) for each element of v, given `shift` = m * LOG2E."""
    return math.exp2(v * f32(LOG2E) - shift)


@cube
def cube_max_sum(m: f32, s: f32, parity: u32) -> tuple[f32, f32]:
    """The cube's largest `m`, and the sum of every unit's `s * exp(m - that)`: each
    plane combines its units, then every unit combines the planes' partials, through
    one barrier. The partials go to one of two shared sets, `parity` (0 or 1): a kernel
    calling this once per row alternates them, so the next call's writes cannot reach
    a set some unit still reads (a unit writing set p again has passed the barrier of
    the call between, which every unit reaches only after reading set p)."""
    top_p = cubepy.plane_max(m)
    sum_p = cubepy.plane_sum(s * math.exp2((m - top_p) * f32(LOG2E)))
    parts_m = SharedMemory(f32, 2 * MAX_PLANES)
    parts_s = SharedMemory(f32, 2 * MAX_PLANES)
    at = parity * MAX_PLANES
    if UNIT_POS_PLANE == 0:
        parts_m[at + UNIT_POS // PLANE_DIM] = top_p
        parts_s[at + UNIT_POS // PLANE_DIM] = sum_p
    sync_cube()
    top = parts_m[at]
    for p in range(1, CUBE_DIM // PLANE_DIM):
        top = max(top, parts_m[at + p])
    total = f32(0.0)
    for p in range(CUBE_DIM // PLANE_DIM):
        total += parts_s[at + p] * math.exp2((parts_m[at + p] - top) * f32(LOG2E))
    return top, total


@cubepy.autotune(configs=[{"cube_dim": CubeDim(256)}, {"cube_dim": CubeDim(128)},
                          {"cube_dim": CubeDim(512)}, {"cube_dim": CubeDim(1024)}],
                 key=["x"])
@cube(launch=True)
def softmax(x: Tensor[Line[f32]], out: Tensor[Line[f32]]):
    """out[r, :] = softmax(x[r, :]) for each row r (one cube per row)."""
    width = x.line_size()
    lines = x.shape(1) // x.line_size()
    base = CUBE_POS * lines
    m = f32(-3.0e38)
    s = f32(0.0)
    for j in range(UNIT_POS, lines, CUBE_DIM):
        v = x[base + j]
        m_new = max(m, line_max(v, width))
        s = s * math.exp2((m - m_new) * f32(LOG2E)) + \
            line_sum(exp_shifted(v, m_new * f32(LOG2E)), width)
        m = m_new
    row_max, row_sum = cube_max_sum(m, s, 0)
    scale = 1.0 / row_sum
    shift = row_max * f32(LOG2E)
    for j in range(UNIT_POS, lines, CUBE_DIM):
        out[base + j] = exp_shifted(x[base + j], shift) * scale


@cube
def softmax_held_row(x: Tensor[Line[f32]], out: Tensor[Line[f32]], first: u32, step: u32,
                     per_unit: Comptime[int], plane: Comptime[int], store: bool, owned: u32):
    """Softmax of a row held in registers: this unit reads lines `first + k * step` (k <
    `owned`, at most `per_unit`: the others lie past the row's end) of x once, the units
    of the row (the cube when `plane` is 0, else this unit's plane) combine their maxima
    and sums, and, when `store`, it writes the same lines of out."""
    width = x.line_size()
    held = LocalArray(Line[f32], per_unit, x.line_size())
    m = f32(-3.0e38)
    for k in unroll(range(per_unit)):
        if u32(k) < owned:
            v = x[first + k * step]
            held[k] = v
            m = max(m, line_max(v, width))
    shift = row_max(m, plane) * f32(LOG2E)
    s = f32(0.0)
    for k in unroll(range(per_unit)):
        if u32(k) < owned:
            e = exp_shifted(held[k], shift)
            held[k] = e
            s += line_sum(e, width)
    scale = 1.0 / row_sum(s, plane)
    if store:
        for k in unroll(range(per_unit)):
            if u32(k) < owned:
                out[first + k * step] = held[k] * scale


@cube
def lines_owned(lines: u32, lane: u32, step: u32) -> u32:
    """How many of a row's `lines` lines the unit at `lane` of `step` units holds when
    each takes lines `lane`, `lane + step`, ... (none for a lane past a short row)."""
    return (lines + step - 1 - min(lane, lines)) // step


@cube(launch=True)
def softmax_in_registers(x: Tensor[Line[f32]], out: Tensor[Line[f32]],
                         per_unit: Comptime[int]):
    """out[r, :] = softmax(x[r, :]), one cube per row of exactly
    `per_unit * CUBE_DIM` lines, held in registers between the passes."""
    softmax_held_row(x, out, CUBE_POS * (per_unit * CUBE_DIM) + UNIT_POS, CUBE_DIM,
                     per_unit, 0, True, per_unit)


@cube
def write_row_one_barrier(out: Tensor[Line[f32]], first: u32, held: Array[Line[f32]],
                          parity: u32, per_unit: Comptime[int], width: Comptime[int]):
    """Writes the softmax of a row of which this unit holds lines `first + k * CUBE_DIM`
    (k < `per_unit`) in `held`, with one cube barrier: each unit takes its exponentials
    against its own maximum, one reduction of (maximum, sum) pairs (`cube_max_sum`, its
    partials in set `parity`) gives the row's, and each unit rescales its exponentials
    by exp(own max - row max) / sum as it stores them."""
    m = f32(-3.0e38)
    for k in unroll(range(per_unit)):
        m = max(m, line_max(held[k], width))
    shift = m * f32(LOG2E)
    s = f32(0.0)
    for k in unroll(range(per_unit)):
        e = exp_shifted(held[k], shift)
        held[k] = e
        s += line_sum(e, width)
    top, total = cube_max_sum(m, s, parity)
    scale = math.exp2((m - top) * f32(LOG2E)) / total
    for k in unroll(range(per_unit)):
        out[first + k * CUBE_DIM] = held[k] * scale


@cube(launch=True)
def softmax_in_registers_one_barrier(x: Tensor[Line[f32]], out: Tensor[Line[f32]],
                                     per_unit: Comptime[int]):
    """`softmax_in_registers` with one cube barrier where it has four (two reductions of
    two each; `write_row_one_barrier`): one more exp2 per unit, three barriers fewer per
    row."""
    first = CUBE_POS * (per_unit * CUBE_DIM) + UNIT_POS
    held = LocalArray(Line[f32], per_unit, x.line_size())
    for k in unroll(range(per_unit)):
        held[k] = x[first + k * CUBE_DIM]
    write_row_one_barrier(out, first, held, 0, per_unit, x.line_size())


@cube(launch=True)
def softmax_ragged_rows(x: Tensor[Line[f32]], out: Tensor[Line[f32]],
                        per_unit: Comptime[int]):
    """out[r, :] = softmax(x[r, :]), one cube per row of at most `per_unit * CUBE_DIM`
    lines, held in registers as `softmax_in_registers` holds a row; a unit reads, and
    writes, only its lines before the row's end (a row of 1000 columns is 250 lines:
    64 units take 4 each, and 6 units only 3)."""
    lines = x.shape(1) // x.line_size()
    softmax_held_row(x, out, CUBE_POS * lines + UNIT_POS, CUBE_DIM, per_unit, 0, True,
                     lines_owned(lines, UNIT_POS, CUBE_DIM))


@cube(launch=True)
def softmax_plane_rows(x: Tensor[Line[f32]], out: Tensor[Line[f32]],
                       per_unit: Comptime[int], plane: Comptime[int]):
    """out[r, :] = softmax(x[r, :]), one plane per row of exactly `per_unit * plane`
    lines: a cube of CUBE_DIM units takes CUBE_DIM // plane rows. `plane` must be the
    PLANE_DIM the kernel runs with; the reductions are plane operations only (no shared
    memory, no sync_cube)."""
    rows = x.shape(0)
    row = CUBE_POS * (CUBE_DIM // plane) + UNIT_POS // plane
    # Planes past the last row read the last row again (every lane stays in the plane
    # operations, in uniform control flow) and store nothing.
    first = min(row, rows - 1) * (per_unit * plane) + UNIT_POS % plane
    softmax_held_row(x, out, first, plane, per_unit, plane, row < rows, per_unit)


@cube(launch=True)
def softmax_ragged_plane_rows(x: Tensor[Line[f32]], out: Tensor[Line[f32]],
                              per_unit: Comptime[int], plane: Comptime[int]):
    """`softmax_plane_rows` for rows of at most `per_unit * plane` lines that the plane
    does not split evenly: a lane reads, and writes, only its lines before the row's end
    (a row of 1600 columns is 400 lines: 16 lanes take 13, the others 12)."""
    rows = x.shape(0)
    lines = x.shape(1) // x.line_size()
    row = CUBE_POS * (CUBE_DIM // plane) + UNIT_POS // plane
    lane = UNIT_POS % plane
    softmax_held_row(x, out, min(row, rows - 1) * lines + lane, plane, per_unit, plane,
                     row < rows, lines_owned(lines, lane, plane))


MAX_PLANE_LINES = 16  # lines per unit a plane-per-row plan holds in registers at most
# The kernel of each plan kind (`candidate_plans`); the plane-per-row kinds are launched
# with the client's plane size.
ROW_KERNELS = {"plane": softmax_plane_rows, "ragged_plane": softmax_ragged_plane_rows,
               "cube": softmax_in_registers, "cube_one_barrier": softmax_in_registers_one_barrier,
               "ragged": softmax_ragged_rows}
PLANE_ROW_KINDS = ("plane", "ragged_plane")


def register_plans(lines: int) -> list[tuple[int, int]]:
    """Every (units per cube, lines per unit) holding a row of `lines` lines in
    registers: a power-of-two cube of 64 to 1024 units, at most 8 lines per unit (5 for
    the 1280 lines of 5120 columns)."""
    return [(lines // p, p) for p in (4, 2, 8, 1, 3, 5, 6, 7)
            if lines % p == 0 and 64 <= lines // p <= 1024
            and (lines // p) & (lines // p - 1) == 0]


def ragged_plans(lines: int) -> list[tuple[int, int]]:
    """Every (units per cube, lines per unit) holding a row of `lines` lines in
    registers that no `register_plans` split holds: a power-of-two cube of 64 to 1024
    units, none idle, not dividing `lines`, each unit at most 8 lines (its last one
    maybe past the row's end: `softmax_ragged_rows`)."""
    return [(units, -(-lines // units)) for units in (64, 128, 256, 512, 1024)
            if units <= lines and lines % units and -(-lines // units) <= 8]


def plane_row_plans(lines: int, plane: int, max_units: int = 1024,
                    max_lines: int = MAX_PLANE_LINES) -> list[tuple[int, int]]:
    """Every (units per cube, lines per unit) where one plane of `plane` units holds a
    row of `lines` lines: cubes of 64, 128 or 256 units (at least one plane, at most
    `max_units`), at most `max_lines` lines per unit; none when `lines` is not a
    multiple of `plane`."""
    if plane < 1 or lines % plane or lines // plane > max_lines:
        return []
    return _plane_cubes(lines // plane, plane, max_units)


def ragged_plane_plans(lines: int, plane: int, max_units: int = 1024) -> list[tuple[int, int]]:
    """Every (units per cube, lines per unit) where one plane of `plane` units holds a
    row of `lines` lines it does not split evenly (`softmax_ragged_plane_rows`): as
    `plane_row_plans`, each lane at most MAX_PLANE_LINES lines, its last maybe past the
    row's end."""
    if plane < 1 or lines % plane == 0 or -(-lines // plane) > MAX_PLANE_LINES:
        return []
    return _plane_cubes(-(-lines // plane), plane, max_units)


def _plane_cubes(per_unit: int, plane: int, max_units: int) -> list[tuple[int, int]]:
    """(units per cube, `per_unit`) for the cubes of 64, 128 or 256 units (at least one
    plane, at most `max_units`) a plane-per-row plan runs with."""
    return [(units, per_unit) for units in (64, 128, 256)
            if units % plane == 0 and units <= max_units]


def plane_rows_cubes(rows: int, units: int, plane: int) -> int:
    """Cubes of `units` units covering `rows` rows, one plane per row."""
    rows_per_cube = units // plane
    return (rows + rows_per_cube - 1) // rows_per_cube


def candidate_plans(client, lines: int) -> list[tuple]:
    """The plans for rows of `lines` lines on `client`: ("plane", units, per_unit) for
    one plane per row, ("ragged_plane", ...) for one plane per row whose lanes do not
    split it evenly, ("cube", units, per_unit) for one cube per row in registers, the
    same with one barrier ("cube_one_barrier"), ("ragged", units, per_unit) for one cube
    per row in registers whose units do not split the row evenly; the online kernel
    (None) is the last resort, not listed."""
    limit = client.limits.max_units_per_cube
    plane = client.limits.plane_dim
    in_registers = [(u, p) for u, p in register_plans(lines) if u <= limit]
    return ([("plane", u, p) for u, p in plane_row_plans(lines, plane, limit)] +
            [("ragged_plane", u, p) for u, p in ragged_plane_plans(lines, plane, limit)] +
            [("cube", u, p) for u, p in in_registers] +
            [("cube_one_barrier", u, p) for u, p in in_registers] +
            [("ragged", u, p) for u, p in ragged_plans(lines) if u <= limit])


_CHOSEN: dict = {}  # (client id, rows, lines) -> the fastest plan measured


def launch_plan(client, plan: tuple | None, x, out, checked: bool = True) -> None:
    """Runs softmax over the line tensors x, out with one plan of `candidate_plans`
    (None: the autotuned online kernel)."""
    rows = x.shape[0]
    if plan is None:
        launch = softmax.launch if checked else softmax.launch_unchecked
        launch(client, CubeCount(rows), x, out)
        return
    kind, units, per_unit = plan
    kernel = ROW_KERNELS[kind]
    launch = kernel.launch if checked else kernel.launch_unchecked
    if kind in PLANE_ROW_KINDS:
        plane = client.limits.plane_dim
        launch(client, CubeCount(plane_rows_cubes(rows, units, plane)), CubeDim(units),
               x, out, per_unit, plane)
    else:
        launch(client, CubeCount(rows), CubeDim(units), x, out, per_unit)


def plane_plan_agrees(client, plan: tuple, cols: int, line_size: int) -> bool:
    """Whether a plane-per-row plan gives numpy's softmax on a few rows of `cols`
    columns (two cubes, the second partly empty). The kernel relies on PLANE_DIM being
    the client's plane size; a driver choosing another subgroup size for this pipeline
    (Vulkan allows it) fails here, and the plan is no candidate."""
    _, units, _ = plan
    rows = units // client.limits.plane_dim + 1
    x_h = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = client.zeros((rows, cols), f32)
    try:
        launch_plan(client, plan, client.tensor(x_h).with_line_size(line_size),
                    out.with_line_size(line_size))
        return bool(np.allclose(out.numpy(), reference(x_h), rtol=1e-4, atol=1e-7))
    except cubepy.CubepyError:
        return False


def describe_plan(plan: tuple | None) -> str:
    """A plan in words, for benchmark reports."""
    if plan is None:
        return "online (cube per row)"
    kind, units, per_unit = plan
    most = "at most " if kind.startswith("ragged") else ""
    if kind in PLANE_ROW_KINDS:
        return f"plane per row, {units} units, {most}{per_unit} lines/unit"
    barrier = ", one barrier" if kind == "cube_one_barrier" else ""
    return f"cube per row in registers{barrier}, {units} units, {most}{per_unit} lines/unit"


# Rounds of timings `choose_plan` takes the median of. The best plans are often within
# 1-2% of each other, about the spread of one timing. In nine rounds, the plan fastest
# over all nine won only 6 and 7 of the single rounds (softmax 4096 x 4096 on an H200,
# two runs, `benchmarks/results/softmax_exp2_h200.md`).
CHOICE_ROUNDS = 3
# choose_plan's measurements: memo key -> {plan: median ms over the rounds}, which the
# benchmark records beside the plan it took (`timed_plans`).
CHOICE_TIMES: dict = {}
# plan kinds whose kernels hold for any plane size
PLANE_SIZE_FREE = tuple(kind for kind in ROW_KERNELS if kind not in PLANE_ROW_KINDS)


def choose_plan(memo: dict, key: tuple, client, plans: list, launch: Callable,
                agrees: Callable) -> tuple | None:
    """`memo[key]`, once set to the fastest of `plans` and None (the kernel for any row),
    each run by `launch(plan)`: on a GPU timed in CHOICE_ROUNDS interleaved rounds and
    ranked by its median (cubepy.bench, a cold L2 as the benchmark times them: a block
    of rows held in L2 ranks the plans differently), a plan relying on the client's
    plane size (every kind but those of PLANE_SIZE_FREE, whose kernels read PLANE_DIM as
    they run) only once `agrees(plan)`, a plan the device cannot run skipped; on the
    cpu runtime the first plan."""
    if not plans or client.runtime == "cpu":
        return plans[0] if plans else None
    if key not in memo:
        times: dict = {plan: [] for plan in plans + [None]
                       if plan is None or plan[0] in PLANE_SIZE_FREE or agrees(plan)}
        for _ in range(CHOICE_ROUNDS):
            for plan in list(times):
                try:
                    times[plan].append(cubepy.bench(launch, plan, client=client,
                                                    warmup=1, reps=10).median_ms)
                except cubepy.CubepyError:  # a plan this device cannot run: no candidate
                    del times[plan]
        CHOICE_TIMES[key] = {plan: statistics.median(t) for plan, t in times.items()}
        memo[key] = min(times, key=lambda plan: CHOICE_TIMES[key][plan])
    return memo[key]


def register_plan(client, rows: int, lines: int, x, out) -> tuple | None:
    """The plan for this shape (see `candidate_plans`), or None for the online kernel:
    `choose_plan`'s pick (at 16384 columns the register kernel's 1024-unit cubes lose to
    the online one on an H200)."""
    return choose_plan(_CHOSEN, (id(client), rows, lines), client,
                       candidate_plans(client, lines),
                       lambda plan: launch_plan(client, plan, x, out, False),
                       lambda plan: plane_plan_agrees(client, plan, x.shape[1],
                                                      x.line_size))


def line_size_for(cols: int) -> int:
    return 4 if cols % 4 == 0 else (2 if cols % 2 == 0 else 1)


def run(client, x, out, checked: bool = True, config: dict | None = None) -> None:
    """out = softmax(x) over the last axis of the 2-D f32 tensors x and out."""
    rows, cols = x.shape
    n = line_size_for(cols)
    xl, ol = x.with_line_size(n), out.with_line_size(n)
    if config is not None:
        launch = softmax.kernel.launch if checked else softmax.kernel.launch_unchecked
        launch(client, CubeCount(rows), config["cube_dim"], xl, ol)
        return
    launch_plan(client, register_plan(client, rows, cols // n, xl, ol), xl, ol, checked)


def plan_in_words(memo: dict, key: tuple, client, plans: list, fallback: str,
                  describe: Callable[[tuple], str] = describe_plan) -> str:
    """The plan `choose_plan` keeps in `memo[key]` among `plans`, in words (`describe`;
    `fallback` for None; "" while a GPU has not chosen yet; on the cpu runtime, which
    chooses the first plan, that one)."""
    if client.runtime != "cpu" and key not in memo:
        return ""
    plan = memo.get(key, plans[0] if plans else None)
    return fallback if plan is None else describe(plan)


def timed_plans(key: tuple, fallback: str,
                describe: Callable[[tuple], str] = describe_plan) -> dict[str, float]:
    """{plan in words: median ms} as `choose_plan` measured them for `key` (empty when
    it timed none: the cpu runtime, or not chosen yet)."""
    return {fallback if plan is None else describe(plan): ms
            for plan, ms in CHOICE_TIMES.get(key, {}).items()}


def _key(client, x) -> tuple:
    rows, cols = x.shape
    return (id(client), rows, cols // line_size_for(cols))


def chosen_plan(client, x) -> str:
    """The plan `run` takes for x on `client`, in words (after a first run)."""
    return plan_in_words(_CHOSEN, _key(client, x), client,
                         candidate_plans(client, _key(client, x)[2]),
                         describe_plan(None))


def plan_times(client, x) -> dict[str, float]:
    """What `run` measured of each plan for x on `client` ({} where it timed none)."""
    return timed_plans(_key(client, x), describe_plan(None))


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def example(client, rows: int = 24, cols: int = 1000, seed: int = 0,
            config: dict | None = None) -> None:
    """Runs the kernel at a small size and checks it against numpy (raises if wrong)."""
    rng = np.random.default_rng(seed)
    x_h = (rng.standard_normal((rows, cols)) * 4).astype(np.float32)
    x, out = client.tensor(x_h), client.zeros((rows, cols), f32)
    run(client, x, out, config=config)
    np.testing.assert_allclose(out.numpy(), reference(x_h), rtol=1e-4, atol=1e-7)


if __name__ == "__main__":
    example(cubepy.client())
    print("softmax: OK")
