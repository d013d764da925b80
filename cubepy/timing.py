"""Timing launches on the device: `client.timer()` and `cubepy.bench(fn, *args)`.

What a timer measures depends on the runtime:

- cuda: CUDA events (`pycuda.driver.Event`) recorded on the client's stream, so the
  time is the GPU's, without Python or launch overhead in between repetitions;
- wgpu: timestamp queries when the device has the `timestamp-query` feature: `start()`
  opens the compute pass the timed launches go into, with the pass's own timestamps
  (`timestampWrites`) at its beginning and end, and `stop()` ends it; all of it is
  recorded into the launches' command buffer, so the host's time between submits is not
  counted. A raw wgpu-py program times its own pass the same way. (Work between start
  and stop that ends the pass, a copy or a submit, leaves the stop to a third
  timestamp, written inside the next pass where the device has
  `timestamp-query-inside-passes`, else as an empty pass of its own, whose boundaries
  add about 6 us on an H200.) Without the feature, the wall time from the first submit
  to the end of a `sync()`;
- cpu: wall time (`time.perf_counter`) around the work and a `sync()`.

`BenchResult.method` says which one was used.

On a GPU, `bench` reads a zeroed scratch buffer (256 MiB) whole right before each timed
repetition: the L2 cache holds none of the inputs (cold-cache numbers), and while the
GPU reads, the host queues the timed launch, so the time does not include the host's
launch overhead (without it, a 10 us kernel would be timed as long as Python takes to
launch it). Triton's `do_bench` clears such a buffer instead; a clear leaves L2 full of
dirty lines whose write-back the timed kernel pays, by a varying amount, where a read
leaves only clean lines (cubepy/l2_flush.py).

`bench` queues every repetition (flush, start, the call, stop) before it reads the first
time, and waits once, as Triton's `do_bench` does: the GPU runs the repetitions back to
back. Waiting for each one left the GPU idle for the host's round trip between them,
longer on wgpu (a submit, a mapped read of the timestamps) than on CUDA, and a GPU idle
that often does not hold its clocks up: on an H200, a wgpu client timed softmax 4096 x
1024 at 37.6 us right after its process started and at 12.9 us after the heavier
benchmark cases had run (benchmarks/results/wgpu_context_h200.md).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from .ir.batched_dataclass import build_pending, dataclass  # (frozen classes, cheap to create)
from .errors import LaunchError

__all__ = ["BenchResult", "Timer", "bench"]

FLUSH_BYTES = 256 << 20  # larger than any GPU's L2 today (H200: 50 MB)
MAX_QUEUED_REPS = 1024  # repetitions a wgpu timer queues at once: 3 timestamps each


@dataclass(frozen=True)
class BenchResult:
    """Times of the repetitions of one benchmark, in milliseconds."""

    times_ms: tuple[float, ...]
    method: str  # "cuda-events", "wgpu-timestamps", "wall"

    @property
    def median_ms(self) -> float:
        import statistics  # loaded at first use, not by `import cubepy`
        return statistics.median(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def max_ms(self) -> float:
        return max(self.times_ms)

    @property
    def iqr_ms(self) -> float:
        """The spread: the interquartile range (0 with fewer than 2 repetitions)."""
        if len(self.times_ms) < 2:
            return 0.0
        import statistics
        q = statistics.quantiles(self.times_ms, n=4, method="inclusive")
        return q[2] - q[0]

    def bandwidth_gbs(self, nbytes: int) -> float:
        """Bytes moved per repetition over the median time, in GB/s."""
        return nbytes / (self.median_ms * 1e-3) / 1e9

    def tflops(self, flops: int) -> float:
        """Operations per repetition over the median time, in TFLOP/s."""
        return flops / (self.median_ms * 1e-3) / 1e12

    def __str__(self) -> str:
        return (f"{self.median_ms:.4f} ms median (IQR {self.iqr_ms:.4f}, "
                f"min {self.min_ms:.4f}, max {self.max_ms:.4f}; {len(self.times_ms)} reps, "
                f"{self.method})")


class Timer:
    """Measures the device time of the work launched between `start()` and `stop()`
    (or inside `with timer:`). `elapsed_ms()` waits for the work and returns the time."""

    method = "wall"

    def __init__(self, client, flush_bytes: int = 0) -> None:
        self.client = client
        self.flush_bytes = 0  # the wall-time timer never flushes L2
        self._t0: float | None = None
        self._t1: float | None = None

    def start(self) -> None:
        self.client.sync()
        self._t0 = time.perf_counter()

    def stop(self) -> None:
        self.client.sync()
        self._t1 = time.perf_counter()

    def elapsed_ms(self) -> float:
        if self._t0 is None or self._t1 is None:
            raise RuntimeError("timer: call start() and stop() before elapsed_ms()")
        return (self._t1 - self._t0) * 1e3

    def time_reps(self, call: Callable[[], Any], reps: int) -> list[float]:
        """The time of each of `reps` calls of `call`, in ms, each timed as `start()`,
        the call, `stop()`. The GPU timers queue every repetition before they wait for
        the first time (see the module doc); this one times and waits for each."""
        times = []
        for _ in range(reps):
            self.start()
            call()
            self.stop()
            times.append(self.elapsed_ms())
        return times

    def __enter__(self) -> "Timer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class CudaEventTimer(Timer):
    """CUDA events on the client's stream."""

    method = "cuda-events"

    def __init__(self, client, flush_bytes: int = 0) -> None:
        super().__init__(client)
        import pycuda.driver as cuda
        client._activate()
        self._start, self._end = cuda.Event(), cuda.Event()
        self._recorded = 0
        self.flush_bytes = flush_bytes
        self._flush = _read_flush(client, flush_bytes)

    def start(self) -> None:
        self._record_start(self._start)
        self._recorded = 1

    def stop(self) -> None:
        self._record_stop(self._end)
        self._recorded = 2

    def _record_start(self, event) -> None:
        self.client._activate()
        if self._flush is not None:  # queued before the start event: see the module doc
            self._flush()
        event.record(self.client._stream)

    def _record_stop(self, event) -> None:
        self.client._activate()
        event.record(self.client._stream)

    def elapsed_ms(self) -> float:
        if self._recorded != 2:
            raise RuntimeError("timer: call start() and stop() before elapsed_ms()")
        self.client._activate()
        self._end.synchronize()
        return float(self._end.time_since(self._start))

    def time_reps(self, call: Callable[[], Any], reps: int) -> list[float]:
        import pycuda.driver as cuda
        events = [(cuda.Event(), cuda.Event()) for _ in range(reps)]
        for start, end in events:
            self._record_start(start)
            call()
            self._record_stop(end)
        self.client._activate()
        events[-1][1].synchronize()
        return [float(end.time_since(start)) for start, end in events]


class WgpuTimestampTimer(Timer):
    """Timestamps written by the GPU at the beginning and end of the timed launches'
    compute pass (a third one when that pass ends before `stop()`), resolved into a
    buffer read after the work."""

    method = "wgpu-timestamps"

    def __init__(self, client, flush_bytes: int = 0) -> None:
        super().__init__(client)
        self._query_set = client.timestamp_query_set(3)
        self._started = False
        self._stop: int | None = None  # the query holding the stop, once stopped
        self.flush_bytes = flush_bytes
        self._flush = _read_flush(client, flush_bytes)

    def start(self) -> None:
        self._open_timed_pass(self._query_set, 0)
        self._started, self._stop = True, None

    def _open_timed_pass(self, query_set, begin: int) -> None:
        """The flush (a launch recorded before the timed pass), then the timed pass with
        timestamps `begin` and `begin + 1`."""
        if self._flush is not None:
            self._flush()
        self.client.start_timed_pass(query_set, begin, begin + 1)

    def stop(self) -> None:
        if self._started:
            self._stop = self.client.stop_timed_pass(self._query_set, 2)

    def elapsed_ms(self) -> float:
        if self._stop is None:
            raise RuntimeError("timer: call start() and stop() before elapsed_ms()")
        stamps = self.client.read_timestamps(self._query_set, self._stop + 1)
        return (stamps[self._stop] - stamps[0]) * 1e-6  # WebGPU timestamps are ns

    def time_reps(self, call: Callable[[], Any], reps: int) -> list[float]:
        times: list[float] = []
        while len(times) < reps:  # (a query set holds at most 4096 timestamps)
            times += self._time_queued(call, min(reps - len(times), MAX_QUEUED_REPS))
        return times

    def _time_queued(self, call: Callable[[], Any], reps: int) -> list[float]:
        """`reps` timed passes, each submitted after its stop without a wait, then their
        timestamps read once. A submit per repetition keeps the runtime's batch bounds
        (a dispatch count, an age) from submitting inside a timed pass, which would count
        the host's time between two submits. Each repetition takes the next free
        indices: its pass's beginning and end, and a third only when the pass ended
        early (`stop_timed_pass`), so every timestamp resolved was written."""
        client = self.client
        queries = client.timestamp_query_set(3 * reps)
        spans = []
        free = 0
        for _ in range(reps):
            self._open_timed_pass(queries, free)
            call()
            stop = client.stop_timed_pass(queries, free + 2)
            client.flush()
            spans.append((free, stop))
            free = stop + 1
        stamps = client.read_timestamps(queries, free)
        return [(stamps[stop] - stamps[begin]) * 1e-6 for begin, stop in spans]


def _read_flush(client, flush_bytes: int):
    """The scratch-buffer read a GPU timer runs in `start()` (cubepy/l2_flush.py), or None
    without `flush_bytes`."""
    if not flush_bytes:
        return None
    from .l2_flush import ReadFlush
    return ReadFlush(client, flush_bytes)


def make_timer(client, flush_bytes: int = 0) -> Timer:
    """The most precise timer the client's runtime offers (see the module doc); with
    `flush_bytes`, GPU timers read a zeroed scratch buffer of that size in `start()`."""
    if client.runtime == "cuda":
        return CudaEventTimer(client, flush_bytes)
    if client.runtime == "wgpu" and "timestamp-query" in getattr(client, "features", ()):
        return WgpuTimestampTimer(client, flush_bytes)
    return Timer(client)


def default_flush_bytes(client) -> int:
    """FLUSH_BYTES on a real GPU (within its buffer limit), 0 on the cpu runtime and on
    software adapters (which have no L2 to flush and would only slow down)."""
    if client.runtime == "cuda" or (client.runtime == "wgpu"
                                    and not getattr(client, "is_software", False)):
        return largest_flush_bytes(client)
    return 0


def largest_flush_bytes(client) -> int:
    """FLUSH_BYTES, or the client's largest buffer when that is smaller (wgpu), in whole
    16-byte lines: the flush kernel binds the scratch buffer as one."""
    return min(FLUSH_BYTES, int(getattr(client, "_max_buffer", FLUSH_BYTES))) // 16 * 16


def _find_client(args: tuple, kwargs: dict):
    from .runtime.base import Client, DeviceTensor
    for a in (*args, *kwargs.values()):
        if isinstance(a, Client):
            return a
        if isinstance(a, DeviceTensor):
            return a.client
    return None


def bench(fn: Callable[..., Any], *args: Any, client=None, warmup: int = 3,
          reps: int = 20, flush: bool | None = None, **kwargs: Any) -> BenchResult:
    """Times `fn(*args, **kwargs)` on the device: `warmup` untimed calls (compilation,
    caches), then `reps` calls, each timed by the client's timer (on a GPU all of them
    queued before the first time is read: see the module doc).

    `flush` reads a zeroed 256 MiB scratch buffer before each repetition (default: on
    real GPUs; see the module doc for why).

    `client` defaults to the first client (or device tensor's client) among the
    arguments, so `cubepy.bench(kernel.launch, client, count, dim, x, y)` needs no more.
    Returns the times of every repetition; `.median_ms` and `.iqr_ms` summarise them.
    """
    if client is None:
        client = _find_client(args, kwargs)
    if client is None:
        raise LaunchError("cubepy.bench: no client among the arguments; pass client=...")
    if reps < 1 or warmup < 0:
        raise ValueError(f"cubepy.bench: reps must be >= 1 and warmup >= 0 "
                         f"(got reps={reps}, warmup={warmup})")
    for _ in range(warmup):
        fn(*args, **kwargs)
    client.sync()
    if flush is None:
        flush_bytes = default_flush_bytes(client)
    else:
        flush_bytes = largest_flush_bytes(client) if flush else 0
    timer = make_timer(client, flush_bytes)
    times = timer.time_reps(lambda: fn(*args, **kwargs), reps)
    return BenchResult(tuple(times), timer.method)


build_pending()  # (the frozen classes above)
