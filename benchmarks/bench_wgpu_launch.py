"""wgpu launch overhead: cubepy's launch against raw wgpu-py on the same WGSL, one run.

    python benchmarks/bench_wgpu_launch.py [--launches 2000] [--syncs 200] [--repeats 7]
                                           [--name wgpu_launch_local] [--max-batch N]

Two questions, each answered as a ratio cubepy / raw wgpu-py measured in the same run
(the interleaved repeats share the machine's drift; the best run is reported, as
other processes on a shared machine only ever add time):

- Batched: N back-to-back launches of a tiny kernel (add one to 64 floats), then one
  wait, per launch. cubepy records them into one open compute pass and submits every
  `MAX_BATCH` dispatches, from a thread of its own (cubepy/runtime/wgpu_submit.py); a
  second cubepy row submits each batch from the launching thread, as cubepy did before
  (the A/B of that thread, in the same run). The raw peers run the same WGSL
  (`kernel.source`-equivalent, its own pipeline and bind group on the same device)
  three ways: submits of `MAX_BATCH` dispatches (cubepy's strategy), all N dispatches
  in one submit, and one encoder + submit per dispatch. Each raw launch calls `set_bind_group` and
  `dispatch_workgroups`, as a hand-written host loop does. "record" columns are the
  host time before the wait.
- Launch + sync: one launch then `client.sync()`, against raw encoder + pass + dispatch
  + submit + wait. The raw wait is `device._poll_wait()` (wgpuDevicePoll; the fastest
  wait wgpu-py 0.32 has) and, as another peer, `queue.read_buffer` of 4 bytes; a third
  peer records with cubepy's own pipeline and bind group (its info struct bound at a
  dynamic offset), so that only the host code differs.

On a software adapter (llvmpipe) the shaders run on the host's own cores, so times that
include the wait include the kernels' execution; the ratios are what carries over to a
GPU. Saves benchmarks/results/<name>.json and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

import cubepy  # noqa: E402
from cubepy.runtime import wgpu_runtime  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host import describe_host  # noqa: E402

from bench_wgpu import CUBE_COUNT, CUBE_DIM, N_ELEMS, RawWgpu, add_one  # noqa: E402


class Raw(RawWgpu):
    """A hand-written wgpu-py host for the WGSL cubepy emits for `add_one` (bench_wgpu's
    host, on the same device), with the launch patterns this benchmark compares."""

    def poll_wait(self) -> None:
        self.device._poll_wait()

    def read_wait(self) -> None:
        self.queue.read_buffer(self.x, 0, 4)

    def batched(self, launches: int, per_submit: int) -> tuple[float, float]:
        """(record, total) seconds per launch: submits of `per_submit` dispatches."""
        start = time.perf_counter()
        done = 0
        while done < launches:
            encoder = self.device.create_command_encoder()
            cpass = encoder.begin_compute_pass()
            cpass.set_pipeline(self.pipeline)
            for _ in range(min(per_submit, launches - done)):
                cpass.set_bind_group(0, self.bind_group)
                cpass.dispatch_workgroups(*CUBE_COUNT)
            cpass.end()
            self.queue.submit([encoder.finish()])
            done += per_submit
        recorded = time.perf_counter() - start
        self.poll_wait()
        return recorded / launches, (time.perf_counter() - start) / launches

    def launch_sync(self, syncs: int, wait, same_as=None) -> float:
        """Seconds per (encoder + pass + dispatch + submit + wait). `same_as`: cubepy's
        executable, whose pipeline and bind group (info at offset 0) to use instead."""
        pipeline, group, offsets = self.pipeline, self.bind_group, ()
        if same_as is not None:
            pipeline, group, offsets = same_as.pipeline, next(iter(
                same_as.bind_groups.values())), (0,)
        start = time.perf_counter()
        for _ in range(syncs):
            encoder = self.device.create_command_encoder()
            cpass = encoder.begin_compute_pass()
            cpass.set_pipeline(pipeline)
            cpass.set_bind_group(0, group, offsets)
            cpass.dispatch_workgroups(*CUBE_COUNT)
            cpass.end()
            self.queue.submit([encoder.finish()])
            wait()
        return (time.perf_counter() - start) / syncs


def cubepy_batched(client, x, launches: int) -> tuple[float, float]:
    """(record, total) seconds per launch of N launches then one sync."""
    start = time.perf_counter()
    for _ in range(launches):
        add_one.launch(client, CUBE_COUNT, CUBE_DIM, x)
    recorded = time.perf_counter() - start
    client.sync()
    return recorded / launches, (time.perf_counter() - start) / launches


def cubepy_batched_one_submit(client, x, launches: int) -> tuple[float, float]:
    """cubepy_batched with the batch bounds lifted: every launch in one submit, the peer
    of raw_batched_one_submit (on a software adapter, no kernel runs during the loop)."""
    saved = wgpu_runtime.MAX_BATCH, getattr(wgpu_runtime, "BATCH_SECONDS", None)
    wgpu_runtime.MAX_BATCH, wgpu_runtime.BATCH_SECONDS = launches, float("inf")
    try:
        return cubepy_batched(client, x, launches)
    finally:
        wgpu_runtime.MAX_BATCH, wgpu_runtime.BATCH_SECONDS = saved


def cubepy_batched_submit_here(client, x, launches: int) -> tuple[float, float]:
    """cubepy_batched with every batch submitted by the launching thread itself, as
    before batches went to the submitting thread (cubepy/runtime/wgpu_submit.py)."""
    submitter = client._submitter

    def hand(encoder, info):
        submitter.drain()
        submitter.submit(encoder, info)
    submitter.hand = hand
    try:
        return cubepy_batched(client, x, launches)
    finally:
        del submitter.hand


def cubepy_launch_sync(client, x, syncs: int) -> float:
    start = time.perf_counter()
    for _ in range(syncs):
        add_one.launch(client, CUBE_COUNT, CUBE_DIM, x)
        client.sync()
    return (time.perf_counter() - start) / syncs


def _load() -> str:
    """The 1-minute load average (other processes share a test machine's cores)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


def measure(launches: int, syncs: int, repeats: int) -> dict:
    load = _load()
    client = cubepy.client("wgpu")
    raw = Raw(client)
    x = client.tensor(np.zeros(N_ELEMS, np.float32))
    batch = wgpu_runtime.MAX_BATCH
    runs: dict[str, list] = {}
    add_one.launch(client, CUBE_COUNT, CUBE_DIM, x)
    client.sync()
    plan = add_one._newest_plan  # the launch's executable, for the same-objects peer

    def run(name, fn):
        runs.setdefault(name, []).append(fn())

    variants = [
        ("cubepy_batched", lambda: cubepy_batched(client, x, launches)),
        ("raw_batched_same_chunks", lambda: raw.batched(launches, batch)),
        ("cubepy_batched_submit_here", lambda: cubepy_batched_submit_here(client, x, launches)),
        ("cubepy_batched_one_submit", lambda: cubepy_batched_one_submit(client, x, launches)),
        ("raw_batched_one_submit", lambda: raw.batched(launches, launches)),
        ("raw_submit_per_launch", lambda: raw.batched(launches, 1)),
        ("cubepy_launch_sync", lambda: cubepy_launch_sync(client, x, syncs)),
        ("raw_launch_sync_poll", lambda: raw.launch_sync(syncs, raw.poll_wait)),
        ("raw_launch_sync_read_buffer", lambda: raw.launch_sync(syncs, raw.read_wait)),
        ("raw_launch_sync_poll_cubepy_objects",
         lambda: raw.launch_sync(syncs, raw.poll_wait, plan.executable)),
    ]
    for name, fn in variants:  # warm-up: compile, plan, caches
        fn()
    runs.clear()
    for _ in range(repeats):  # interleaved, so drift hits every variant alike
        for name, fn in variants:
            run(name, fn)
    # x: the three cubepy batches, cubepy's launch + sync and the same-objects peer (which
    # binds x through cubepy's bind group), every repeat and the warm-up, and one more.
    want = ((3 * launches + 2 * syncs) * (repeats + 1) + 1) * 1.0
    got = x.numpy()
    assert np.all(got == want), f"launches were lost: {got[0]} != {want}"

    def med(name, part=None):
        # The best run: on a shared machine other processes only ever add time.
        values = runs[name] if part is None else [v[part] for v in runs[name]]
        return round(min(values) * 1e6, 2)

    us = {name: med(name, 1) for name in runs if name.startswith(("cubepy_b", "raw_b",
                                                                   "raw_s"))}
    us.update({name: med(name) for name in runs if "sync" in name})
    record = {name: med(name, 0) for name in runs
              if name.startswith(("cubepy_b", "raw_b", "raw_s"))}
    ratios = {
        "batched_vs_raw_same_chunks": us["cubepy_batched"] / us["raw_batched_same_chunks"],
        "batched_vs_batched_submit_here":
            us["cubepy_batched"] / us["cubepy_batched_submit_here"],
        "batched_vs_raw_one_submit":
            us["cubepy_batched_one_submit"] / us["raw_batched_one_submit"],
        "batched_vs_raw_submit_per_launch":
            us["cubepy_batched"] / us["raw_submit_per_launch"],
        "batched_record_vs_raw_same_chunks":
            record["cubepy_batched"] / record["raw_batched_same_chunks"],
        "batched_record_vs_raw_one_submit":
            record["cubepy_batched_one_submit"] / record["raw_batched_one_submit"],
        "launch_sync_vs_raw_poll": us["cubepy_launch_sync"] / us["raw_launch_sync_poll"],
        "launch_sync_vs_raw_poll_cubepy_objects":
            us["cubepy_launch_sync"] / us["raw_launch_sync_poll_cubepy_objects"],
        "launch_sync_vs_raw_read_buffer":
            us["cubepy_launch_sync"] / us["raw_launch_sync_read_buffer"],
        # The median over repeats of each repeat's own ratio: the runs of one repeat
        # follow each other, so they share the machine's load at that moment.
        "launch_sync_vs_raw_poll_paired_median": statistics.median(
            a / b for a, b in zip(runs["cubepy_launch_sync"], runs["raw_launch_sync_poll"])),
        "launch_sync_vs_raw_poll_cubepy_objects_paired_median": statistics.median(
            a / b for a, b in zip(runs["cubepy_launch_sync"],
                                  runs["raw_launch_sync_poll_cubepy_objects"])),
    }
    import wgpu
    return {
        "machine": f"{describe_host()}; wgpu-py {wgpu.__version__}, adapter {client.device}"
                   f"; load average {load} when it started",
        "date": time.strftime("%Y-%m-%d"),
        "launches": launches, "syncs": syncs, "repeats": repeats, "max_batch": batch,
        "batch_seconds": getattr(wgpu_runtime, "BATCH_SECONDS", None),
        "us_per_launch": us,
        "us_per_launch_before_wait": record,
        "ratios_cubepy_over_raw": {k: round(v, 3) for k, v in ratios.items()},
    }


def markdown(result: dict, before: dict | None = None) -> str:
    u, r, q = (result["us_per_launch"], result["us_per_launch_before_wait"],
               result["ratios_cubepy_over_raw"])
    lines = [
        f"# wgpu launch overhead, {result['date']}",
        "",
        f"Machine: {result['machine']}.",
        f"Best of {result['repeats']} interleaved runs; batched: {result['launches']} "
        f"launches of a tiny kernel (64 f32, one cube of 64 units) then one wait; "
        f"launch + sync: {result['syncs']} of each. cubepy submits every "
        f"{result['max_batch']} dispatches"
        + (f" or once a batch is {result['batch_seconds'] * 1e3:g} ms old"
           if result.get("batch_seconds") else "") + ".",
        "",
        "| batched, per launch | us, wait included | us before the wait |",
        "| --- | --- | --- |",
        f"| cubepy `kernel.launch` | {u['cubepy_batched']:.2f} | {r['cubepy_batched']:.2f} |",
        f"| raw wgpu-py, a submit per {result['max_batch']} dispatches (cubepy's count "
        f"bound) | {u['raw_batched_same_chunks']:.2f} | "
        f"{r['raw_batched_same_chunks']:.2f} |",
        f"| cubepy `kernel.launch`, each batch submitted by the launching thread | "
        f"{u['cubepy_batched_submit_here']:.2f} | {r['cubepy_batched_submit_here']:.2f} |",
        f"| cubepy `kernel.launch`, all in one submit (batch bounds lifted) | "
        f"{u['cubepy_batched_one_submit']:.2f} | {r['cubepy_batched_one_submit']:.2f} |",
        f"| raw wgpu-py, all dispatches in one submit | {u['raw_batched_one_submit']:.2f} | "
        f"{r['raw_batched_one_submit']:.2f} |",
        f"| raw wgpu-py, an encoder and a submit per dispatch | "
        f"{u['raw_submit_per_launch']:.2f} | {r['raw_submit_per_launch']:.2f} |",
        "",
        "| launch + sync | us |",
        "| --- | --- |",
        f"| cubepy `kernel.launch` + `client.sync()` | {u['cubepy_launch_sync']:.1f} |",
        f"| raw wgpu-py, submit + `device._poll_wait()` | {u['raw_launch_sync_poll']:.1f} |",
        f"| raw wgpu-py, submit + `device._poll_wait()`, cubepy's pipeline and bind "
        f"group (the same work) | {u['raw_launch_sync_poll_cubepy_objects']:.1f} |",
        f"| raw wgpu-py, submit + `queue.read_buffer` (4 bytes) | "
        f"{u['raw_launch_sync_read_buffer']:.1f} |",
        "",
        "| ratio cubepy / raw | value |",
        "| --- | --- |",
    ]
    lines += [f"| {k.replace('_', ' ')} | {v:.2f} |" for k, v in q.items()]
    if before:
        bu, bq = before["us_per_launch"], before["ratios_cubepy_over_raw"]
        lines += [
            "",
            f"Before this change (the previous runtime, same machine and script, "
            f"{before['date']}):",
            "",
            "| | before | after |",
            "| --- | --- | --- |",
            f"| cubepy batched, us per launch, wait included | "
            f"{bu['cubepy_batched']:.2f} | {u['cubepy_batched']:.2f} |",
            f"| cubepy batched, us per launch before the wait | "
            f"{before['us_per_launch_before_wait']['cubepy_batched']:.2f} | "
            f"{r['cubepy_batched']:.2f} |",
            f"| cubepy all in one submit, us per launch before the wait | "
            f"{before['us_per_launch_before_wait']['cubepy_batched_one_submit']:.2f} | "
            f"{r['cubepy_batched_one_submit']:.2f} |",
            f"| cubepy launch + sync, us | {bu['cubepy_launch_sync']:.1f} | "
            f"{u['cubepy_launch_sync']:.1f} |",
        ]
        lines += [f"| ratio {k.replace('_', ' ')} | {bq[k]:.2f} | {q[k]:.2f} |"
                  for k in q if k in bq]
    lines += ["", "On a software adapter (llvmpipe) the kernels run on the host's cores, "
              "beside the host loop: times with the wait include their execution, and so "
              "do the batched times before the wait where batches are submitted during "
              "the loop. There the host cost of a launch is the all-in-one-submit row "
              "before the wait, and launch + sync is best read as the paired medians "
              "(other processes share the cores)."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--syncs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-batch", type=int,
                        help="dispatches per submit for cubepy (and the same-chunks peer)")
    parser.add_argument("--before", type=Path,
                        help="a JSON of this script from an earlier runtime, to compare")
    parser.add_argument("--name", default="wgpu_launch_local",
                        help="results file stem under benchmarks/results/")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args()
    if args.max_batch:
        wgpu_runtime.MAX_BATCH = args.max_batch
    result = measure(args.launches, args.syncs, args.repeats)
    before = json.loads(args.before.read_text()) if args.before else None
    if before:
        result["before"] = before
    text = markdown(result, before)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / f"{args.name}.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
