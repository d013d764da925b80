"""The benchmark charts of docs/BENCHMARKS.md (images/bench_*.svg in the site), drawn from
the measurements in benchmarks/results/*.json. docs/hooks.py adds them to the site at
build time, so they always show the recorded results.

    python docs/gen_charts.py OUT_DIR      # write the charts to OUT_DIR, to look at them

Plain SVG horizontal bar charts, written by hand so that the docs need no plotting library.
"""
from __future__ import annotations

import argparse
import html
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

# chart file -> (title, unit, results file, [(label, key path)]); cubepy's bars first.
CHARTS = {
    "bench_cuda_launch.svg": (
        "Host time per launch of a tiny kernel, CUDA on an NVIDIA H200", "us",
        "bench_cuda.json", [
            ("cubepy launch (checked)", ("launch_us", "cubepy launch (checked)")),
            ("cubepy launch_unchecked", ("launch_us", "cubepy launch_unchecked")),
            ("PyCUDA prepared_async_call", ("launch_us", "PyCUDA prepared_async_call")),
            ("PyCUDA plain call", ("launch_us", "PyCUDA plain call")),
            ("CuPy RawKernel", ("launch_us", "CuPy RawKernel")),
            ("cuda.core launch", ("launch_us", "cuda.core launch")),
        ]),
    "bench_wgpu_launch.svg": (
        "Time per launch through wgpu, 2000 tiny launches then one wait (Vulkan on an "
        "NVIDIA H200)", "us",
        "wgpu_launch_h200_thread.json", [
            ("cubepy launch", ("us_per_launch", "cubepy_batched")),
            ("cubepy, batches submitted by the launching thread",
             ("us_per_launch", "cubepy_batched_submit_here")),
            ("raw wgpu-py, a submit per 256 dispatches",
             ("us_per_launch", "raw_batched_same_chunks")),
            ("raw wgpu-py, one submit for all", ("us_per_launch", "raw_batched_one_submit")),
            ("raw wgpu-py, a submit per dispatch", ("us_per_launch", "raw_submit_per_launch")),
        ]),
    "bench_cuda_compile.svg": (
        "Compiling the seed kernel for CUDA (H200 host)", "ms",
        "bench_cuda.json", [
            ("cubepy first launch, no disk cache", ("compile_s", "cubepy first launch, no disk cache")),
            ("cubepy first launch, disk cache warm",
             ("compile_s", "cubepy first launch, disk cache warm")),
            ("NVRTC alone", ("compile_s", "NVRTC (cuda-python), seed kernel")),
            ("nvcc command line", ("compile_s", "nvcc command line, seed kernel")),
            ("PyCUDA SourceModule (nvcc)", ("compile_s", "PyCUDA SourceModule (nvcc), seed kernel")),
        ]),
    "bench_emit.svg": (
        "Emitting source for the seed kernel (2-core CI machine)", "ms",
        "compile.json", [
            ("cubepy emit CUDA", ("emit_ms", "cuda")),
            ("cubepy emit WGSL", ("emit_ms", "wgsl")),
            ("cubepy emit Metal", ("emit_ms", "metal")),
            ("peer: naga create_shader_module", ("peer_naga_create_shader_module_ms",)),
            ("peer: nvcc -cubin", ("peer_nvcc_cubin_ms",)),
        ]),
}
_SCALE = {"bench_cuda_compile.svg": 1000.0}  # seconds in the results, ms on the chart


def values(chart: str) -> list[tuple[str, float]]:
    """(label, value) of each bar, read from the results file."""
    _, _, source, bars = CHARTS[chart]
    data = json.loads((RESULTS / source).read_text())
    out = []
    for label, path in bars:
        value = data
        for key in path:
            value = value[key]
        out.append((label, float(value) * _SCALE.get(chart, 1.0)))
    return out


def svg(chart: str) -> str:
    """One horizontal bar chart; cubepy's bars in blue, the others grey."""
    title, unit, _, _ = CHARTS[chart]
    bars = values(chart)
    left, width, row, top = 260, 360, 26, 40
    height = top + row * len(bars) + 10
    peak = max(v for _, v in bars)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" '
             f'height="{height}" font-family="sans-serif" font-size="12">',
             f'<text x="8" y="20" font-size="14" font-weight="bold">{html.escape(title)}'
             f"</text>"]
    for i, (label, value) in enumerate(bars):
        y = top + i * row
        w = max(1.0, width * value / peak)
        color = "#3b6fd4" if label.startswith("cubepy") else "#9a9a9a"
        parts += [f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">'
                  f"{html.escape(label)}</text>",
                  f'<rect x="{left}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" '
                  f'fill="{color}"/>',
                  f'<text x="{left + w + 6:.1f}" y="{y + 15}">{value:.3g} {unit}</text>']
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the charts to")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for chart in CHARTS:
        (args.out / chart).write_text(svg(chart))
        print(f"wrote {args.out / chart}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
