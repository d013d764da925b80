"""Launch overhead with other libraries' arrays: host time per launch of a tiny kernel
with cubepy tensors, torch tensors, CuPy arrays (and numpy on cpu), and an equivalent
Triton kernel on the same torch tensors.

    python3 benchmarks/bench_interop.py [--runtime cuda|cpu] [--out benchmarks/results] [--quick]

Writes bench_interop_<runtime>.json and .md. Host time per launch: N launches queued back
to back (best of several repetitions), the queue drained afterwards; no launch is
synchronised. Peers that are not installed (torch, CuPy, Triton) are skipped and
reported as such. The contract: foreign arrays within 1.2x of cubepy tensors.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cubepy  # noqa: E402
from cubepy import ABSOLUTE_POS, CubeCount, CubeDim, Tensor, cube, f32  # noqa: E402
from host import describe_host, per_launch_us  # noqa: E402

LIMIT = 1.2  # foreign arrays vs cubepy tensors


@cube(launch=True)
def tiny_axpy(a: f32, x: Tensor[f32], y: Tensor[f32]):
    i = ABSOLUTE_POS
    if i < y.len():
        y[i] = a * x[i] + y[i]


def _import(name):
    try:
        return __import__(name)
    except Exception:  # absent, or present but broken (no driver): skipped either way
        return None


def _cases(client, size: int):
    """(name, launch, sync) for every peer present on this runtime."""
    count, dim = CubeCount(-(-size // 256)), CubeDim(256)
    host_x = np.random.default_rng(0).random(size, dtype=np.float32)
    x, y = client.tensor(host_x), client.zeros(size, f32)
    sync = client.sync
    yield "cubepy tensors", lambda: tiny_axpy.launch(client, count, dim, 0.5, x, y), sync
    torch = _import("torch")
    if client.runtime == "cpu":
        nx, ny = host_x.copy(), np.zeros(size, np.float32)
        yield "numpy arrays", lambda: tiny_axpy.launch(client, count, dim, 0.5, nx, ny), sync
        if torch is not None:
            tx, ty = torch.from_numpy(host_x.copy()), torch.zeros(size)
            yield ("torch CPU tensors",
                   lambda: tiny_axpy.launch(client, count, dim, 0.5, tx, ty), sync)
        return
    if torch is not None and torch.cuda.is_available():
        dev = f"cuda:{client.index}"
        tx, ty = torch.from_numpy(host_x).to(dev), torch.zeros(size, device=dev)
        tsync = lambda: torch.cuda.synchronize(dev)  # noqa: E731
        yield ("torch CUDA tensors",
               lambda: tiny_axpy.launch(client, count, dim, 0.5, tx, ty), tsync)
        triton_case = _triton_case(torch, tx, ty, size)
        if triton_case is not None:
            yield "Triton kernel (torch tensors)", triton_case, tsync
    cupy = _import("cupy")
    if cupy is not None:
        with cupy.cuda.Device(client.index):
            cx, cy = cupy.asarray(host_x), cupy.zeros(size, dtype=cupy.float32)
        csync = lambda: cupy.cuda.Device(client.index).synchronize()  # noqa: E731
        yield "CuPy arrays", lambda: tiny_axpy.launch(client, count, dim, 0.5, cx, cy), csync


def _triton_case(torch, x, y, size: int):
    triton = _import("triton")
    if triton is None:
        return None
    import triton.language as tl

    @triton.jit
    def axpy_kernel(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask)
                 + tl.load(y_ptr + offs, mask=mask), mask=mask)

    grid = (triton.cdiv(size, 256),)
    return lambda: axpy_kernel[grid](x, y, 0.5, size, BLOCK=256)


def run(runtime: str | None, quick: bool) -> dict:
    client = cubepy.client(runtime)
    n, reps, size = (200, 3, 1024) if quick else (2000, 7, 1024)
    if client.runtime == "cpu":
        n = max(n // 10, 20)
    results, skipped = {}, []
    for name, launch, sync in _cases(client, size):
        try:
            results[name] = round(per_launch_us(launch, sync, n, reps), 2)
        except Exception as e:  # a peer that fails here must not cost the other numbers
            skipped.append(f"{name}: {type(e).__name__}: {e}")
            traceback.print_exc()
        print(f"{name:32} {results.get(name, float('nan')):8.2f} us/launch", flush=True)
    base = results.get("cubepy tensors")
    ratios = {k: round(v / base, 3) for k, v in results.items() if base}
    foreign = {k: r for k, r in ratios.items() if k not in ("cubepy tensors",)
               and not k.startswith("Triton")}
    return {"runtime": client.runtime, "device": client.device, "host": describe_host(),
            "python": platform.python_version(), "launches": n, "repetitions": reps,
            "elements": size, "us_per_launch": results, "ratio_to_cubepy": ratios,
            "within_limit": all(r <= LIMIT for r in foreign.values()), "limit": LIMIT,
            "versions": _versions(), "skipped": skipped}


def _versions() -> dict:
    out = {"numpy": np.__version__, "cubepy": cubepy.__version__}
    for name in ("torch", "cupy", "triton", "pycuda"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", getattr(mod, "VERSION_TEXT", "?"))
    return out


def markdown(report: dict) -> str:
    lines = [f"# Launch overhead with foreign arrays ({report['runtime']})", "",
             f"Device: {report['device']}  ", f"Host: {report['host']}  ",
             f"Versions: {', '.join(f'{k} {v}' for k, v in report['versions'].items())}  ",
             f"Tiny axpy kernel on {report['elements']} f32 elements, "
             f"{report['launches']} launches back to back, best of "
             f"{report['repetitions']}.", "",
             "| arguments | host us / launch | vs cubepy tensors |", "|---|---|---|"]
    for name, us in report["us_per_launch"].items():
        lines.append(f"| {name} | {us:.2f} | {report['ratio_to_cubepy'].get(name, 0):.2f}x |")
    verdict = "within" if report["within_limit"] else "OVER"
    lines += ["", f"Foreign arrays are {verdict} the {report['limit']}x limit."]
    if report["skipped"]:
        lines += ["", "Failed peers: " + "; ".join(report["skipped"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", default=None, help="cuda or cpu (default: best present)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    report = run(args.runtime, args.quick)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"bench_interop_{report['runtime']}")
    with open(stem + ".json", "w") as f:
        json.dump(report, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
