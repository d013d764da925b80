"""GPU benchmark of the cuda runtime: launch overhead against the fastest Python
launchers, compile time (NVRTC vs nvcc), and the seed kernel against torch.

    python3 benchmarks/bench_cuda.py [--out benchmarks/results] [--quick]

Writes bench_cuda.json and bench_cuda.md (machine described: GPU, driver, CUDA, package
versions). Launch overhead is host time per launch of a tiny kernel, N launches queued
back to back on one stream (best of several repetitions), the queue drained afterwards.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cubepy  # noqa: E402
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32  # noqa: E402
from host import per_launch_us  # noqa: E402

TINY_SRC = r"""
extern "C" __global__ void tiny_axpy(const float* x, float* y, float a, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@cube(launch=True)
def tiny_axpy(a: f32, x: Array[f32], y: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = a * x[i] + y[i]


def median_s(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def machine(client) -> dict:
    import pycuda
    import pycuda.driver as cuda
    from cubepy.runtime import cuda_compile
    info = {"gpu": cuda.Device(client.index).name(), "arch": client.arch,
            "driver_cuda_version": cuda.get_driver_version(),
            "pycuda": pycuda.VERSION_TEXT, "nvrtc": cuda_compile.nvrtc_version(),
            "nvcc": cuda_compile.nvcc_version(), "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine()}
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True)
        info["driver"] = out.stdout.strip()
    except OSError:
        pass
    for mod in ("torch", "cupy"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:
            info[mod] = None
    return info


def bench_launch(client, n: int, reps: int) -> dict:
    import pycuda.driver as cuda
    res: dict = {}
    stream = client._stream
    x = client.tensor(np.ones(32, np.float32))
    y = client.tensor(np.zeros(32, np.float32))
    count, dim = CubeCount(1, 1, 1), CubeDim(32, 1, 1)

    # cubepy, the public path (checked and unchecked)
    res["cubepy launch_unchecked"] = per_launch_us(
        lambda: tiny_axpy.launch_unchecked(client, count, dim, 1.0, x, y), client.sync, n,
        reps)
    res["cubepy launch (checked)"] = per_launch_us(
        lambda: tiny_axpy.launch(client, count, dim, 1.0, x, y), client.sync, n, reps)
    res["cubepy launch, plain tuples"] = per_launch_us(
        lambda: tiny_axpy.launch(client, (1, 1, 1), (32, 1, 1), 1.0, x, y), client.sync, n,
        reps)
    # cubepy's runtime floor: dispatch with a pre-packed info struct (no kernel.py)
    plan = next(p for k, p in tiny_axpy._plans.items() if k[3] is False)
    args = (1.0, x, y)
    bufs = [args[i] for i in plan.buffer_args]
    info = plan.pack(args, (1, 1, 1))
    exe, c3, d3 = plan.executable, (1, 1, 1), (32, 1, 1)
    res["cubepy client.dispatch only"] = per_launch_us(
        lambda: client.dispatch(exe, c3, d3, bufs, info), client.sync, n, reps)
    # Where the checked/unchecked gap comes from: each plan's dispatch alone, kernel.py
    # alone (dispatch stubbed), and the device's own time per launch (events).
    for checked in (True, False):
        tag = "checked" if checked else "unchecked"
        p = next(p for k, p in tiny_axpy._plans.items() if k[3] is checked)
        pb, pi = [args[i] for i in p.buffer_args], p.pack(args, c3)
        pe = p.executable
        res[f"dispatch only, {tag} plan"] = per_launch_us(
            lambda: client.dispatch(pe, c3, d3, pb, pi), client.sync, n, reps)
        start, end = cuda.Event(), cuda.Event()
        client.sync()
        start.record(stream)
        for _ in range(n):
            client.dispatch(pe, c3, d3, pb, pi)
        end.record(stream)
        end.synchronize()
        res[f"device time per launch, {tag} (events)"] = end.time_since(start) * 1e3 / n
        launch = tiny_axpy.launch if checked else tiny_axpy.launch_unchecked
        client.dispatch = lambda *a: None  # instance attribute shadows the method
        try:
            res[f"kernel.py alone (dispatch stubbed), {tag}"] = per_launch_us(
                lambda: launch(client, count, dim, 1.0, x, y), lambda: None, n, reps)
        finally:
            del client.dispatch
    # kernel.py's share, piece by piece
    key_of, plans = tiny_axpy._key_of, tiny_axpy._plans
    res["kernel.py: plan key + lookup"] = per_launch_us(
        lambda: plans.get((id(client), c3, d3, False) + key_of(args)), lambda: None, n, reps)
    res["kernel.py: info pack"] = per_launch_us(lambda: plan.pack((1.0, x, y), c3),
                                                lambda: None, n, reps)

    # raw PyCUDA on the same context and stream
    from cubepy.runtime.cuda_compile import compile_nvrtc
    cubin = compile_nvrtc(TINY_SRC, client.arch)
    fn = cuda.module_from_buffer(cubin).get_function("tiny_axpy")
    fn.prepare("PPfI")
    xp, yp = x.handle.ptr, y.handle.ptr
    res["PyCUDA prepared_async_call"] = per_launch_us(
        lambda: fn.prepared_async_call((1, 1), (32, 1, 1), stream, xp, yp, 1.0, 32),
        stream.synchronize, n, reps)
    res["PyCUDA prepared_call"] = per_launch_us(
        lambda: fn.prepared_call((1, 1), (32, 1, 1), xp, yp, 1.0, 32),
        cuda.Context.synchronize, n, reps)
    res["PyCUDA plain call"] = per_launch_us(
        lambda: fn(x.handle.alloc, y.handle.alloc, np.float32(1.0), np.uint32(32),
                   block=(32, 1, 1), grid=(1, 1)), cuda.Context.synchronize, max(n // 4, 100),
        reps)

    try:
        import cupy as cp
        k = cp.RawKernel(TINY_SRC, "tiny_axpy")
        cx, cy = cp.ones(32, cp.float32), cp.zeros(32, cp.float32)
        a32, n32 = np.float32(1.0), np.uint32(32)
        res["CuPy RawKernel"] = per_launch_us(lambda: k((1,), (32,), (cx, cy, a32, n32)),
                                              cp.cuda.Device().synchronize, n, reps)
    except Exception as e:
        res["CuPy RawKernel"] = f"error: {e!r}"[:200]

    try:
        res["cuda.core launch"] = _bench_cuda_core(client, n, reps, xp, yp)
    except Exception as e:
        res["cuda.core launch"] = f"error: {e!r}"[:200]
    return res


def _bench_cuda_core(client, n, reps, xp, yp) -> float:
    try:
        from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch
    except ImportError:
        from cuda.core.experimental import (Device, LaunchConfig, Program, ProgramOptions,
                                            launch)
    dev = Device(client.index)
    dev.set_current()
    s = dev.create_stream()
    prog = Program(TINY_SRC, code_type="c++", options=ProgramOptions(arch=client.arch))
    ker = prog.compile("cubin").get_kernel("tiny_axpy")
    cfg = LaunchConfig(grid=1, block=32)
    px, py = np.uint64(xp), np.uint64(yp)  # 8-byte pointer parameters
    a32, n32 = np.float32(1.0), np.uint32(32)
    try:
        return per_launch_us(lambda: launch(s, cfg, ker, px, py, a32, n32), s.sync, n, reps)
    finally:
        client._activate()


def bench_compile(client, quick: bool) -> dict:
    from corpus import fused_matmul_add_relu_kernel as seed
    from cubepy.runtime import cuda_compile
    res: dict = {}
    src = seed.source("cuda", cube_dim=(16, 16, 1), Float=f32)
    if cuda_compile.nvrtc_version():
        cuda_compile.compile_nvrtc(src, client.arch)  # load the library once
        res["NVRTC (cuda-python), seed kernel"] = median_s(
            lambda: cuda_compile.compile_nvrtc(src, client.arch), 3 if quick else 5)
    if cuda_compile.nvcc_version():
        res["nvcc command line, seed kernel"] = median_s(
            lambda: cuda_compile.compile_nvcc(src, client.arch), 1 if quick else 3)
    try:
        from pycuda.compiler import SourceModule
        res["PyCUDA SourceModule (nvcc), seed kernel"] = median_s(
            lambda: SourceModule(src, no_extern_c=True, cache_dir=False), 1 if quick else 3)
    except Exception as e:
        res["PyCUDA SourceModule (nvcc), seed kernel"] = f"error: {e!r}"[:200]

    # cubepy's first launch of a fresh kernel object: frontend + passes + codegen + cubin
    x = client.tensor(np.ones((1, 16, 16), np.float32))
    out = client.zeros((1, 16, 16), f32)

    def first_launch():
        fresh = cube(launch=True)(seed.fn)
        fresh.launch(client, CubeCount(1, 1, 1), CubeDim(16, 16, 1), x, x, x, out)
        client.sync()

    os.environ["CUBEPY_DISABLE_CACHE"] = "1"
    client._modules.clear(); client._executables.clear()
    res["cubepy first launch, no disk cache"] = median_s(first_launch, 1)
    os.environ.pop("CUBEPY_DISABLE_CACHE")
    first_launch()  # fills the disk cache
    client._modules.clear(); client._executables.clear()
    res["cubepy first launch, disk cache warm"] = median_s(first_launch, 3)
    res["compiler used by cubepy"] = cuda_compile.nvrtc_version() or cuda_compile.nvcc_version()
    return res


def bench_seed(client, quick: bool) -> dict:
    import pycuda.driver as cuda
    from corpus import fused_matmul_add_relu_kernel as seed
    B, M = 8, 1024
    rng = np.random.default_rng(0)
    lhs_h, rhs_h, bias_h = (rng.standard_normal((B, M, M), dtype=np.float32)
                            for _ in range(3))
    lhs, rhs, bias = client.tensor(lhs_h), client.tensor(rhs_h), client.tensor(bias_h)
    out = client.zeros((B, M, M), f32)
    count, dim = CubeCount(M // 16, M // 16, B), CubeDim(16, 16, 1)
    reps = 3 if quick else 10
    res: dict = {}
    for label, launch in (("cubepy seed kernel (checked)", seed.launch),
                          ("cubepy seed kernel (unchecked)", seed.launch_unchecked)):
        launch(client, count, dim, lhs, rhs, bias, out)
        client.sync()
        start, end = cuda.Event(), cuda.Event()
        start.record(client._stream)
        for _ in range(reps):
            launch(client, count, dim, lhs, rhs, bias, out)
        end.record(client._stream)
        end.synchronize()
        res[label + " ms"] = end.time_since(start) / reps
    got = out.numpy()
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        tl, tr, tb = (torch.from_numpy(a).cuda() for a in (lhs_h, rhs_h, bias_h))
        for label, fn in (("torch matmul fp32 ms", lambda: torch.matmul(tl, tr)),
                          ("torch matmul+add+relu fp32 ms",
                           lambda: torch.relu(torch.baddbmm(tb, tl, tr)))):
            fn()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                fn()
            e1.record()
            torch.cuda.synchronize()
            res[label] = e0.elapsed_time(e1) / reps
        want = torch.relu(torch.baddbmm(tb, tl, tr)).cpu().numpy()
        res["max abs diff vs torch"] = float(np.max(np.abs(got - want)))
        res["cubepy / torch fp32 matmul time"] = (res["cubepy seed kernel (unchecked) ms"]
                                                  / res["torch matmul fp32 ms"])
    except Exception as e:
        res["torch"] = f"error: {e!r}"[:200]
    client._activate()
    return res


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = ["# cuda runtime benchmark", "",
             f"GPU {m['gpu']} ({m['arch']}), driver {m.get('driver')} (CUDA "
             f"{m['driver_cuda_version']}), {m['nvrtc']}, {m['nvcc']}, PyCUDA "
             f"{m['pycuda']}, torch {m['torch']}, CuPy {m['cupy']}, Python {m['python']}.",
             "", "## Launch overhead (host us per launch, tiny kernel)", "",
             "| launcher | us | vs PyCUDA prepared_async_call |", "| --- | --- | --- |"]
    launch = report["launch_us"]
    ref = launch.get("PyCUDA prepared_async_call")
    for k, v in launch.items():
        ratio = f"{v / ref:.2f}x" if isinstance(v, float) and isinstance(ref, float) else ""
        lines.append(f"| {k} | {v:.2f} | {ratio} |" if isinstance(v, float)
                     else f"| {k} | {v} | |")
    lines += ["", "## Compile time (s)", "", "| what | s |", "| --- | --- |"]
    for k, v in report["compile_s"].items():
        lines.append(f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |")
    lines += ["", "## Seed kernel, B=8, 1024x1024x1024 fp32", "", "| what | value |",
              "| --- | --- |"]
    for k, v in report["seed"].items():
        lines.append(f"| {k} | {v:.4g} |" if isinstance(v, float) else f"| {k} | {v} |")
    lines += ["", "cubepy runs the naive seed kernel (one thread per output, row on X), so "
              "it is expected to trail cuBLAS by a wide margin.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    client = cubepy.client("cuda")
    report = {"machine": machine(client)}
    n, reps = (3000, 3) if args.quick else (20000, 5)
    report["launch_us"] = bench_launch(client, n, reps)
    print(json.dumps(report["launch_us"], indent=1), flush=True)
    report["compile_s"] = bench_compile(client, args.quick)
    print(json.dumps(report["compile_s"], indent=1), flush=True)
    report["seed"] = bench_seed(client, args.quick)
    print(json.dumps(report["seed"], indent=1), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_cuda.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "bench_cuda.md"), "w") as f:
        f.write(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
