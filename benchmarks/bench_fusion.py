"""Kernel fusion against the unfused plan, torch eager and torch.compile, in one run.

    python3 benchmarks/bench_fusion.py [--runtime cuda|wgpu|cpu] [--quick] [--out DIR]

1. A 10-op element-wise chain over 64M f32 (1M on cpu, 4M with --quick): cubepy.fusion
   fused (one kernel) and unfused (`fuse=False`, one kernel per op), torch eager and
   torch.compile on the same data where torch has the device.
2. relu(a @ b + bias) against the matmul alone (both cubepy.fusion; 4096^3 f32 on a
   GPU, 256^3 on cpu): what the fused add and max cost on top of the matmul.

Times are device times per call (cubepy.bench: CUDA events / WebGPU timestamps, median
of 20) of functions traced once with fusion.compile, as torch.compile traces; "fused,
eager" records and plans the graph again at every call (fusion.eval). Bytes moved are
each plan's reads and writes (fusion.explain). Writes
fusion_<tag>.json and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cubepy  # noqa: E402
import cubepy.fusion as fz  # noqa: E402
from host import describe_host  # noqa: E402


def chain(x, lib):
    """Ten element-wise operations (x is read twice: at the start and at op 8)."""
    y = x * 1.5
    y = y + 0.25
    y = lib.maximum(y, -1.0)
    y = y * y
    y = y - 0.5
    y = lib.tanh(y)
    y = y * 3.0
    y = y + x
    y = lib.minimum(y, 2.0)
    return abs(y)


class _TorchOps:
    """The chain's functions for torch tensors (maximum/minimum with a number)."""

    def __init__(self, torch) -> None:
        self.maximum, self.minimum, self.tanh = torch.clamp_min, torch.clamp_max, torch.tanh


def _torch_for(client):
    try:
        import torch
    except ImportError:
        return None, None
    if client.runtime == "cuda" and torch.cuda.is_available():
        return torch, "cuda"
    if client.runtime == "cpu":
        return torch, "cpu"
    return None, None


def _time(client, fn, reps: int) -> float:
    return cubepy.bench(fn, client=client, warmup=3, reps=reps).median_ms


def elementwise(client, n: int, reps: int) -> dict:
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    xt = client.tensor(host)
    row: dict = {"elements": n}
    fused = fz.explain(chain(fz.asarray(xt), fz))
    unfused = fz.explain(chain(fz.asarray(xt), fz), fuse=False)
    row["kernels"] = {"fused": len(fused), "unfused": len(unfused)}
    row["bytes_moved"] = {"fused": fused.bytes_moved, "unfused": unfused.bytes_moved}
    expect = chain(host, np)
    got = fz.eval(chain(fz.asarray(xt), fz)).numpy()
    row["max_abs_error"] = float(np.abs(got - expect).max())
    fused_fn = fz.compile(lambda t: chain(t, fz))
    unfused_fn = fz.compile(lambda t: chain(t, fz), fuse=False)
    ms = {"cubepy fused": _time(client, lambda: fused_fn(xt), reps),
          "cubepy unfused": _time(client, lambda: unfused_fn(xt), reps),
          # recorded and planned again at every call (fusion.eval), not traced once
          "cubepy fused, eager": _time(client, lambda: fz.eval(chain(fz.asarray(xt), fz)),
                                       reps)}
    torch, device = _torch_for(client)
    if torch is not None:
        tx = torch.from_numpy(host).to(device)
        ops = _TorchOps(torch)
        ms["torch eager"] = _time(client, lambda: chain(tx, ops), reps)
        row["bytes_moved"]["torch eager"] = unfused.bytes_moved  # one kernel per op too
        try:
            compiled = torch.compile(lambda t: chain(t, ops))
            compiled(tx)
            ms["torch.compile"] = _time(client, lambda: compiled(tx), reps)
            row["bytes_moved"]["torch.compile"] = 2 * n * 4
        except Exception as exc:  # no Triton / compiler for this device
            row["torch.compile"] = f"unavailable: {type(exc).__name__}: {exc}"[:200]
    row["ms"] = ms
    row["GB/s"] = {k: round(_moved(row, k) / v / 1e6, 1) for k, v in ms.items()}
    row["fused_vs_unfused"] = ms["cubepy unfused"] / ms["cubepy fused"]
    if "torch.compile" in ms:
        row["fused_vs_torch_compile"] = ms["cubepy fused"] / ms["torch.compile"]
    return row


def matmul_epilogue(client, size: int, reps: int) -> dict:
    rng = np.random.default_rng(1)
    a = client.tensor(rng.standard_normal((size, size)).astype(np.float32))
    b = client.tensor(rng.standard_normal((size, size)).astype(np.float32))
    bias = client.tensor(rng.standard_normal(size).astype(np.float32))
    A, B, C = fz.asarray(a), fz.asarray(b), fz.asarray(bias)
    plan = fz.explain(fz.relu(A @ B + C))
    alone = fz.compile(lambda x, y: x @ y)
    fused = fz.compile(lambda x, y, z: fz.relu(x @ y + z))
    ms = {"matmul alone": _time(client, lambda: alone(a, b), reps),
          "relu(a @ b + bias)": _time(client, lambda: fused(a, b, bias), reps)}
    flops = 2 * size ** 3
    return {"size": size, "kernels": len(plan), "fused_ops": plan.kernels[0].fused_ops,
            "bytes_moved": plan.bytes_moved, "ms": ms,
            "TFLOP/s": {k: round(flops / v / 1e9, 2) for k, v in ms.items()},
            "epilogue_ratio": ms["relu(a @ b + bias)"] / ms["matmul alone"]}


def _moved(row: dict, name: str) -> int:
    """Bytes a variant moves: its plan's (fused / unfused), else one read and one write."""
    key = name.replace("cubepy ", "").replace(", eager", "")
    return row["bytes_moved"].get(key, 2 * row["elements"] * 4)


def markdown(report: dict) -> str:
    e, m = report["elementwise"], report["matmul"]
    lines = [f"# cubepy.fusion on {report['device']}", "", f"Host: {report['host']}", "",
             f"## 10-op element-wise chain, {e['elements']:,} f32", "",
             "| | ms | GB/s | bytes moved |", "|---|---|---|---|"]
    for k, v in e["ms"].items():
        moved = _moved(e, k)
        lines.append(f"| {k} | {v:.3f} | {e['GB/s'][k]} | {moved:,} |")
    lines += ["", f"Fused is {e['fused_vs_unfused']:.2f}x faster than unfused "
              f"({e['kernels']['fused']} kernel vs {e['kernels']['unfused']})."]
    if "fused_vs_torch_compile" in e:
        lines.append(f"Fused takes {e['fused_vs_torch_compile']:.3f}x torch.compile's time.")
    lines += ["", f"## relu(a @ b + bias), {m['size']}^3 f32", "",
              "| | ms | TFLOP/s |", "|---|---|---|"]
    for k, v in m["ms"].items():
        lines.append(f"| {k} | {v:.3f} | {m['TFLOP/s'][k]} |")
    lines += ["", f"{m['kernels']} kernel ({', '.join(m['fused_ops'])}); the fused add and "
              f"max take {m['epilogue_ratio']:.3f}x the matmul alone."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    client = cubepy.client(args.runtime)
    gpu = client.runtime == "cuda" or not getattr(client, "is_software", True)
    n = (64 << 20) if gpu and not args.quick else (4 << 20) if gpu else (1 << 20)
    size = 4096 if gpu and not args.quick else 1024 if gpu else 256
    reps = 20 if gpu else 5
    report = {"device": f"{client.runtime}: {client.device}", "host": describe_host(),
              "elementwise": elementwise(client, n, reps),
              "matmul": matmul_epilogue(client, size, reps)}
    print(markdown(report))
    tag = re.sub(r"[^a-z0-9]+", "-", client.runtime + "-" + client.device.lower())[:40]
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"fusion_{tag.strip('-')}")
    with open(base + ".json", "w") as fh:
        json.dump(report, fh, indent=2)
    with open(base + ".md", "w") as fh:
        fh.write(markdown(report))
    print(f"wrote {base}.json and .md")


if __name__ == "__main__":
    main()
