"""client.timer() and cubepy.bench: device time of launches on every runtime present."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Comptime, CubeCount, CubeDim, Tensor, cube, f32

EXPECTED_METHOD = {"cpu": "wall", "wgpu": "wgpu-timestamps", "cuda": "cuda-events"}


@cube(launch=True)
def busy(x: Tensor[f32], loops: Comptime[int]):
    i = ABSOLUTE_POS
    v = x[i]
    for _ in range(loops):
        v = v * 1.0001 + 0.5
    x[i] = v


def _launch(client, x, loops):
    busy.launch(client, CubeCount(64), CubeDim(64), x, loops)


# Dependent steps of a launch timed once against a one-step launch: about 30 ms on
# llvmpipe, where a one-step launch timed alone can take a few ms on a loaded machine
# (3000 steps, about 3 ms, did not always stand out); about 60 us on an H200.
HEAVY_LOOPS = 30_000


def test_bench_measures_device_work(runtime_client):
    x = runtime_client.zeros((64 * 64,), f32)
    # A real GPU runs 3000 dependent steps in a few microseconds, about its fixed cost
    # per launch: give it enough work to stand out (software devices: 3000 is plenty).
    real_gpu = runtime_client.runtime == "cuda" or (
        runtime_client.runtime == "wgpu" and not getattr(runtime_client, "is_software", True))
    loops = 200_000 if real_gpu else 3000
    quick = cubepy.bench(_launch, runtime_client, x, 1, warmup=1, reps=5)
    slow = cubepy.bench(_launch, runtime_client, x, loops, warmup=1, reps=5)
    assert len(quick.times_ms) == 5 and all(t > 0 for t in quick.times_ms)
    assert slow.median_ms > 3 * quick.median_ms
    assert quick.min_ms <= quick.median_ms <= quick.max_ms
    assert 0 <= quick.iqr_ms <= quick.max_ms - quick.min_ms


def test_timer_method_per_runtime(runtime_client):
    timer = runtime_client.timer()
    if runtime_client.runtime == "wgpu" and "timestamp-query" not in runtime_client.features:
        assert timer.method == "wall"
    else:
        assert timer.method == EXPECTED_METHOD[runtime_client.runtime]


def test_timer_context_manager(runtime_client):
    x = runtime_client.zeros((64 * 64,), f32)
    _launch(runtime_client, x, 1)  # compile outside the timed region
    with runtime_client.timer() as t:
        _launch(runtime_client, x, 200)
    assert t.elapsed_ms() > 0


def test_timer_elapsed_before_stop_is_an_error(runtime_client):
    timer = runtime_client.timer()
    with pytest.raises(RuntimeError, match="start\\(\\) and stop\\(\\)"):
        timer.elapsed_ms()
    timer.start()
    with pytest.raises(RuntimeError, match="start\\(\\) and stop\\(\\)"):
        timer.elapsed_ms()


def test_bench_finds_the_client_in_tensors():
    client = cubepy.client("cpu")
    x = client.zeros((16,), f32)
    result = cubepy.bench(lambda t: busy.launch(client, CubeCount(1), CubeDim(16), t, 1), x,
                          warmup=0, reps=3)
    assert len(result.times_ms) == 3 and result.method == "wall"


def test_bench_without_a_client_is_a_launch_error():
    with pytest.raises(cubepy.LaunchError, match="no client"):
        cubepy.bench(lambda: None)


@pytest.mark.parametrize("reps, warmup", [(0, 1), (3, -1)])
def test_bench_rejects_bad_counts(reps, warmup):
    with pytest.raises(ValueError, match="reps must be >= 1"):
        cubepy.bench(lambda: None, client=cubepy.client("cpu"), reps=reps, warmup=warmup)


def test_bench_result_summaries():
    r = cubepy.BenchResult((4.0, 1.0, 2.0, 3.0, 100.0), "wall")
    assert r.median_ms == 3.0 and r.min_ms == 1.0 and r.max_ms == 100.0
    assert r.iqr_ms == pytest.approx(2.0)
    assert r.bandwidth_gbs(3_000_000) == pytest.approx(1.0)
    assert r.tflops(3_000_000_000) == pytest.approx(1.0)
    assert "3.0000 ms median" in str(r)
    assert cubepy.BenchResult((2.0,), "wall").iqr_ms == 0.0


def test_no_flush_on_the_cpu_and_software_adapters(runtime_client):
    from cubepy.timing import FLUSH_BYTES, default_flush_bytes
    expected = 0 if runtime_client.runtime == "cpu" or getattr(
        runtime_client, "is_software", False) else FLUSH_BYTES
    if runtime_client.runtime == "wgpu" and not runtime_client.is_software:
        expected = min(FLUSH_BYTES, runtime_client._max_buffer) // 16 * 16
    assert default_flush_bytes(runtime_client) == expected


def test_gpu_timers_read_a_scratch_buffer_before_the_start(runtime_client):
    from cubepy.timing import make_timer
    if runtime_client.runtime == "cpu":
        pytest.skip("the cpu runtime's timer flushes nothing")
    x = runtime_client.zeros((64 * 64,), f32)
    timer = make_timer(runtime_client, flush_bytes=16 << 20)
    assert timer.flush_bytes == 16 << 20 and timer._flush.nbytes == 16 << 20
    _launch(runtime_client, x, 1)
    timer.start()
    _launch(runtime_client, x, 1)
    timer.stop()
    assert 0 < timer.elapsed_ms() < 1000
    # the flush only reads: its scratch buffer stays zero and it found no set bit
    assert not timer._flush.scratch.numpy().any() and timer._flush.found.numpy()[0] == 0
    np.testing.assert_allclose(x.numpy(), 1.0001 * (1.0001 * 0 + 0.5) + 0.5, rtol=1e-6)
    forced = cubepy.bench(_launch, runtime_client, x, 1, warmup=0, reps=2, flush=True)
    assert len(forced.times_ms) == 2


def test_the_flush_kernel_reads_every_line(runtime_client):
    """A set bit anywhere in the scratch buffer is found (so every line is read), and a
    zeroed one gives nothing to store."""
    from cubepy import u32
    from cubepy.l2_flush import ReadFlush, read_scratch
    flush = ReadFlush(runtime_client, (1 << 20) + 7)
    assert flush.nbytes == 1 << 20
    flush()
    assert flush.found.numpy()[0] == 0
    for where in (0, 12345, (1 << 18) - 1):
        words = np.zeros(1 << 18, np.uint32)
        words[where] = 1 << (where % 32)
        found = runtime_client.zeros((1,), u32)
        read_scratch.launch_unchecked(runtime_client, CubeCount(4), CubeDim(32),
                                      runtime_client.tensor(words).with_line_size(4),
                                      found, 4 * 32)
        assert found.numpy()[0] == words[where], where


@pytest.mark.wgpu
def test_wgpu_timer_does_not_count_the_hosts_time_between_marks():
    """The timestamps go into the launches' command buffer: a host pause after start()
    (as a slow Python launch would be) is not measured as device time."""
    import time
    client = cubepy.client("wgpu")
    if "timestamp-query" not in client.features:
        pytest.skip("the adapter has no timestamp-query")
    x = client.zeros((64 * 64,), f32)
    _launch(client, x, 1)
    client.sync()
    submits = client.submits
    timer = client.timer()
    assert timer.method == "wgpu-timestamps"
    timer.start()
    time.sleep(0.2)
    _launch(client, x, 1)
    timer.stop()
    assert client.submits == submits  # nothing submitted yet: one command buffer
    assert timer.elapsed_ms() < 100
    assert x.numpy()[0] == pytest.approx(0.5 * 1.0001 + 0.5, rel=1e-6)


def _wgpu_timer_client():
    client = cubepy.client("wgpu")
    if "timestamp-query" not in client.features:
        pytest.skip("the adapter has no timestamp-query")
    return client


@pytest.mark.wgpu
@pytest.mark.parametrize("in_pass", [True, False], ids=["in_pass", "no_in_pass"])
def test_wgpu_timer_times_the_launches_own_pass(monkeypatch, in_pass):
    """start() opens the pass the timed launches go into, with the pass's own timestamps
    (as a raw wgpu-py program times its pass; marks inside the pass read longer), and
    stop() ends it: its end timestamp follows the launches' work. A pass's own
    timestamps need no `timestamp-query-inside-passes`."""
    client = _wgpu_timer_client()
    monkeypatch.setattr(client, "_in_pass_timestamps",
                        in_pass and "timestamp-query-inside-passes" in client.features)
    x = client.zeros((64 * 64,), f32)
    _launch(client, x, 1)
    client.sync()
    timer = client.timer()
    timer.start()
    opened = client._pass
    assert opened is not None
    _launch(client, x, HEAVY_LOOPS)
    assert client._pass is opened  # the launch went into the timed pass
    timer.stop()
    assert client._pass is None  # stop() ended it, which writes its end timestamp
    assert timer._stop == 1
    slow = timer.elapsed_ms()
    timer.start()
    _launch(client, x, 1)
    timer.stop()
    assert slow > 3 * timer.elapsed_ms()  # the heavy launch ran between the marks
    assert x.numpy()[0] > 0


@pytest.mark.wgpu
@pytest.mark.parametrize("in_pass", [True, False], ids=["in_pass", "empty_pass"])
def test_wgpu_timer_stop_after_its_pass_ended_follows_the_work(monkeypatch, in_pass):
    """A submit between start() and stop() ends the timed pass (its end timestamp
    then precedes the later launches); the stop is a third timestamp, written inside
    the next pass or as an empty pass, after the work recorded before it."""
    client = _wgpu_timer_client()
    if in_pass and "timestamp-query-inside-passes" not in client.features:
        pytest.skip("the adapter has no timestamp-query-inside-passes")
    monkeypatch.setattr(client, "_in_pass_timestamps", in_pass)
    x = client.zeros((64 * 64,), f32)
    timer = client.timer()
    timer.start()
    _launch(client, x, HEAVY_LOOPS)
    timer.stop()
    alone = timer.elapsed_ms()
    timer.start()
    _launch(client, x, 1)
    client.flush()
    _launch(client, x, HEAVY_LOOPS)
    timer.stop()
    assert timer._stop == 2
    assert timer.elapsed_ms() > 0.5 * alone  # the heavy launch came before the stop


def _timestamp_reads(client, monkeypatch) -> list[int]:
    """A list that gets, for each read of a wgpu client's timestamps, how many were
    read."""
    reads: list[int] = []
    real_read = type(client).read_timestamps

    def counted(self, query_set, count):
        reads.append(count)
        return real_read(self, query_set, count)
    monkeypatch.setattr(type(client), "read_timestamps", counted)
    return reads


def _count_gpu_waits(client, monkeypatch) -> list:
    """A list that gets an item each time a GPU timer waits for its times: a CUDA
    event's synchronize, a wgpu read of timestamps."""
    if client.runtime == "wgpu":
        return _timestamp_reads(client, monkeypatch)
    waits: list = []
    if client.runtime == "cuda":
        import pycuda.driver as cuda

        class CountedEvent(cuda.Event):
            def synchronize(self):
                waits.append(1)
                return super().synchronize()
        monkeypatch.setattr(cuda, "Event", CountedEvent)
    return waits


def test_bench_queues_every_repetition_before_it_waits(runtime_client, monkeypatch):
    """On a GPU, `bench` records all repetitions (each with its flush and its own
    start and stop) and waits once, so the GPU runs them back to back; each time is
    still its own repetition's: a heavy repetition among light ones stands out."""
    x = runtime_client.zeros((64 * 64,), f32)
    _launch(runtime_client, x, 1)
    runtime_client.sync()
    waits = _count_gpu_waits(runtime_client, monkeypatch)
    loops = iter([1, HEAVY_LOOPS, 1, 1])
    result = cubepy.bench(lambda: _launch(runtime_client, x, next(loops)),
                          client=runtime_client, warmup=0, reps=4)
    times = result.times_ms
    assert len(times) == 4 and all(t > 0 for t in times)
    assert times[1] > 3 * max(times[0], times[2], times[3])
    if result.method != "wall":
        assert len(waits) == 1  # one wait for the four repetitions
    expected = 0.0
    for n in (1, 1, HEAVY_LOOPS, 1, 1):
        for _ in range(n):
            expected = np.float32(expected) * np.float32(1.0001) + np.float32(0.5)
    np.testing.assert_allclose(x.numpy()[0], expected, rtol=1e-3)


@pytest.mark.wgpu
def test_wgpu_timer_queues_in_chunks_and_resolves_only_written_timestamps(monkeypatch):
    """At most MAX_QUEUED_REPS repetitions share a query set; a repetition whose pass
    ended early takes a third timestamp and the next one starts after it, so the
    timestamps read are all written ones."""
    from cubepy import timing
    client = _wgpu_timer_client()
    monkeypatch.setattr(timing, "MAX_QUEUED_REPS", 2)
    x = client.zeros((64 * 64,), f32)
    _launch(client, x, 1)
    client.sync()
    reads = _timestamp_reads(client, monkeypatch)
    calls = iter(range(5))

    def call():
        n = next(calls)
        _launch(client, x, HEAVY_LOOPS if n == 3 else 1)
        if n == 2:  # the second chunk's first repetition: its pass ends early
            client.flush()
    times = client.timer().time_reps(call, 5)
    assert reads == [4, 5, 2]  # 2 + 2, then 3 + 2 (the early end), then 2
    assert len(times) == 5 and all(t > 0 for t in times)
    assert times[3] > 3 * max(times[0], times[1], times[4])


@pytest.mark.wgpu
def test_wgpu_queued_repetitions_are_never_split_by_the_batch_bounds(monkeypatch):
    """A batch found due (here: by age, at its 33rd dispatch) is submitted between
    repetitions, not inside a timed pass: each repetition's stop is its pass's own end
    timestamp, so no host time between two submits is counted. (Queued into one batch,
    the flush and two launches per repetition would put the 33rd dispatch inside the
    eleventh repetition's pass.)"""
    from cubepy.runtime import wgpu_runtime
    client = _wgpu_timer_client()
    x = client.zeros((64 * 64,), f32)
    _launch(client, x, 1)
    client.sync()
    monkeypatch.setattr(wgpu_runtime, "BATCH_SECONDS", 0.0)
    reads = _timestamp_reads(client, monkeypatch)
    timer = cubepy.timing.make_timer(client, flush_bytes=1 << 20)

    def two_launches():
        _launch(client, x, 1)
        _launch(client, x, 2)
    times = timer.time_reps(two_launches, 12)
    assert reads == [24] and len(times) == 12  # two timestamps per repetition
