"""Layernorm on short rows: where the time goes, on each GPU runtime present.

    python benchmarks/probe_layernorm_rows.py [--rows 4096] [--cols 1024]
        [--dtype f32] [--reps 30] [--runtimes cuda,wgpu] [--out FILE.json]

At 4096 x 1024 f32 the benchmark's layernorm ran on wgpu at 75-78% of its CUDA time
with one row per cube or per plane, where softmax of the same shape and plans runs at
83% and at the speed of a raw wgpu-py copy of its bytes (docs/PERFORMANCE.md, "wgpu
against CUDA"). What layernorm does beyond softmax is read weight and bias: each cube
of those plans reads both whole (8 KiB at 1024 f32 columns) for its row, 32 MiB over
the 4096 rows, as much as the rows themselves, though from caches. This probe times,
through `cubepy.bench` (a cold L2, as the benchmark):

- `plan ...`: every plan the benchmark's layernorm chooses from (its own kernels),
  among them the staged plans: a cube takes several rows at once, each held in
  registers by a group of units, and stages weight and bias in shared memory once for
  them all;
- `no affine`: the register plans without weight and bias (y = normalised x), the
  same traffic to memory less those reads: what they cost (the block kernel below with
  one row per cube and no weight or bias);
- `block B`: a cube takes B consecutive rows one after the other, each held in
  registers as `cube` plans do, after reading its lines of weight and bias once into
  registers for the block;
- `walk R`: each plane normalises R consecutive rows in turn (a row's lines held by the
  plane's lanes, as the plane plans do), its lanes' lines of weight and bias read once
  into registers for all R, the next row's loads issued before the current row is
  reduced: weight and bias read once per R rows with no shared memory or barrier (the
  staged plans need both);
- `softmax`: the softmax register plan of the same shape, for reference;
- on wgpu, the raw wgpu-py copy of the same bytes (benchmarks/wgpu_copy.py).

Every kernel's output is checked against numpy (largest absolute error); a variant
the device cannot launch is printed and listed under "failed" in the JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cubepy  # noqa: E402
from cubepy import (CUBE_DIM, CUBE_POS, UNIT_POS, Comptime, CubeCount, CubeDim,  # noqa: E402
                    Float, Line, LocalArray, Tensor, cube, f32, math, unroll)
from benchmarks.kernels import layernorm, softmax  # noqa: E402
from benchmarks.host import describe_host, present_clients  # noqa: E402
from benchmarks.kernels.cube_reduce import cube_sum  # noqa: E402
from benchmarks.kernels.layernorm import line_total  # noqa: E402

EPS = 1e-5


@cube(launch=True)
def layernorm_block(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                    bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                    per_unit: Comptime[int], block: Comptime[int], affine: Comptime[bool]):
    """layernorm of `block` consecutive rows of `per_unit * CUBE_DIM` lines per cube,
    each held in registers, weight and bias read once for the block; without them (y =
    normalised x) unless `affine`."""
    width = x.line_size()
    cols = x.shape(1)
    w = LocalArray(Line[Float], per_unit, width)
    b = LocalArray(Line[Float], per_unit, width)
    held = LocalArray(Line[Float], per_unit, width)
    if affine:
        for k in unroll(range(per_unit)):
            w[k] = weight[UNIT_POS + k * CUBE_DIM]
            b[k] = bias[UNIT_POS + k * CUBE_DIM]
    for r in range(block):
        base = (CUBE_POS * block + r) * (per_unit * CUBE_DIM) + UNIT_POS
        s = f32(0.0)
        for k in unroll(range(per_unit)):
            v = x[base + k * CUBE_DIM]
            held[k] = v
            s += line_total(f32(v), width)
        mean = cube_sum(s) / f32(cols)
        q = f32(0.0)
        for k in unroll(range(per_unit)):
            d = f32(held[k]) - mean
            q += line_total(d * d, width)
        rstd = math.rsqrt(cube_sum(q) / f32(cols) + eps)
        for k in unroll(range(per_unit)):
            z = (f32(held[k]) - mean) * rstd
            if affine:
                z = z * f32(w[k]) + f32(b[k])
            y[base + k * CUBE_DIM] = Float(z)


@cube(launch=True)
def layernorm_plane_walk(x: Tensor[Line[Float]], weight: Tensor[Line[Float]],
                         bias: Tensor[Line[Float]], y: Tensor[Line[Float]], eps: f32,
                         per_unit: Comptime[int], plane: Comptime[int],
                         walk: Comptime[int]):
    """layernorm of `walk` consecutive rows of `per_unit * plane` lines per plane (`plane`
    the PLANE_DIM it runs with), one row at a time, each held in registers; this lane's
    lines of weight and bias are read once, and row r + 1 is loaded before row r is
    reduced. Planes past the last row read the last row again and store nothing."""
    width = x.line_size()
    rows = x.shape(0)
    cols = x.shape(1)
    row_lines = per_unit * plane
    lane = UNIT_POS % plane
    first = (CUBE_POS * (CUBE_DIM // plane) + UNIT_POS // plane) * walk
    w = LocalArray(Line[Float], per_unit, width)
    b = LocalArray(Line[Float], per_unit, width)
    held = LocalArray(Line[Float], per_unit, width)
    ahead = LocalArray(Line[Float], per_unit, width)
    base = min(first, rows - 1) * row_lines + lane
    for k in unroll(range(per_unit)):
        held[k] = x[base + k * plane]
    for k in unroll(range(per_unit)):
        w[k] = weight[lane + k * plane]
        b[k] = bias[lane + k * plane]
    for r in unroll(range(walk)):
        row = first + r
        if r + 1 < walk:
            following = min(row + 1, rows - 1) * row_lines + lane
            for k in unroll(range(per_unit)):
                ahead[k] = x[following + k * plane]
        s = f32(0.0)
        for k in unroll(range(per_unit)):
            s += line_total(f32(held[k]), width)
        mean = cubepy.plane_sum(s) / f32(cols)
        q = f32(0.0)
        for k in unroll(range(per_unit)):
            d = f32(held[k]) - mean
            q += line_total(d * d, width)
        rstd = math.rsqrt(cubepy.plane_sum(q) / f32(cols) + eps)
        if row < rows:
            out = row * row_lines + lane
            for k in unroll(range(per_unit)):
                z = (f32(held[k]) - mean) * rstd
                y[out + k * plane] = Float(z * f32(w[k]) + f32(b[k]))
        if r + 1 < walk:
            for k in unroll(range(per_unit)):
                held[k] = ahead[k]


WALKS = (2, 4, 8)  # rows per plane of the `walk` variants
WALK_CUBES = (128, 256)  # units per cube of the `walk` variants


def walk_variants(client, rows: int, lines: int, args: tuple) -> list[tuple]:
    """The `walk` variants (see the module doc) for rows of `lines` lines, in the cubes
    of WALK_CUBES units where softmax's plane plans hold a row (`plane_row_plans`)."""
    plane = client.limits.plane_dim
    found = []
    for units, per_unit in softmax.plane_row_plans(lines, plane,
                                                   client.limits.max_units_per_cube):
        if units not in WALK_CUBES:
            continue
        for walk in WALKS:
            rows_per_cube = units // plane * walk
            found.append((f"walk {walk} rows per plane, {units} units, {per_unit} lines/unit",
                          lambda u=units, p=per_unit, w=walk, r=rows_per_cube:
                          layernorm_plane_walk.launch_unchecked(
                              client, CubeCount(-(-rows // r)), CubeDim(u), *args,
                              p, plane, w),
                          args[3], "layernorm"))
    return found


def variants(client, rows: int, lines: int, args: tuple) -> list[tuple]:
    """(name, launch(), output tensor, what it should hold: "layernorm", "plain" or
    "softmax") for the shape; `args` are layernorm's line tensors and eps."""
    x, weight, bias, y, eps = args
    found = [(f"plan {layernorm.describe_plan(plan) if plan else 'three-pass'}",
              lambda plan=plan: layernorm.launch_plan(client, plan, args, False), y,
              "layernorm")
             for plan in layernorm.candidate_plans(client, lines) + [None]]
    found += walk_variants(client, rows, lines, args)
    for units, per_unit in softmax.register_plans(lines):
        if units > client.limits.max_units_per_cube:
            continue
        for block, affine in ((1, False), (2, True), (4, True)):
            if rows % block == 0:
                found.append((f"block {block} {units}x{per_unit}" if affine else
                              f"no affine {units}x{per_unit}",
                              lambda u=units, p=per_unit, b=block, a=affine:
                              layernorm_block.launch_unchecked(
                                  client, CubeCount(rows // b), CubeDim(u), x, weight,
                                  bias, y, eps, p, b, a),
                              y, "layernorm" if affine else "plain"))
    if x.dtype == f32:
        out = client.zeros(x.shape, f32).with_line_size(x.line_size)
        found += [(f"softmax {softmax.describe_plan(plan)}",
                   lambda plan=plan: softmax.launch_plan(client, plan, x, out, False), out,
                   "softmax") for plan in softmax.candidate_plans(client, lines)
                  if plan[0] == "cube"]
    return found


def expected(x_h, w_h, b_h) -> dict[str, np.ndarray]:
    """What each kind of variant should hold (the kernels' numpy references)."""
    ones, zeros = np.ones_like(w_h), np.zeros_like(b_h)
    return {"layernorm": layernorm.reference(x_h, w_h, b_h, EPS),
            "plain": layernorm.reference(x_h, ones, zeros, EPS),
            "softmax": softmax.reference(x_h)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--dtype", default="f32", choices=("f32", "f16"))
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--runtimes", default="cuda,wgpu")
    parser.add_argument("--out", help="JSON file for every row")
    args = parser.parse_args(argv)
    dtype = cubepy.f32 if args.dtype == "f32" else cubepy.f16
    rng = np.random.default_rng(0)
    x_h = (rng.standard_normal((args.rows, args.cols)) * 3 + 1).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(args.cols).astype(dtype.numpy) for _ in range(2))
    want = expected(x_h, w_h, b_h)
    n = layernorm.line_size_for(args.cols, dtype)
    found, failed, devices = [], [], {}
    for client in present_clients(args.runtimes.split(",")):
        runtime = client.runtime
        devices[runtime] = client.device
        line_args = tuple(client.tensor(a).with_line_size(n) for a in (x_h, w_h, b_h)) + \
            (client.zeros(x_h.shape, dtype).with_line_size(n), EPS)
        rows_here = variants(client, args.rows, args.cols // n, line_args)
        for name, launch, out, kind in rows_here:
            try:
                res = cubepy.bench(launch, client=client, warmup=3, reps=args.reps)
            except cubepy.CubepyError as e:
                print(f"{runtime:5s} {name:28s} failed: {str(e).splitlines()[0]}")
                failed.append({"runtime": runtime, "variant": name, "error": str(e)})
                continue
            err = float(np.abs(out.numpy().astype(np.float64) - want[kind]).max())
            found.append({"runtime": runtime, "variant": name, "median_us": res.median_ms
                          * 1e3, "iqr_us": res.iqr_ms * 1e3, "max_error": err})
            print(f"{runtime:5s} {name:28s} median {res.median_ms * 1e3:7.2f} us  IQR "
                  f"{res.iqr_ms * 1e3:5.2f}  error {err:.2g}", flush=True)
        if runtime == "wgpu":
            from benchmarks.wgpu_copy import WgpuCopy
            res = WgpuCopy(x_h.nbytes // 4).bench(3, args.reps)
            found.append({"runtime": "wgpu", "variant": "raw wgpu-py copy",
                          "median_us": res.median_ms * 1e3, "iqr_us": res.iqr_ms * 1e3})
            print(f"wgpu  {'raw wgpu-py copy':28s} median {res.median_ms * 1e3:7.2f} us",
                  flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"host": describe_host(), "devices": devices,
                                              "shape": [args.rows, args.cols],
                                              "dtype": args.dtype, "rows": found,
                                              "failed": failed},
                                             indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
