"""Row softmax on wgpu: cubepy's generated WGSL against hand-written WGSL and a copy,
all in one raw wgpu-py harness.

    python benchmarks/probe_wgpu_rows.py [--cols 1024,4096] [--rows 4096] [--reps 30]
        [--out FILE.json]

On NVIDIA's Vulkan driver cubepy's short-row kernels run about 3 us longer than a raw
wgpu-py copy of the same bytes, where on CUDA they match the copy (docs/PERFORMANCE.md,
"wgpu against CUDA"). This probe asks whether that is the generated code or the
platform. Every shader below runs in the same harness: modules built with loop bounding
only (as cubepy builds generated modules), a 256 MiB scratch buffer cleared before each
submission (a cold L2, as `cubepy.bench` did then), timed by the pass's own timestamps
(`own`) and by timestamps written inside the pass around the dispatch (`in_pass`, what
cubepy's timer writes), median and minimum of `--reps` submissions in microseconds.

- `copy`: the raw copy of benchmarks/wgpu_copy.py over the softmax's bytes;
- `generated`: `softmax_in_registers` (one cube per row, 4 lines of 4 per unit: the plan
  cubepy's wgpu runtime picks at 1024 and 4096 columns) as cubepy emits it, unchecked;
- `generated` with text patches: `noexit` (no early exit for the extra workgroups of a
  folded cube count, so no read of the info buffer; generated WGSL has skipped that
  read on 1-D grids since the H200 runs of benchmarks/results/wgpu_rows_h200.md), `fn` (the register array a
  function variable instead of `var<private>`), `max` (WGSL's `max` instead of the
  NaN-aware helper), `all` (the three, and the plane size folded to 32);
- `hand_cube`: the same plan written by hand in plain WGSL;
- `hand_plane`: one subgroup per row, 8 rows per workgroup of 256, no workgroup memory
  and no barrier (rows of at most 2048 columns);
- `cubepy`: `cubepy.bench` of the generated kernel launched through cubepy's wgpu
  runtime (its own device), the figure the benchmark reports.

Each shader's output is checked against numpy's softmax (largest absolute error).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.probe_wgpu_timestamps import submit_and_read_us  # noqa: E402
from benchmarks.wgpu_copy import GROUPS, SHADER as COPY_SHADER  # noqa: E402

SCRATCH_BYTES = 256 << 20
LINES_PER_UNIT = 4
BINDING = re.compile(r"@group\(0\) @binding\((\d+)\) var<storage, (read|read_write)> (\w+)")
EXIT = "if (cube_linear >= cube_count.x * cube_count.y * cube_count.z) { return; }"

HAND_CUBE = """
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
var<workgroup> part_m: array<f32, 32>;
var<workgroup> part_s: array<f32, 32>;

@compute @workgroup_size(UNITS)
fn main(@builtin(workgroup_id) group: vec3<u32>,
        @builtin(local_invocation_index) unit: u32,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) width: u32) {
    let base = group.x * (UNITS * 4u) + unit;
    var v: array<vec4<f32>, 4>;
    var m = -3e38f;
    for (var k = 0u; k < 4u; k++) {
        v[k] = x[base + k * UNITS];
        m = max(m, max(max(v[k].x, v[k].y), max(v[k].z, v[k].w)));
    }
    m = subgroupMax(m);
    let planes = UNITS / width;
    if (lane == 0u) { part_m[unit / width] = m; }
    workgroupBarrier();
    m = part_m[0];
    for (var p = 1u; p < planes; p++) { m = max(m, part_m[p]); }
    var s = 0.0f;
    for (var k = 0u; k < 4u; k++) {
        v[k] = exp(v[k] - m);
        s += dot(v[k], vec4<f32>(1.0f));
    }
    s = subgroupAdd(s);
    if (lane == 0u) { part_s[unit / width] = s; }
    workgroupBarrier();
    s = 0.0f;
    for (var p = 0u; p < planes; p++) { s += part_s[p]; }
    let scale = 1.0f / s;
    for (var k = 0u; k < 4u; k++) { out[base + k * UNITS] = v[k] * scale; }
}
"""

HAND_PLANE = """
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) group: vec3<u32>,
        @builtin(local_invocation_index) unit: u32) {
    let row = group.x * 8u + unit / 32u;
    let base = row * (PER_LANE * 32u) + unit % 32u;
    var v: array<vec4<f32>, PER_LANE>;
    var m = -3e38f;
    for (var k = 0u; k < PER_LANE; k++) {
        v[k] = x[base + k * 32u];
        m = max(m, max(max(v[k].x, v[k].y), max(v[k].z, v[k].w)));
    }
    m = subgroupMax(m);
    var s = 0.0f;
    for (var k = 0u; k < PER_LANE; k++) {
        v[k] = exp(v[k] - m);
        s += dot(v[k], vec4<f32>(1.0f));
    }
    let scale = 1.0f / subgroupAdd(s);
    for (var k = 0u; k < PER_LANE; k++) { out[base + k * 32u] = v[k] * scale; }
}
"""


def generated_source(cols: int) -> str:
    """cubepy's WGSL of the wgpu runtime's plan for rows of `cols` f32 (unchecked)."""
    from benchmarks.kernels import softmax
    units = cols // 4 // LINES_PER_UNIT
    return softmax.softmax_in_registers.source(
        "wgsl", cube_dim=(units, 1, 1), checked=False, line_sizes={"x": 4, "out": 4},
        per_unit=LINES_PER_UNIT)


def patched(source: str, patches: set[str]) -> str:
    """The generated WGSL with the probe's text patches (see the module docstring)."""
    if patches & {"noexit", "all"}:
        assert EXIT in source
        # (the guard as emitted since 1-D grids skip it, then as emitted before)
        source = re.sub(r"if \(cube_groups\.y \* cube_groups\.z > 1u\) \{\n.*?\n *\}\n",
                        "", source, flags=re.S)
        source = source.replace(EXIT, "")
        source = re.sub(r"let cube_count: vec3<u32> = vec3<u32>\(info[^;]*;",
                        "let cube_count: vec3<u32> = cube_groups;", source)
    if patches & {"fn", "all"}:
        head, sep, body = source.partition("\nfn main(")
        for name, ty in re.findall(r"^var<private> (\w+): (array<[^;]*>);\n", head, re.M):
            head = head.replace(f"var<private> {name}: {ty};\n", "")
            open_at = body.index(") {\n") + 4
            body = body[:open_at] + f"    var {name}: {ty};\n" + body[open_at:]
        source = head + sep + body
    if patches & {"max", "all"}:
        source = source.replace("= cube_max_f32(", "= max(")
    if "all" in patches:
        source = source.replace("cube_floordiv_u32(cube_unit, cube_plane_dim)",
                                "(cube_unit >> 5u)")
        source = re.sub(r"cube_floordiv_u32\((\d+)u, cube_plane_dim\)",
                        lambda m: f"{int(m.group(1)) // 32}u", source)
    return source


def reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class Harness:
    """One wgpu device, a scratch buffer to clear and two timestamps."""

    def __init__(self):
        import wgpu
        self.wgpu = wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        wanted = ["timestamp-query", "timestamp-query-inside-passes", "subgroup"]
        missing = [f for f in wanted if f not in adapter.features]
        if missing:
            raise SystemExit(f"the adapter lacks {', '.join(missing)}")
        self.adapter_name = adapter.info.get("device", "?")
        limits = {k: adapter.limits[k] for k in ("max-storage-buffer-binding-size",
                                                 "max-buffer-size")}
        self.device = adapter.request_device_sync(required_features=wanted,
                                                  required_limits=limits)
        usage = wgpu.BufferUsage
        self.queries = self.device.create_query_set(type=wgpu.QueryType.timestamp, count=2)
        self.resolve = self.device.create_buffer(size=16, usage=usage.QUERY_RESOLVE |
                                                 usage.COPY_SRC)
        self.read = self.device.create_buffer(size=16, usage=usage.MAP_READ | usage.COPY_DST)
        self.scratch = self.device.create_buffer(size=SCRATCH_BYTES, usage=usage.COPY_DST)

    def buffer(self, data: np.ndarray):
        usage = self.wgpu.BufferUsage
        return self.device.create_buffer_with_data(
            data=data, usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST)

    def pipeline(self, code: str, buffers: dict):
        """(pipeline, bind group) of `code`, its bindings taken by name from `buffers`."""
        from cubepy.runtime.wgpu_modules import GENERATED_CHECKS, create_module
        wgpu = self.wgpu
        bindings = [(int(i), access, name) for i, access, name in BINDING.findall(code)]
        kinds = {"read": wgpu.BufferBindingType.read_only_storage,
                 "read_write": wgpu.BufferBindingType.storage}
        layout = self.device.create_bind_group_layout(entries=[
            {"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
             "buffer": {"type": kinds[access]}} for i, access, _ in bindings])
        module = create_module(self.device, code, checks=GENERATED_CHECKS)
        pipeline = self.device.create_compute_pipeline(
            layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
            compute={"module": module, "entry_point": "main"})
        group = self.device.create_bind_group(layout=layout, entries=[
            {"binding": i, "resource": {"buffer": buffers[name]}} for i, _, name in bindings])
        return pipeline, group

    def time_once(self, pipeline, group, groups: int, mode: str) -> float:
        """One submission after clearing the scratch buffer; microseconds."""
        from wgpu.backends.wgpu_native.extras import write_timestamp
        encoder = self.device.create_command_encoder()
        encoder.clear_buffer(self.scratch)
        writes = ({"query_set": self.queries, "beginning_of_pass_write_index": 0,
                   "end_of_pass_write_index": 1} if mode == "own" else None)
        cpass = encoder.begin_compute_pass(timestamp_writes=writes)
        if mode == "in_pass":
            write_timestamp(cpass, self.queries, 0)
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, group)
        cpass.dispatch_workgroups(groups)
        if mode == "in_pass":
            write_timestamp(cpass, self.queries, 1)
        cpass.end()
        return submit_and_read_us(self, encoder)

    def download(self, buffer, shape) -> np.ndarray:
        return np.frombuffer(self.device.queue.read_buffer(buffer),
                             dtype=np.float32).reshape(shape)


def shaders(cols: int) -> list[tuple[str, str, int | None]]:
    """(name, WGSL, rows per workgroup; None for the copy) for rows of `cols` columns."""
    units = cols // 4 // LINES_PER_UNIT
    gen = generated_source(cols)
    found = [("generated", gen, 1)]
    for patch in ("noexit", "fn", "max", "all"):
        found.append((f"generated+{patch}", patched(gen, {patch}), 1))
    found.append(("hand_cube", HAND_CUBE.replace("UNITS", f"{units}u"), 1))
    if cols <= 2048:
        found.append(("hand_plane", HAND_PLANE.replace("PER_LANE", f"{cols // 128}u"), 8))
    found.append(("copy", COPY_SHADER.replace("src", "x").replace("dst", "out"), None))
    return found


def through_cubepy(x_h: np.ndarray, reps: int) -> tuple[float, float, float]:
    """(median us, min us, largest error) of cubepy.bench of the generated kernel
    launched through cubepy's wgpu runtime."""
    import cubepy
    from benchmarks.kernels import softmax
    client = cubepy.client("wgpu")
    rows, cols = x_h.shape
    x = client.tensor(x_h).with_line_size(4)
    out = client.zeros((rows, cols), cubepy.f32).with_line_size(4)
    plan = ("cube", cols // 4 // LINES_PER_UNIT, LINES_PER_UNIT)
    res = cubepy.bench(softmax.launch_plan, client, plan, x, out, False, client=client,
                       warmup=3, reps=reps)
    err = float(np.abs(out.numpy() - reference(x_h)).max())
    return res.median_ms * 1e3, res.min_ms * 1e3, err


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cols", default="1024,4096")
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--out", help="JSON file for every row")
    args = parser.parse_args(argv)
    harness = Harness()
    print(f"adapter: {harness.adapter_name}")
    rows_out = []
    for cols in (int(c) for c in args.cols.split(",")):
        x_h = np.random.default_rng(cols).standard_normal((args.rows, cols),
                                                          dtype=np.float32)
        want = reference(x_h)
        buffers = {"x": harness.buffer(x_h), "out": harness.buffer(np.zeros_like(x_h)),
                   "info": harness.buffer(np.array([args.rows, 1, 1, 0], np.uint32))}
        for name, code, rows_per_group in shaders(cols):
            try:
                pipeline, group = harness.pipeline(code, buffers)
            except Exception as exc:  # a patch naga rejects: recorded, not fatal
                print(f"{cols} {name}: failed to build: {str(exc)[:300]}", flush=True)
                rows_out.append({"cols": cols, "shader": name, "error": str(exc)[:300]})
                continue
            groups = (min(GROUPS, -(-x_h.size // (4 * 256))) if rows_per_group is None
                      else args.rows // rows_per_group)
            for mode in ("own", "in_pass"):
                times = [harness.time_once(pipeline, group, groups, mode)
                         for _ in range(args.reps + 3)][3:]
                got = harness.download(buffers["out"], x_h.shape)
                err = float(np.abs(got - (x_h if rows_per_group is None else want)).max())
                row = {"cols": cols, "shader": name, "mode": mode,
                       "median_us": statistics.median(times), "min_us": min(times),
                       "max_error": err}
                rows_out.append(row)
                print(f"{args.rows}x{cols}  {name:18s} {mode:8s} median "
                      f"{row['median_us']:7.2f} us  min {row['min_us']:7.2f}  "
                      f"error {err:.2g}", flush=True)
        median, low, err = through_cubepy(x_h, args.reps)
        rows_out.append({"cols": cols, "shader": "cubepy", "mode": "cubepy.bench",
                         "median_us": median, "min_us": low, "max_error": err})
        print(f"{args.rows}x{cols}  {'cubepy':18s} bench    median {median:7.2f} us  "
              f"min {low:7.2f}  error {err:.2g}", flush=True)
        if args.out:
            Path(args.out).write_text(json.dumps({"adapter": harness.adapter_name,
                                                  "rows": rows_out}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
