"""wgpu runtime benchmark: host time per launch and compile time.

    python benchmarks/bench_wgpu.py [--launches 2000] [--repeats 5] [--name wgpu]

Measured in one run on one device:
- cubepy: `kernel.launch(...)` of a tiny kernel (add one to 64 floats), N launches then
  `client.sync()`, reported per launch (host time; the launches are batched and
  submitted lazily);
- raw wgpu-py on the same WGSL (taken from `kernel.source("wgsl")`) and the same info
  struct: (a) the plain hand-written loop, one encoder + pass + dispatch + submit per
  launch; (b) the same but all N dispatches recorded in one pass and submitted once, the
  lower bound for a Python host loop;
- compile time of the seed kernel (fused matmul + add + ReLU): frontend, passes and WGSL
  emission, then pipeline creation on the device, for a freshly decorated kernel.
Prints a markdown table and saves JSON + markdown under benchmarks/results/.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

import cubepy  # noqa: E402
from cubepy import ABSOLUTE_POS, Array, CubeDim, cube, f32  # noqa: E402
from cubepy.abi import pack_info  # noqa: E402
from host import describe_host  # noqa: E402

N_ELEMS = 64
CUBE_DIM = (64, 1, 1)
CUBE_COUNT = (1, 1, 1)


@cube(launch=True)
def add_one(x: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = x[i] + f32(1.0)


@cube(launch=True)
def add_scalar(x: Array[f32], v: f32):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = x[i] + v


SEED_EXAMPLE = ROOT / "examples" / "fused_matmul_add_relu.py"  # the seed kernel as printed


def _machine(client) -> str:
    import wgpu
    return f"{describe_host()}; wgpu-py {wgpu.__version__}, adapter {client.device}"


def bench_cubepy(client, launches: int) -> tuple[float, float]:
    """Seconds per launch through `kernel.launch`: (host loop alone, sync included)."""
    x = client.tensor(np.zeros(N_ELEMS, np.float32))
    add_one.launch(client, CUBE_COUNT, CUBE_DIM, x)  # plan + compile outside the timing
    client.sync()
    start = time.perf_counter()
    for _ in range(launches):
        add_one.launch(client, CUBE_COUNT, CUBE_DIM, x)
    recorded = time.perf_counter() - start
    client.sync()
    elapsed = time.perf_counter() - start
    got = x.numpy()
    assert np.all(got == got[0]) and got[0] >= launches, "launches were lost"
    return recorded / launches, elapsed / launches


def bench_cubepy_scalar(client, launches: int) -> float:
    """Seconds per launch when a scalar argument changes every launch (a new info
    struct each time), sync included."""
    x = client.tensor(np.zeros(N_ELEMS, np.float32))
    add_scalar.launch(client, CUBE_COUNT, CUBE_DIM, x, 0.0)
    client.sync()
    start = time.perf_counter()
    for k in range(launches):
        add_scalar.launch(client, CUBE_COUNT, CUBE_DIM, x, float(k & 1))
    client.sync()
    elapsed = time.perf_counter() - start
    got = x.numpy()
    assert got[0] == launches // 2, "launches were lost"
    return elapsed / launches


class RawWgpu:
    """A hand-written wgpu-py host for the WGSL cubepy emits for `add_one`."""

    def __init__(self, client):
        import wgpu
        self.wgpu = wgpu
        compiled = add_one._compile(add_one._specialization(CUBE_DIM, {}), "wgsl", True)
        abi, source = compiled.abi, compiled.source
        device = client._device  # the same device: the same driver work per dispatch
        self.device, self.queue = device, device.queue
        usage = wgpu.BufferUsage
        self.x = device.create_buffer_with_data(
            data=np.zeros(N_ELEMS, np.float32).tobytes(),
            usage=usage.STORAGE | usage.COPY_SRC)

        class _Meta:  # what pack_info reads of a tensor
            buffer_len = len = N_ELEMS
            shape, strides = (N_ELEMS,), (1,)
        info = pack_info(abi, {b.name: _Meta for b in abi.buffers}, {}, CUBE_COUNT)
        info += bytes(-len(info) % 4)
        self.info = device.create_buffer_with_data(data=info, usage=usage.STORAGE)
        entries = [{"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                    "buffer": {"type": "read-only-storage" if b.read_only else "storage"}}
                   for i, b in enumerate(abi.buffers)]
        entries.append({"binding": abi.info_binding, "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": "read-only-storage"}})
        layout = device.create_bind_group_layout(entries=entries)
        self.pipeline = device.create_compute_pipeline(
            layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
            compute={"module": device.create_shader_module(code=source),
                     "entry_point": "main"})
        self.bind_group = device.create_bind_group(layout=layout, entries=[
            {"binding": 0, "resource": {"buffer": self.x}},
            {"binding": abi.info_binding, "resource": {"buffer": self.info}}])

    def wait(self) -> None:
        # A mapped read after the work (on_submitted_work_done_sync is unreliable in 0.32).
        self.queue.read_buffer(self.x, 0, 4)

    def per_launch_submit(self, launches: int) -> float:
        start = time.perf_counter()
        for _ in range(launches):
            encoder = self.device.create_command_encoder()
            cpass = encoder.begin_compute_pass()
            cpass.set_pipeline(self.pipeline)
            cpass.set_bind_group(0, self.bind_group)
            cpass.dispatch_workgroups(*CUBE_COUNT)
            cpass.end()
            self.queue.submit([encoder.finish()])
        self.wait()
        return (time.perf_counter() - start) / launches

    def one_submit(self, launches: int) -> tuple[float, float]:
        start = time.perf_counter()
        encoder = self.device.create_command_encoder()
        cpass = encoder.begin_compute_pass()
        cpass.set_pipeline(self.pipeline)
        for _ in range(launches):
            cpass.set_bind_group(0, self.bind_group)
            cpass.dispatch_workgroups(*CUBE_COUNT)
        cpass.end()
        self.queue.submit([encoder.finish()])
        recorded = time.perf_counter() - start
        self.wait()
        return recorded / launches, (time.perf_counter() - start) / launches


def bench_compile(client) -> dict:
    """Seconds to compile the seed kernel for wgsl, for a freshly decorated kernel."""
    import importlib.util
    t0 = time.perf_counter()
    spec = importlib.util.spec_from_file_location("seed_kernel_bench", SEED_EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a fresh decoration: parse + syntax checks
    kernel = module.fused_matmul_add_relu_kernel
    t1 = time.perf_counter()
    compiled = kernel._compile(kernel._specialization(CubeDim(16, 16, 1), {"Float": f32}),
                               "wgsl", True)
    t2 = time.perf_counter()
    client.compile_wgsl(compiled.source, compiled.abi, label="seed")
    t3 = time.perf_counter()
    return {"decorate_ms": (t1 - t0) * 1e3, "frontend_passes_emit_ms": (t2 - t1) * 1e3,
            "pipeline_ms": (t3 - t2) * 1e3, "total_ms": (t3 - t0) * 1e3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--name", default="wgpu",
                        help="results file stem under benchmarks/results/ (e.g. wgpu_h200)")
    args = parser.parse_args()
    client = cubepy.client("wgpu")
    raw = RawWgpu(client)
    raw.per_launch_submit(50)  # warm-up
    raw.one_submit(50)
    bench_cubepy(client, 50)
    cub, cub_scalar, per_submit, batched = [], [], [], []
    for _ in range(args.repeats):  # interleaved, so drift hits every variant alike
        cub.append(bench_cubepy(client, args.launches))
        cub_scalar.append(bench_cubepy_scalar(client, args.launches))
        per_submit.append(raw.per_launch_submit(args.launches))
        batched.append(raw.one_submit(args.launches))
    med = lambda xs: statistics.median(xs) * 1e6  # noqa: E731
    cub_rec, cub = [c[0] for c in cub], [c[1] for c in cub]
    batched_rec, batched = [b[0] for b in batched], [b[1] for b in batched]
    compile_runs = [bench_compile(client) for _ in range(args.repeats)]
    comp = {k: statistics.median(r[k] for r in compile_runs) for k in compile_runs[0]}
    result = {
        "machine": _machine(client),
        "date": time.strftime("%Y-%m-%d"),
        "launches": args.launches,
        "repeats": args.repeats,
        "us_per_launch": {
            "cubepy_launch": med(cub),
            "cubepy_launch_new_scalar_each_time": med(cub_scalar),
            "raw_wgpu_submit_per_launch": med(per_submit),
            "raw_wgpu_one_submit": med(batched),
        },
        "us_per_launch_before_sync": {
            "cubepy_launch": med(cub_rec),
            "raw_wgpu_one_submit": med(batched_rec),
        },
        "seed_kernel_compile_ms": comp,
    }
    u, r = result["us_per_launch"], result["us_per_launch_before_sync"]
    lines = [
        f"# wgpu runtime, {result['date']}",
        "",
        f"Machine: {result['machine']}.",
        f"Median of {args.repeats} runs of {args.launches} launches of a tiny kernel "
        f"(64 f32, one cube of 64 units), host time including the final sync.",
        "",
        "| host loop | us per launch, sync included | us per launch before the sync |",
        "| --- | --- | --- |",
        f"| cubepy `kernel.launch` (checked, batched lazily) | {u['cubepy_launch']:.1f} | "
        f"{r['cubepy_launch']:.1f} |",
        f"| cubepy `kernel.launch`, a scalar argument changing every launch | "
        f"{u['cubepy_launch_new_scalar_each_time']:.1f} | |",
        f"| raw wgpu-py, encoder + submit per launch (same WGSL) | "
        f"{u['raw_wgpu_submit_per_launch']:.1f} | |",
        f"| raw wgpu-py, all dispatches in one pass, one submit | "
        f"{u['raw_wgpu_one_submit']:.1f} | {r['raw_wgpu_one_submit']:.1f} |",
        "",
        "On a software adapter (llvmpipe) the shaders run on the same CPU cores as the "
        "host loop, so times after the sync include the kernels' execution.",
        "",
        "| seed kernel compile (wgsl, Float=f32, cube_dim 16x16) | ms |",
        "| --- | --- |",
        f"| decorate (parse + checks) | {comp['decorate_ms']:.2f} |",
        f"| frontend + passes + WGSL emit | {comp['frontend_passes_emit_ms']:.2f} |",
        f"| shader module + pipeline on the device | {comp['pipeline_ms']:.2f} |",
        f"| total | {comp['total_ms']:.2f} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / f"{args.name}.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
