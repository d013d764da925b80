"""The wgpu runtime's submitting thread (cubepy/runtime/wgpu_submit.py): batches closed
at their bound are submitted from it in order, everything else on the queue waits for
them, and a batch failing there is reported at the next sync without losing the client.

The Submitter itself is tested with a recording fake queue (no adapter needed); the
runtime's use of it on the wgpu client, with the thread turned on even on a software
adapter (where the runtime leaves it off)."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from cubepy import ABSOLUTE_POS, Array, LaunchError, cube, f32
from cubepy.runtime import wgpu_submit
from cubepy.runtime.wgpu_submit import Submitter
from conftest import run_threads
from conftest import wgpu_client as _wgpu_client


class _FakeQueue:
    """Records writes and submits in the order the queue sees them."""

    def __init__(self, delay: float = 0.0, fail_on: int | None = None):
        self.log: list[tuple] = []
        self.threads: set[str] = set()
        self.delay, self.fail_on = delay, fail_on

    def write_buffer(self, buffer, offset, data):
        self.log.append(("write", bytes(data)))

    def submit(self, buffers):
        self.threads.add(threading.current_thread().name)
        time.sleep(self.delay)
        (name,) = buffers
        if name == self.fail_on:
            raise RuntimeError(f"validation error in batch {name}")
        self.log.append(("submit", name))


class _FakeEncoder:
    def __init__(self, name):
        self.name = name

    def finish(self):
        return self.name


def test_handed_batches_are_submitted_in_order_each_after_its_info():
    queue = _FakeQueue(delay=0.002)
    submitter = Submitter(queue, info_buffer=None)
    for k in range(6):
        submitter.hand(_FakeEncoder(k), bytes([k]) if k % 2 else None)
        assert submitter.in_flight <= wgpu_submit.MAX_IN_FLIGHT
    submitter.drain()
    assert submitter.in_flight == 0
    expected = []
    for k in range(6):
        expected += ([("write", bytes([k]))] if k % 2 else []) + [("submit", k)]
    assert queue.log == expected
    assert queue.threads and not queue.threads & {threading.current_thread().name}


def test_a_submit_in_this_thread_comes_after_the_handed_ones_once_drained():
    queue = _FakeQueue(delay=0.005)
    submitter = Submitter(queue, info_buffer=None)
    submitter.hand(_FakeEncoder("a"), None)
    submitter.hand(_FakeEncoder("b"), None)
    submitter.drain()
    submitter.submit(_FakeEncoder("c"), b"x")
    assert queue.log == [("submit", "a"), ("submit", "b"), ("write", b"x"), ("submit", "c")]


def test_a_failed_handed_batch_is_raised_by_drain_after_every_batch_is_done():
    queue = _FakeQueue(delay=0.002, fail_on=1)
    submitter = Submitter(queue, info_buffer=None)
    submitter.hand(_FakeEncoder(0), None)
    submitter.hand(_FakeEncoder(1), None)
    with pytest.raises(RuntimeError, match="batch 1"):
        submitter.hand(_FakeEncoder(2), None)  # waits for the oldest beyond the bound...
        submitter.drain()  # ...or here, whichever meets the failure first
    submitter.drain()  # what is left still goes out, in order
    assert queue.log == [("submit", 0), ("submit", 2)]
    submitter.drain()  # nothing raised twice


# -- the runtime ------------------------------------------------------------------------

@cube(launch=True)
def _add_scalar(x: Array[f32], v: f32):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = x[i] + v


@pytest.fixture
def client(monkeypatch):
    c = _wgpu_client()
    if c is None:
        pytest.skip("no wgpu adapter")
    c.sync()
    monkeypatch.setattr(c, "background_submits", True)
    return c


@pytest.mark.wgpu
def test_the_thread_is_off_on_a_software_adapter_only():
    c = _wgpu_client()
    if c is None:
        pytest.skip("no wgpu adapter")
    assert c.background_submits is (not c.is_software)


@pytest.mark.wgpu
def test_batches_from_the_thread_keep_every_launch_and_its_own_scalar(client):
    """Over several batch bounds, each launch with another scalar (a new info slice in
    each batch's bytes, which the thread writes before that batch's submit)."""
    from cubepy.runtime import wgpu_runtime as wr
    x = client.zeros(64, f32)
    before = client.submits
    launches = 3 * wr.MAX_BATCH + 17
    for k in range(launches):
        _add_scalar.launch(client, 1, 64, x, float(k % 7))
    assert client.submits - before >= 3
    assert client._submitter._executor is not None, "no batch went to the thread"
    want = float(sum(k % 7 for k in range(launches)))
    assert x.numpy().tolist() == [want] * 64


@pytest.mark.wgpu
def test_a_write_after_handed_batches_lands_after_them(client):
    from cubepy.runtime import wgpu_runtime as wr
    x = client.zeros(64, f32)
    for _ in range(2 * wr.MAX_BATCH + 5):
        _add_scalar.launch(client, 1, 64, x, 1.0)
    x.copy_(np.full(64, 10.0, np.float32))  # must not overtake the handed batches
    for _ in range(3):
        _add_scalar.launch(client, 1, 64, x, 1.0)
    assert x.numpy().tolist() == [13.0] * 64


@pytest.mark.wgpu
def test_threads_sharing_the_client_hand_batches_to_the_thread_in_turn(client):
    """Three threads launching into one client past the batch bound, each on its own
    tensor with its own scalar: every launch lands once, wherever its batch was closed."""
    from cubepy.runtime import wgpu_runtime as wr
    launches = 2 * wr.MAX_BATCH
    xs = [client.zeros(64, f32) for _ in range(3)]
    before = client.submits

    def work(k):
        for _ in range(launches):
            _add_scalar.launch(client, 1, 64, xs[k], float(k + 1))
    run_threads(work, 3)  # re-raises a thread's exception
    assert client.submits - before >= 5  # batches closed at the bound, from all three
    for k, x in enumerate(xs):
        assert x.numpy().tolist() == [float((k + 1) * launches)] * 64


@pytest.mark.wgpu
def test_a_batch_failing_in_the_thread_is_a_launch_error_at_the_next_sync(
        client, monkeypatch):
    """The failed batch is dropped (as a failed submit in this thread is); the error
    names the submit, and the client then runs launches as before."""
    from cubepy.runtime import wgpu_runtime as wr
    submitter = client._submitter
    real_submit = submitter.submit
    failed = []

    def submit(encoder, info):
        if threading.current_thread() is not threading.main_thread() and not failed:
            failed.append(encoder)
            raise RuntimeError("injected: the batch is invalid")
        real_submit(encoder, info)
    monkeypatch.setattr(submitter, "submit", submit)
    x = client.zeros(64, f32)
    for _ in range(wr.MAX_BATCH + 1):  # the bound hands the first batch to the thread
        _add_scalar.launch(client, 1, 64, x, 1.0)
    with pytest.raises(LaunchError, match="submitting launches.*injected"):
        client.sync()
    assert failed
    client.sync()  # reported once
    y = client.zeros(64, f32)
    _add_scalar.launch(client, 1, 64, y, 2.0)
    assert y.numpy().tolist() == [2.0] * 64
