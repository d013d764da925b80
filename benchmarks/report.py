"""Writes the rows of `python -m benchmarks`: JSON, a markdown table with the issue's
targets checked, and one PNG chart per kernel (matplotlib, optional)."""
from __future__ import annotations

import json
from pathlib import Path

# (kernel prefix, peer impl, least ratio of cubepy to the peer); "copy" is the best copy
# bandwidth measured on the same runtime.
TARGETS = [
    ("matmul", "torch (cuBLAS, TF32 off)", 0.70),
    ("matmul_tc", "torch (cuBLAS)", 0.70),
    ("matmul_fp8", "torch._scaled_mm (cuBLAS)", 0.70),
    ("softmax", "triton (tutorial)", 1.00),
    ("softmax", "copy", 0.85),
    ("softmax", "torch copy_ (same size)", 0.85),  # the copy of the softmax's own bytes
    ("layernorm", "triton (tutorial)", 1.00),
    ("sum", "copy", 0.85),
    ("elementwise", "copy", 0.95),
]
WGPU_VS_CUDA = 0.80
# On wgpu: the same standard against the copy of the kernel's own bytes on wgpu, which
# shows how much of a wgpu-vs-CUDA gap is Vulkan's and how much the kernel's.
WGPU_TARGETS = [
    ("softmax", "raw wgpu-py copy (same size)", 0.85),
    ("layernorm", "raw wgpu-py copy (same size)", 0.85),
]


def write_json(rows: list[dict], meta: dict, path: Path) -> None:
    path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")


def _ok(rows: list[dict]) -> list[dict]:
    return [r for r in rows if not r.get("error")]


def copy_bandwidth(rows: list[dict], runtime: str) -> float | None:
    """The best copy bandwidth measured on a runtime (the roofline of memory-bound kernels)."""
    values = [r["value"] for r in _ok(rows) if r["kernel"] == "copy" and r["runtime"] == runtime]
    return max(values) if values else None


def target_lines(rows: list[dict]) -> list[str]:
    """One line per target of the issue that these rows can check."""
    ok = _ok(rows)
    lines = []
    for r in ok:
        if not r["impl"].startswith("cubepy"):
            continue
        for prefix, peer, least in TARGETS:
            if not r["kernel"].startswith(prefix) or r["runtime"] != "cuda":
                continue
            if peer == "copy":
                ref = copy_bandwidth(rows, r["runtime"])
            else:
                ref = next((p["value"] for p in ok if p["impl"] == peer
                            and p["kernel"] == r["kernel"] and p["size"] == r["size"]), None)
            if ref:
                lines.append(_verdict(r, peer, r["value"] / ref, least))
        if r["runtime"] == "wgpu":
            cuda = next((p["value"] for p in ok if p["runtime"] == "cuda" and
                         p["impl"] == r["impl"] and p["kernel"] == r["kernel"]
                         and p["size"] == r["size"]), None)
            if cuda:
                lines.append(_verdict(r, "cubepy on cuda", r["value"] / cuda, WGPU_VS_CUDA))
            for prefix, peer, least in WGPU_TARGETS:
                ref = next((p["value"] for p in ok if p["impl"] == peer and
                            p["kernel"] == r["kernel"] and p["size"] == r["size"]), None)
                if r["kernel"].startswith(prefix) and ref:
                    lines.append(_verdict(r, peer, r["value"] / ref, least))
    return lines


def _verdict(r: dict, peer: str, ratio: float, least: float) -> str:
    mark = "met" if ratio >= least else "**missed**"
    return (f"| {r['kernel']} | {r['size']} | {r['impl']} [{r['runtime']}] | {peer} | "
            f"{ratio:.0%} | {least:.0%} | {mark} |")


def write_markdown(rows: list[dict], meta: dict, path: Path, charts: list[Path]) -> None:
    out = [f"# cubepy kernels vs peers ({meta['tag']})", "",
           f"- host: {meta['host']}", f"- devices: {'; '.join(meta['devices'])}",
           f"- tier: {meta['tier']} (warmup {meta['warmup']}, reps {meta['reps']}; "
           f"median of the repetitions, IQR as the spread)",
           f"- command: `{meta['command']}`", "",
           "| kernel | size | impl | runtime | median ms | IQR ms | value | check |",
           "| --- | --- | --- | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['kernel']} | {r['size']} | {r['impl']} | {r['runtime']} | "
                       f"| | | error: {r['error'].splitlines()[0][:80]} |")
            continue
        impl = f"{r['impl']} ({r['plan']})" if r.get("plan") else r["impl"]
        out.append(f"| {r['kernel']} | {r['size']} | {impl} | {r['runtime']} | "
                   f"{r['median_ms']:.4f} | {r['iqr_ms']:.4f} | {r['value']:.4g} "
                   f"{r['metric']} | {r['check']} |")
    targets = target_lines(rows)
    if targets:
        out += ["", "## Targets", "", "| kernel | size | cubepy | against | ratio | target "
                "| |", "| --- | --- | --- | --- | ---: | ---: | --- |", *targets]
    if charts:
        out += ["", "## Charts", ""] + [f"![{p.stem}]({p.name})" for p in charts]
    path.write_text("\n".join(out) + "\n")


def write_charts(rows: list[dict], folder: Path, tag: str) -> list[Path]:
    """One grouped bar chart per kernel: sizes on x, one bar per (impl, runtime).
    Returns [] with a message when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("charts skipped: matplotlib is not installed (pip install matplotlib)")
        return []
    paths = []
    ok = _ok(rows)
    for kernel in dict.fromkeys(r["kernel"] for r in ok):
        mine = [r for r in ok if r["kernel"] == kernel]
        sizes = list(dict.fromkeys(r["size"] for r in mine))
        series = list(dict.fromkeys(f"{r['impl']} [{r['runtime']}]" for r in mine))
        width = 0.8 / len(series)
        fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(sizes) + 0.5 * len(series)), 4))
        for k, name in enumerate(series):
            values = [next((r["value"] for r in mine if r["size"] == s and
                            f"{r['impl']} [{r['runtime']}]" == name), 0.0) for s in sizes]
            xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(sizes))]
            ax.bar(xs, values, width, label=name)
        ax.set_xticks(range(len(sizes)), sizes)
        ax.set_ylabel(mine[0]["metric"])
        ax.set_title(f"{kernel} ({tag})")
        ax.legend(fontsize="small", loc="best")
        fig.tight_layout()
        path = folder / f"kernels_{tag}_{kernel}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
