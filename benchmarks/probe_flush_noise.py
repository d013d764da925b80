"""Why some CUDA benchmark rows spread: the L2 flush before each repetition, by kind.

    python benchmarks/probe_flush_noise.py [--reps 60] [--wgpu] [--out FILE.json]

`cubepy.bench` cleared a 256 MiB scratch buffer before each timed launch (a `memset`),
as Triton's `do_bench` does, until this probe showed what that costs; it now reads
it (`read` below, cubepy/l2_flush.py). A cleared buffer leaves L2 full of dirty lines,
which the timed kernel's own traffic must write back to memory first; how much of that write-back
is still pending when the kernel starts may vary from repetition to repetition. This
probe times short kernels with CUDA events right around the launch, on the client's
stream, after each of these flushes:

- `memset`: the scratch buffer cleared (what Triton's `do_bench` does);
- `memset + read`: cleared, then read whole by a sum kernel, so L2 holds clean lines;
- `read`: only read;
- `none`: no flush (a warm L2: the kernel's own inputs from the previous repetition).

Kernels: layernorm f32 and f16 at 4096 x 1600 and softmax at 4096 x 1000 (their plans
chosen first), rows that spread in earlier runs. With `--wgpu`, a wgpu client is made
and runs the same softmax first, as in a benchmark run over both runtimes (whose
CUDA rows were the ones that spread). Prints per kernel and flush the median,
the IQR and the share of repetitions more than 3 us above the first quartile; writes
every time as JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cubepy  # noqa: E402
from cubepy import f16, f32  # noqa: E402
from benchmarks.host import describe_host  # noqa: E402
from benchmarks.kernels import layernorm, reduce_sum, softmax  # noqa: E402

SCRATCH_WORDS = 256 * 1024 * 1024 // 4


def kernels(client) -> dict:
    """name -> a callable launching the kernel on `client` (inputs made once)."""
    rng = np.random.default_rng(0)
    out = {}
    for dt, name in ((f32, "layernorm f32 4096x1600"), (f16, "layernorm f16 4096x1600")):
        x = client.tensor(rng.standard_normal((4096, 1600)).astype(dt.numpy))
        w = client.tensor(rng.standard_normal(1600).astype(dt.numpy))
        b = client.tensor(rng.standard_normal(1600).astype(dt.numpy))
        y = client.zeros((4096, 1600), dt)
        out[name] = (lambda x=x, w=w, b=b, y=y:
                     layernorm.run(client, x, w, b, y, checked=False))
    xs = client.tensor(rng.standard_normal((4096, 1000)).astype(np.float32))
    ys = client.zeros((4096, 1000), f32)
    out["softmax 4096x1000"] = lambda: softmax.run(client, xs, ys, checked=False)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=60)
    ap.add_argument("--wgpu", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.wgpu:
        other = cubepy.client("wgpu")
        kernels(other)["softmax 4096x1000"]()
        other.sync()
    client = cubepy.client("cuda")
    import pycuda.driver as cuda
    client._activate()
    stream = client._stream
    scratch = client.zeros((SCRATCH_WORDS,), f32)
    total = client.zeros((1,), f32)

    def memset():
        cuda.memset_d32_async(client._data_pointer(scratch.handle), 0, SCRATCH_WORDS,
                              stream)

    def read():
        reduce_sum.run(client, scratch, total, checked=False)

    flushes = {"memset": memset, "memset + read": lambda: (memset(), read()),
               "read": read, "none": lambda: None}
    start, end = cuda.Event(), cuda.Event()
    times: dict[str, dict[str, list[float]]] = {}
    for kname, launch in kernels(client).items():
        for _ in range(3):  # plans chosen, code compiled
            launch()
        client.sync()
        times[kname] = {f: [] for f in flushes}
        for rep in range(args.reps):
            for fname, flush in flushes.items():  # interleaved, one of each per round
                flush()
                start.record(stream)
                launch()
                end.record(stream)
                end.synchronize()
                times[kname][fname].append(float(end.time_since(start)))
    for kname, per in times.items():
        for fname, ts in per.items():
            q1, med, q3 = (float(v) for v in np.percentile(ts, [25, 50, 75]))
            slow = sum(t > q1 + 0.003 for t in ts) / len(ts)
            print(f"{kname:26s} {fname:14s} median {med * 1e3:7.2f} us  IQR "
                  f"{(q3 - q1) * 1e3:5.2f}  min {min(ts) * 1e3:7.2f}  "
                  f"slow (> Q1 + 3 us) {slow:4.0%}")
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"host": describe_host(), "device": client.device, "reps": args.reps,
             "wgpu_client": args.wgpu, "times_ms": times}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
