"""A copy shader written directly against wgpu-py: the bandwidth roofline on wgpu.

`vec4<f32>` loads and stores, a grid-stride loop over a fixed number of workgroups, and
the pass's own timestamp writes (when the adapter has `timestamp-query`; else wall time
around submit and wait). Before each timed pass the command buffer reads a zeroed 256
MiB scratch buffer whole (a pass of its own), as `cubepy.bench` and the CUDA peers do,
so the copy starts with a cold, clean L2 (a same-size copy of a few MiB would otherwise
read from L2). The repetitions are recorded into one command buffer and their timestamps
read once after it, as `cubepy.bench` queues its own.
"""
from __future__ import annotations

import time

import numpy as np

from cubepy import BenchResult
from cubepy.timing import FLUSH_BYTES

SHADER = """
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    for (var i = gid.x; i < arrayLength(&dst); i += stride) {
        dst[i] = src[i];
    }
}
"""
MAX_QUEUED_REPS = 2048  # repetitions per command buffer: a query set holds 4096 timestamps
GROUPS = 4096  # at most: enough to fill a large GPU, each walking the rest

# The flush before each timed pass, as cubepy/l2_flush.py's kernel: it stores only a set
# bit, which the zeroed scratch buffer never has.
READ_SHADER = """
@group(0) @binding(0) var<storage, read> scratch: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> found: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    var acc = vec4<u32>(0u);
    for (var i = gid.x; i < arrayLength(&scratch); i += stride) {
        acc = acc | scratch[i];
    }
    if (any(acc != vec4<u32>(0u))) {
        found[0] = acc.x | acc.y | acc.z | acc.w;
    }
}
"""
READ_GROUPS = 1024


class WgpuCopy:
    """Copies an f32 array of `n` elements (a multiple of 4) on the default adapter."""

    def __init__(self, n: int):
        import wgpu
        self.wgpu = wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        self.timestamps = "timestamp-query" in adapter.features
        nbytes = 4 * n
        self.groups = max(1, min(GROUPS, -(-n // (4 * 256))))
        limits = {k: adapter.limits[k] for k in ("max-storage-buffer-binding-size",
                                                 "max-buffer-size")}
        self.device = adapter.request_device_sync(
            required_features=["timestamp-query"] if self.timestamps else [],
            required_limits=limits)
        usage = (wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
                 | wgpu.BufferUsage.COPY_SRC)  # (COPY_SRC: tests read it back)
        self.src = self.device.create_buffer(size=nbytes, usage=usage)
        self.dst = self.device.create_buffer(size=nbytes, usage=usage)
        # (not on a software adapter, which has no L2 to clear, as cubepy.bench)
        software = str(adapter.info.get("adapter_type", "")).lower() == "cpu"
        self.pipeline, self.bind_group = self._pipeline(SHADER, self.src, self.dst)
        self.flush = None if software else self._pipeline(
            READ_SHADER, self.device.create_buffer(  # (wgpu zero-fills new buffers)
                size=min(FLUSH_BYTES, min(limits.values())) // 16 * 16,
                usage=wgpu.BufferUsage.STORAGE),
            self.device.create_buffer(size=4, usage=wgpu.BufferUsage.STORAGE))

    def _pipeline(self, code: str, *buffers) -> tuple:
        """A compute pipeline of `code` and the bind group of `buffers` (bindings 0..)."""
        module = self.device.create_shader_module(code=code)
        pipeline = self.device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"})
        bind_group = self.device.create_bind_group(
            layout=pipeline.get_bind_group_layout(0),
            entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(buffers)])
        return pipeline, bind_group

    def _record(self, encoder, queries=None, first: int = 0) -> None:
        """One repetition: the flush pass, then the copy's pass, timestamps `first` and
        `first + 1` of `queries` at its beginning and end (when given)."""
        if self.flush is not None:  # a cold, clean L2 for the timed pass
            fpass = encoder.begin_compute_pass()
            fpass.set_pipeline(self.flush[0])
            fpass.set_bind_group(0, self.flush[1])
            fpass.dispatch_workgroups(READ_GROUPS)
            fpass.end()
        writes = None if queries is None else {
            "query_set": queries, "beginning_of_pass_write_index": first,
            "end_of_pass_write_index": first + 1}
        cpass = encoder.begin_compute_pass(timestamp_writes=writes)
        cpass.set_pipeline(self.pipeline)
        cpass.set_bind_group(0, self.bind_group)
        cpass.dispatch_workgroups(self.groups)
        cpass.end()

    def _run_queued(self, reps: int) -> list[float]:
        """`reps` repetitions in one command buffer, each pass with its own timestamps,
        read once after it (as `cubepy.bench` queues its repetitions)."""
        wgpu = self.wgpu
        queries = self.device.create_query_set(type=wgpu.QueryType.timestamp,
                                               count=2 * reps)
        size = 16 * reps
        resolve = self.device.create_buffer(
            size=size, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        read = self.device.create_buffer(
            size=size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        encoder = self.device.create_command_encoder()
        for i in range(reps):
            self._record(encoder, queries, 2 * i)
        encoder.resolve_query_set(queries, 0, 2 * reps, resolve, 0)
        encoder.copy_buffer_to_buffer(resolve, 0, read, 0, size)
        self.device.queue.submit([encoder.finish()])
        read.map_sync(wgpu.MapMode.READ)
        t = np.frombuffer(read.read_mapped(), dtype=np.uint64).copy()
        read.unmap()
        return [float(t[2 * i + 1] - t[2 * i]) * 1e-6 for i in range(reps)]

    def _run_walled(self) -> float:
        """One repetition timed by the host's clock (no timestamp-query)."""
        encoder = self.device.create_command_encoder()
        self._record(encoder)
        t0 = time.perf_counter()
        self.device.queue.submit([encoder.finish()])
        self.device.queue.on_submitted_work_done_sync()
        return (time.perf_counter() - t0) * 1e3

    def bench(self, warmup: int, reps: int) -> BenchResult:
        if not self.timestamps:
            for _ in range(warmup):
                self._run_walled()
            return BenchResult(tuple(self._run_walled() for _ in range(reps)), "wall")
        if warmup:
            self._run_queued(warmup)
        times: list[float] = []
        while len(times) < reps:
            times += self._run_queued(min(reps - len(times), MAX_QUEUED_REPS))
        return BenchResult(tuple(times), "wgpu-timestamps")
