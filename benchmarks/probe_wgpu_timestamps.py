"""Where a wgpu timestamp is written changes what it measures: a raw wgpu-py copy timed
five ways.

    python benchmarks/probe_wgpu_timestamps.py [--reps 30] [--mib 16,64] [--out FILE.json]

The copy shader of benchmarks/wgpu_copy.py over 16 and 64 MiB (`--mib`), each way with and without
clearing a 256 MiB scratch buffer first (as `cubepy.bench` did then), median and minimum of
`--reps` submissions (microseconds):

- `own`: the copy pass's own `timestampWrites` (beginning and end of the pass);
- `in_pass`: timestamps written inside the copy pass, before and after the dispatch
  (`timestamp-query-inside-passes`, what cubepy's timer does where the device has it);
- `empty_both`: an empty pass writing a timestamp before the copy pass and another after
  (cubepy's timer on devices without that feature);
- `empty_start`: an empty pass before, the copy pass's own end timestamp;
- `own_start`: the copy pass's own beginning timestamp, an empty pass after.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.wgpu_copy import GROUPS, SHADER  # noqa: E402

MODES = ("own", "in_pass", "empty_both", "empty_start", "own_start")
SCRATCH_BYTES = 256 << 20


class Probe:
    """One device, its copy pipeline and a query set of two timestamps."""

    def __init__(self):
        import wgpu
        self.wgpu = wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        wanted = ["timestamp-query", "timestamp-query-inside-passes"]
        missing = [f for f in wanted if f not in adapter.features]
        if missing:
            raise SystemExit(f"the adapter lacks {', '.join(missing)}")
        self.adapter_name = adapter.info.get("device", "?")
        self.device = adapter.request_device_sync(required_features=wanted)
        module = self.device.create_shader_module(code=SHADER)
        self.pipeline = self.device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"})
        self.queries = self.device.create_query_set(type=wgpu.QueryType.timestamp, count=2)
        self.resolve = self.device.create_buffer(
            size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        self.read = self.device.create_buffer(
            size=16, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        self.scratch = self.device.create_buffer(size=SCRATCH_BYTES,
                                                 usage=wgpu.BufferUsage.COPY_DST)

    def buffers(self, nbytes: int):
        """A bind group copying `nbytes` between two fresh buffers, and its group count."""
        usage = self.wgpu.BufferUsage.STORAGE | self.wgpu.BufferUsage.COPY_DST
        src = self.device.create_buffer(size=nbytes, usage=usage)
        dst = self.device.create_buffer(size=nbytes, usage=usage)
        group = self.device.create_bind_group(
            layout=self.pipeline.get_bind_group_layout(0),
            entries=[{"binding": 0, "resource": {"buffer": src}},
                     {"binding": 1, "resource": {"buffer": dst}}])
        return group, max(1, min(GROUPS, -(-nbytes // (16 * 256))))

    def time_once(self, mode: str, clear: bool, group, groups: int) -> float:
        """One submission timed the way `mode` says; microseconds."""
        from wgpu.backends.wgpu_native.extras import write_timestamp
        encoder = self.device.create_command_encoder()
        if clear:
            encoder.clear_buffer(self.scratch)

        def empty_pass(index: int) -> None:
            encoder.begin_compute_pass(timestamp_writes={
                "query_set": self.queries, "beginning_of_pass_write_index": index}).end()

        writes: dict = {"query_set": self.queries}
        if mode in ("own", "own_start"):
            writes["beginning_of_pass_write_index"] = 0
        if mode in ("own", "empty_start"):
            writes["end_of_pass_write_index"] = 1
        if mode in ("empty_both", "empty_start"):
            empty_pass(0)
        cpass = encoder.begin_compute_pass(timestamp_writes=writes if len(writes) > 1
                                           else None)
        if mode == "in_pass":
            write_timestamp(cpass, self.queries, 0)
        cpass.set_pipeline(self.pipeline)
        cpass.set_bind_group(0, group)
        cpass.dispatch_workgroups(groups)
        if mode == "in_pass":
            write_timestamp(cpass, self.queries, 1)
        cpass.end()
        if mode in ("empty_both", "own_start"):
            empty_pass(1)
        return submit_and_read_us(self, encoder)


def submit_and_read_us(probe, encoder) -> float:
    """Resolves timestamps 0 and 1 of `probe.queries` at the end of `encoder`, submits it
    on `probe.device` and returns the time between them in microseconds (`probe.resolve`
    and `probe.read`: 16-byte resolve and mappable buffers)."""
    encoder.resolve_query_set(probe.queries, 0, 2, probe.resolve, 0)
    encoder.copy_buffer_to_buffer(probe.resolve, 0, probe.read, 0, 16)
    probe.device.queue.submit([encoder.finish()])
    probe.read.map_sync(probe.wgpu.MapMode.READ)
    stamps = np.frombuffer(probe.read.read_mapped(), dtype=np.uint64).copy()
    probe.read.unmap()
    return float(stamps[1] - stamps[0]) * 1e-3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--mib", default="16,64", help="copy sizes in MiB, comma-separated")
    parser.add_argument("--out", help="JSON file for every row")
    args = parser.parse_args(argv)
    probe = Probe()
    print(f"adapter: {probe.adapter_name}")
    rows = []
    for mib in (int(m) for m in args.mib.split(",")):
        group, groups = probe.buffers(mib << 20)
        for mode in MODES:
            for clear in (True, False):
                times = [probe.time_once(mode, clear, group, groups)
                         for _ in range(args.reps + 3)][3:]
                row = {"mib": mib, "mode": mode, "clear": clear,
                       "median_us": statistics.median(times), "min_us": min(times)}
                rows.append(row)
                print(f"{mib:3d} MiB  {mode:11s}  clear={clear!s:5}  median "
                      f"{row['median_us']:8.2f} us  min {row['min_us']:8.2f}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"adapter": probe.adapter_name, "rows": rows},
                                             indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
