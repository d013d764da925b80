"""Compile-time benchmark: how long cubepy takes to turn the seed kernel into source.

    python benchmarks/bench_compile.py [--runs 5]

Measures, in fresh Python processes (cold: no kernel cached in memory, cubepy's modules
imported on demand, but with bytecode files present as after `pip install`):
decorating the seed kernel, emitting CUDA, WGSL and Metal, and a cached `source()` call.
Peers measured in the same run on the same source: `nvcc -cubin` compiling the emitted
CUDA, and naga (wgpu-py's create_shader_module) validating the emitted WGSL, where those
are present. Prints a table and saves JSON + markdown under benchmarks/results/.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "benchmarks"))
from host import describe_host  # noqa: E402
EXAMPLE = ROOT / "examples" / "fused_matmul_add_relu.py"

COLD_SCRIPT = r"""
import argparse, importlib.util, json, sys, time  # the example's own imports, not timed
sys.path.insert(0, {root!r})
t_import = time.perf_counter()
import cubepy
from cubepy import CubeDim, f32
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("seed_example", {example!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)  # decorates the seed kernel exactly as API.md prints it
fused_matmul_add_relu_kernel = module.fused_matmul_add_relu_kernel
t1 = time.perf_counter()
times = {{}}
sources = {{}}
for target in ("cuda", "wgsl", "metal"):
    s = time.perf_counter()
    sources[target] = fused_matmul_add_relu_kernel.source(target, cube_dim=CubeDim(16, 16, 1),
                                                          Float=f32)
    times[target] = time.perf_counter() - s
t2 = time.perf_counter()
n = 2000
s = time.perf_counter()
for _ in range(n):
    fused_matmul_add_relu_kernel.source("cuda", cube_dim=CubeDim(16, 16, 1), Float=f32)
cached = (time.perf_counter() - s) / n
print(json.dumps({{"import_s": t0 - t_import, "decorate_s": t1 - t0,
                  "emit_s": times, "decorate_and_emit_all_s": t2 - t0,
                  "cached_source_s": cached, "sources": sources}}))
"""


def _cold_run() -> dict:
    # A real file: cubepy reads kernels with inspect.getsource, which `python -c` lacks.
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "cold_compile.py"
        script.write_text(COLD_SCRIPT.format(root=str(ROOT), example=str(EXAMPLE)))
        # As an installed package runs: with bytecode files (written by the warm-up run).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             env=env)
    if out.returncode:
        raise SystemExit(f"cold run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _nvcc_time(source: str) -> float | None:
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.cu"
        path.write_text(source)
        s = time.perf_counter()
        subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", str(Path(d) / "k.cubin"),
                        str(path)], check=True, capture_output=True)
        return time.perf_counter() - s


def _naga_time(source: str) -> float | None:
    try:
        import wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        device = adapter.request_device_sync()
    except Exception:
        return None
    s = time.perf_counter()
    device.create_shader_module(code=source)
    return time.perf_counter() - s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    _cold_run()  # warm-up: writes bytecode files and the template cache, as an install does
    runs = [_cold_run() for _ in range(args.runs)]
    med = lambda key: statistics.median(r[key] for r in runs)  # noqa: E731
    med_emit = {t: statistics.median(r["emit_s"][t] for r in runs) for t in ("cuda", "wgsl", "metal")}
    sources = runs[0]["sources"]
    nvcc = _nvcc_time(sources["cuda"])
    naga = _naga_time(sources["wgsl"])
    result = {
        "machine": describe_host(),
        "date": time.strftime("%Y-%m-%d"),
        "runs": args.runs,
        "import_cubepy_ms": med("import_s") * 1e3,
        "decorate_ms": med("decorate_s") * 1e3,
        "emit_ms": {t: v * 1e3 for t, v in med_emit.items()},
        "decorate_and_emit_all_targets_cold_ms": med("decorate_and_emit_all_s") * 1e3,
        "cached_source_us": med("cached_source_s") * 1e6,
        "peer_nvcc_cubin_ms": None if nvcc is None else nvcc * 1e3,
        "peer_naga_create_shader_module_ms": None if naga is None else naga * 1e3,
    }
    cold = result["decorate_and_emit_all_targets_cold_ms"]
    lines = [
        f"# Compile time, {result['date']}",
        "",
        f"Machine: {result['machine']}. Median of {args.runs} fresh processes.",
        "",
        "| step | time |",
        "| --- | --- |",
        f"| import cubepy | {result['import_cubepy_ms']:.1f} ms |",
        f"| decorate the seed kernel | {result['decorate_ms']:.2f} ms |",
    ]
    for t, v in result["emit_ms"].items():
        lines.append(f"| first source('{t}') | {v:.2f} ms |")
    lines += [f"| decorate + emit all three targets (cold) | {cold:.1f} ms |",
              f"| cached source() | {result['cached_source_us']:.2f} us |"]
    if nvcc is not None:
        lines.append(f"| peer: nvcc -cubin of the emitted CUDA | {nvcc * 1e3:.0f} ms "
                     f"({nvcc * 1e3 / result['emit_ms']['cuda']:.0f}x cubepy's CUDA emit) |")
    if naga is not None:
        lines.append(f"| peer: naga create_shader_module of the emitted WGSL | "
                     f"{naga * 1e3:.2f} ms ({naga * 1e3 / result['emit_ms']['wgsl']:.2f}x "
                     f"cubepy's WGSL emit) |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "compile.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "compile.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
