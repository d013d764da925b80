"""Layer norm forward (f16 or f32 data, f32 statistics): one cube per row.

As in Triton's tutorial, the row is read three times: once for the mean, once for the
variance of `x - mean` (no cancellation, unlike `E[x^2] - E[x]^2`), once to write
`(x - mean) * rstd * weight + bias`. The second and third reads hit L2 on a GPU for rows
of a few hundred KiB. `cube_sum` reduces a value over the cube: `plane_sum` within each
plane, then the planes' partials through shared memory.

When the row splits evenly into at most 8 lines per unit (every size the benchmark's
full tier runs), `layernorm_in_registers` reads it once into a LocalArray and computes
the mean, the variance and the output from the registers: one read and one write of the
row, the traffic of a copy. A row of up to 8 lines per unit that a power-of-two cube
does not split evenly (widths of models such as 1600, 5120 or 12288) is held the same
way by `layernorm_ragged_rows`, whose units skip the lines past the row's end.

`layernorm_plane_rows` gives each row to one plane instead (CUBE_DIM / plane rows per cube,
at most 16 lines per lane, statistics from `plane_sum` alone: no shared memory, no
`sync_cube`), as softmax's `softmax_plane_rows`.

Those kernels read weight and bias whole for every row: at 1024 f32 columns, 8 KiB per
row, as many bytes as the row itself, though from caches. On NVIDIA's Vulkan driver
those reads cost 1-3 us of a 15 us kernel (benchmarks/probe_layernorm_rows.py).
`layernorm_staged_rows` gives each cube several rows, each held in registers by a group
of units (one plane, or whole planes), and stages weight and bias in shared memory once
for them all.

`run` times `candidate_plans` (one plane or one cube per row, and the staged plans) and
the three-pass kernel once per shape, dtype and client on a GPU (three interleaved
rounds, softmax's `choose_plan`) and keeps the fastest median.
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (CUBE_DIM, CUBE_POS, UNIT_POS, Array, Comptime, CubeCount, CubeDim,
                    Float, Line, LocalArray, SharedMemory, Tensor, cube, f32, sync_cube, u32,
                    unroll)
from cubepy import math

from .cube_reduce import cube_sum, group_sum
from .softmax import lines_owned

UNITS = 256


@cube
def line_total(v: Line[f32], size: cubepy.Comptime[int]) -> f32:
    total = v[0]
    for k in unroll(range(1, size)):
        total += v[k]
    return total


@cube
def held_row_stats(held: Array[Line[Float]], per_unit: Comptime[int], width: Comptime[int],
                   cols: u32, eps: f32, group: Comptime[int], plane: Comptime[int],
                   owned: u32):
    """The mean and 1 / sqrt(variance + eps) of a row of `cols` elements whose lines a
    group of units holds (`group_sum`: 0 for the cube), the first `owned` of `per_unit`
    lines of `width` in each unit's `held` (the rest lie past the row's end); the
    variance of `x - mean`, as the three-pass kernel's."""
    s = f32(0.0)
    for k in unroll(range(per_unit)):
        if u32(k) < owned:
            s += line_total(f32(held[k]), width)
    mean = group_sum(s, group, plane) / f32(cols)
    q = f32(0.0)
    for k in unroll(range(per_unit)):
        if u32(k) < owned:
            d = f32(held[k]) - mean
            q += line_total(d * d, width)
    return mean, math.rsqrt(group_sum(q, group, plane) / f32(cols) + eps)


@cube(launch=True)
def layernorm(x: Tensor[Line[Float]], weight: Tensor[Line[Float]], bias: Tensor[Line[Float]],
              y: Tensor[Line[Float]], eps: f32):
    """y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * weight + bias, per row r."""
    width = x.line_size()
    cols = x.shape(1)
    lines = cols // x.line_size()
    base = CUBE_POS * lines
    s = f32(0.0)
    for j in range(UNIT_POS, lines, CUBE_DIM):
        s += line_total(f32(x[base + j]), width)
    mean = cube_sum(s) / f32(cols)
    q = f32(0.0)
    for j in range(UNIT_POS, lines, CUBE_DIM):
        d = f32(x[base + j]) - mean
        q += line_total(d * d, width)
    rstd = math.rsqrt(cube_sum(q) / f32(cols) + eps)
    for j in range(UNIT_POS, lines, CUBE_DIM):
        v = (f32(x[base + j]) - mean) * rstd
        y[base + j] = Float(v * f32(weight[j]) + f32(bias[j]))


@cube
def layernorm_held_row(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                       bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                       base: u32, lane: u32, step: u32, per_unit: Comptime[int],
                       plane: Comptime[int], store: bool, owned: u32):
    """layernorm of the row at line `base`, held in registers: this unit reads its lines
    `lane + k * step` (k < `owned`, at most `per_unit`: the others lie past the row's
    end) once, the units of the row (the cube when `plane` is 0, else this unit's plane)
    combine their sums, and, when `store`, it writes the same lines of y."""
    width = x.line_size()
    cols = x.shape(1)
    held = LocalArray(Line[Float], per_unit, x.line_size())
    for k in unroll(range(per_unit)):
        if u32(k) < owned:
            held[k] = x[base + lane + k * step]
    mean, rstd = held_row_stats(held, per_unit, width, cols, eps, plane, plane, owned)
    if store:
        for k in unroll(range(per_unit)):
            if u32(k) < owned:
                j = lane + k * step
                z = (f32(held[k]) - mean) * rstd
                y[base + j] = Float(z * f32(weight[j]) + f32(bias[j]))


@cube(launch=True)
def layernorm_in_registers(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                           bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                           per_unit: Comptime[int]):
    """layernorm for rows of exactly `per_unit * CUBE_DIM` lines, held in registers."""
    layernorm_held_row(x, weight, bias, y, eps, CUBE_POS * (per_unit * CUBE_DIM), UNIT_POS,
                       CUBE_DIM, per_unit, 0, True, per_unit)


@cube(launch=True)
def layernorm_ragged_rows(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                          bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                          per_unit: Comptime[int]):
    """layernorm for rows of at most `per_unit * CUBE_DIM` lines, one cube per row held
    in registers as `layernorm_in_registers` holds it; a unit reads, and writes, only its
    lines before the row's end (a row of 1600 f32 columns is 400 lines: 128 units take 4,
    or 3 past unit 15)."""
    lines = x.shape(1) // x.line_size()
    layernorm_held_row(x, weight, bias, y, eps, CUBE_POS * lines, UNIT_POS, CUBE_DIM,
                       per_unit, 0, True, lines_owned(lines, UNIT_POS, CUBE_DIM))


@cube(launch=True)
def layernorm_plane_rows(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                         bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                         per_unit: Comptime[int], plane: Comptime[int]):
    """layernorm with one plane per row of exactly `per_unit * plane` lines, held in
    registers: a cube of CUBE_DIM units takes CUBE_DIM // plane rows. `plane` must be the
    PLANE_DIM the kernel runs with; the reductions are plane operations only (no shared
    memory, no sync_cube)."""
    rows = x.shape(0)
    row = CUBE_POS * (CUBE_DIM // plane) + UNIT_POS // plane
    # Planes past the last row read the last row again (every lane stays in the plane
    # operations, in uniform control flow) and store nothing.
    layernorm_held_row(x, weight, bias, y, eps, min(row, rows - 1) * (per_unit * plane),
                       UNIT_POS % plane, plane, per_unit, plane, row < rows, per_unit)


@cube(launch=True)
def layernorm_staged_rows(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                          bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                          per_unit: Comptime[int], group: Comptime[int],
                          plane: Comptime[int]):
    """layernorm with CUBE_DIM // `group` rows per cube, each of exactly `per_unit *
    group` lines held in registers by `group` consecutive units: one plane (`group` ==
    `plane`, the PLANE_DIM the kernel runs with) or whole planes. The cube first stages
    weight and bias in shared memory, read from memory once for all its rows."""
    width = x.line_size()
    rows = x.shape(0)
    cols = x.shape(1)
    weight_s = SharedMemory(Line[Float], per_unit * group, width)
    bias_s = SharedMemory(Line[Float], per_unit * group, width)
    row = CUBE_POS * (CUBE_DIM // group) + UNIT_POS // group
    lane = UNIT_POS % group
    # Groups past the last row read the last row again (every unit stays in the plane
    # operations and barriers) and store nothing.
    base = min(row, rows - 1) * (per_unit * group) + lane
    held = LocalArray(Line[Float], per_unit, width)
    for k in unroll(range(per_unit)):
        held[k] = x[base + k * group]
    # Staged while the row's loads are in flight; the barrier before the stores makes
    # it visible (a plane's reductions have none).
    for i in range(UNIT_POS, per_unit * group, CUBE_DIM):
        weight_s[i] = weight[i]
        bias_s[i] = bias[i]
    mean, rstd = held_row_stats(held, per_unit, width, cols, eps, group, plane,
                                per_unit)
    sync_cube()
    if row < rows:
        for k in unroll(range(per_unit)):
            j = lane + k * group
            z = (f32(held[k]) - mean) * rstd
            y[base + k * group] = Float(z * f32(weight_s[j]) + f32(bias_s[j]))


STAGED_CUBES = (256, 512)  # units per cube of the staged plans
MAX_STAGED_GROUP = 128  # units per row: larger groups were slower in every plan timed


def staged_plans(client, lines: int) -> list[tuple]:
    """("staged", units per cube, lines per unit, units per row) for rows of `lines`
    lines: rows held by one plane or by a register plan's cube of at most
    MAX_STAGED_GROUP units, several rows per cube of STAGED_CUBES units."""
    from .softmax import plane_row_plans, register_plans
    plane = client.limits.plane_dim
    if plane < 1:  # no plane operations: no group to reduce over
        return []
    groups = [(units, per_unit) for units, per_unit in register_plans(lines)
              if units <= MAX_STAGED_GROUP]
    if plane_row_plans(lines, plane):  # a plane holds a row
        groups.append((plane, lines // plane))
    limit = client.limits.max_units_per_cube
    return [("staged", units, per_unit, group)
            for group, per_unit in dict.fromkeys(groups) if group % plane == 0
            for units in STAGED_CUBES if group < units <= limit]


# softmax's plan kinds that layernorm has no kernel for
SOFTMAX_ONLY_KINDS = ("ragged_plane", "cube_one_barrier")


def own_plans(softmax_plans: list[tuple]) -> list[tuple]:
    """The softmax plans (softmax.candidate_plans) layernorm has a kernel for: all but
    SOFTMAX_ONLY_KINDS."""
    return [plan for plan in softmax_plans if plan[0] not in SOFTMAX_ONLY_KINDS]


def candidate_plans(client, lines: int) -> list[tuple]:
    """softmax.candidate_plans (one plane or one cube per row, a cube's rows split
    evenly or not: `layernorm_ragged_rows`) that layernorm has kernels for (`own_plans`),
    then `staged_plans`."""
    from .softmax import candidate_plans as row_plans
    return own_plans(row_plans(client, lines)) + staged_plans(client, lines)


def rows_per_cube(client, plan: tuple) -> int:
    """How many rows one cube of `plan` takes."""
    if plan[0] == "staged":
        return plan[1] // plan[3]
    return plan[1] // client.limits.plane_dim if plan[0] == "plane" else 1


def describe_plan(plan: tuple | None) -> str:
    """A plan in words, for benchmark reports."""
    from .softmax import describe_plan as describe_row_plan
    if plan is None or plan[0] != "staged":
        return describe_row_plan(plan)
    _, units, per_unit, group = plan
    return (f"{units // group} rows per cube, weight and bias staged, {units} units, "
            f"{group} units x {per_unit} lines per row")


_CHOSEN: dict = {}  # (client id, rows, lines, dtype) -> the fastest plan


def launch_plan(client, plan: tuple | None, args: tuple, checked: bool = True) -> None:
    """Runs layernorm on args = (x, weight, bias, y, eps), line tensors, with one plan
    of `candidate_plans` (None: the three-pass kernel on UNITS units)."""
    from .softmax import plane_rows_cubes
    rows = args[0].shape[0]
    if plan is None:
        launch = layernorm.launch if checked else layernorm.launch_unchecked
        launch(client, CubeCount(rows), CubeDim(UNITS), *args)
        return
    kind, units, per_unit = plan[:3]
    if kind == "staged":
        launch = layernorm_staged_rows.launch if checked else \
            layernorm_staged_rows.launch_unchecked
        launch(client, CubeCount(-(-rows // rows_per_cube(client, plan))), CubeDim(units),
               *args, per_unit, plan[3], client.limits.plane_dim)
        return
    if kind == "plane":
        plane = client.limits.plane_dim
        launch = layernorm_plane_rows.launch if checked else \
            layernorm_plane_rows.launch_unchecked
        launch(client, CubeCount(plane_rows_cubes(rows, units, plane)), CubeDim(units),
               *args, per_unit, plane)
        return
    # one cube per row (a kind without a kernel here fails, not runs another's plan)
    kernel = {"cube": layernorm_in_registers, "ragged": layernorm_ragged_rows}[kind]
    launch = kernel.launch if checked else kernel.launch_unchecked
    launch(client, CubeCount(rows), CubeDim(units), *args, per_unit)


def plane_plan_agrees(client, plan: tuple, x) -> bool:
    """Whether a plane-per-row or staged plan gives numpy's layernorm on a few rows
    shaped like the line tensor x (two cubes, the second partly empty): as softmax's
    plane_plan_agrees, a driver running another subgroup size than the client's plane
    size fails here."""
    rows, cols = rows_per_cube(client, plan) + 1, x.shape[1]
    rng = np.random.default_rng(0)
    x_h, w_h, b_h = (rng.standard_normal(shape).astype(x.dtype.numpy)
                     for shape in ((rows, cols), cols, cols))
    y = client.zeros((rows, cols), x.dtype)
    n = x.line_size
    try:
        launch_plan(client, plan, tuple(client.tensor(a).with_line_size(n)
                                        for a in (x_h, w_h, b_h)) +
                    (y.with_line_size(n), 1e-5))
        tol = 1e-4 if x.dtype == f32 else 2e-2
        return bool(np.allclose(y.numpy().astype(np.float64),
                                reference(x_h, w_h, b_h).astype(np.float64),
                                rtol=tol, atol=tol))
    except cubepy.CubepyError:
        return False


def register_plan(client, rows: int, lines: int, args: tuple) -> tuple | None:
    """The plan for this shape (`candidate_plans`), or None for the three-pass kernel:
    softmax's `choose_plan` picks it."""
    from .softmax import choose_plan
    return choose_plan(_CHOSEN, (id(client), rows, lines, args[0].dtype), client,
                       candidate_plans(client, lines),
                       lambda plan: launch_plan(client, plan, args, False),
                       lambda plan: plane_plan_agrees(client, plan, args[0]))


THREE_PASS = "three-pass (cube per row)"  # the plan None, in words


def _key(client, x) -> tuple:
    rows, cols = x.shape
    return (id(client), rows, cols // line_size_for(cols, x.dtype), x.dtype)


def chosen_plan(client, x) -> str:
    """The plan `run` takes for x on `client`, in words (after a first run)."""
    from .softmax import plan_in_words
    return plan_in_words(_CHOSEN, _key(client, x), client,
                         candidate_plans(client, _key(client, x)[2]), THREE_PASS,
                         describe_plan)


def plan_times(client, x) -> dict[str, float]:
    """What `run` measured of each plan for x on `client` ({} where it timed none)."""
    from .softmax import timed_plans
    return timed_plans(_key(client, x), THREE_PASS, describe_plan)


def line_size_for(cols: int, dtype) -> int:
    """The widest line of at most 16 bytes dividing `cols`: one vector access per line."""
    widest = 16 // dtype.itemsize
    for n in (8, 4, 2):
        if n <= widest and cols % n == 0:
            return n
    return 1


def run(client, x, weight, bias, y, eps: float = 1e-5, checked: bool = True,
        units: int = UNITS) -> None:
    """y = layer_norm(x) over the last axis of the 2-D tensor x."""
    rows, cols = x.shape
    n = line_size_for(cols, x.dtype)
    args = (x.with_line_size(n), weight.with_line_size(n), bias.with_line_size(n),
            y.with_line_size(n), eps)
    if units != UNITS:
        launch = layernorm.launch if checked else layernorm.launch_unchecked
        launch(client, CubeCount(rows), CubeDim(units), *args)
        return
    launch_plan(client, register_plan(client, rows, cols // n, args), args, checked)


def reference(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
              eps: float = 1e-5) -> np.ndarray:
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + eps) * weight + bias).astype(x.dtype)


def example(client, rows: int = 24, cols: int = 1000, dtype=f32, seed: int = 0) -> None:
    """Runs the kernel at a small size and checks it against numpy (raises if wrong)."""
    rng = np.random.default_rng(seed)
    np_dtype = dtype.numpy
    x_h = (rng.standard_normal((rows, cols)) * 3 + 1).astype(np_dtype)
    w_h = rng.standard_normal(cols).astype(np_dtype)
    b_h = rng.standard_normal(cols).astype(np_dtype)
    x, w, b = client.tensor(x_h), client.tensor(w_h), client.tensor(b_h)
    y = client.zeros((rows, cols), dtype)
    run(client, x, w, b, y)
    tol = 1e-4 if dtype == f32 else 2e-2
    np.testing.assert_allclose(y.numpy().astype(np.float64),
                               reference(x_h, w_h, b_h).astype(np.float64),
                               rtol=tol, atol=tol)


if __name__ == "__main__":
    example(cubepy.client())
    print("layernorm: OK")
