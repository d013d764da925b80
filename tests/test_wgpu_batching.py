"""The wgpu runtime's lazy batches keep the order a program wrote: dependent launches,
writes into tensors between launches, buffers freed and replaced inside one batch, the
repeated-launch shortcut, and launches from several threads into one client's batch."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from cubepy import ABSOLUTE_POS, Array, cube, f32, u32
from conftest import needs_wgpu, run_threads, wgpu_client as _client

pytestmark = needs_wgpu()


@pytest.fixture
def client():
    c = _client()
    c.sync()
    return c


@cube(launch=True)
def _plus_one_into(src: Array[f32], dst: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(dst):
        dst[i] = src[i] + f32(1.0)


@cube(launch=True)
def _add_scalar(x: Array[f32], v: f32):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = x[i] + v


@cube(launch=True)
def _count(x: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = x[i] + u32(1)


def _inc(client, x, v=1.0):
    _add_scalar.launch(client, 1, 64, x, v)


def test_dependent_launches_then_one_readback(client, monkeypatch):
    """Each launch reads what the one before wrote; nothing is submitted until the
    readback, which sees the end of the chain."""
    from cubepy.runtime import wgpu_runtime as wr
    monkeypatch.setattr(wr, "BATCH_SECONDS", 1e9)  # however slow the machine
    a = client.zeros(64, f32)
    b = client.zeros(64, f32)
    before = client.submits
    for k in range(41):  # a -> b -> a ...: every launch depends on the previous one
        src, dst = (a, b) if k % 2 == 0 else (b, a)
        _plus_one_into.launch(client, 1, 64, src, dst)
    assert client.submits == before, "a launch was submitted before the readback"
    assert b.numpy().tolist() == [41.0] * 64
    assert client.submits == before + 1  # the batch and the readback's copy together
    assert a.numpy().tolist() == [40.0] * 64


def test_writes_between_launches_land_in_program_order(client):
    """`queue.write_buffer` runs before commands submitted after it, so a write after
    recorded launches must submit them first: otherwise the write would land before
    them and the later reads would see other values."""
    x = client.zeros(64, f32)
    _inc(client, x)  # 1
    x.fill_(10.0)  # after the launch: 10, not 11
    _inc(client, x)  # 11
    _inc(client, x)  # 12
    x.copy_(np.full(64, 100.0, np.float32))  # 100
    _inc(client, x, 5.0)  # 105
    y = client.zeros(64, f32)
    _plus_one_into.launch(client, 1, 64, x, y)  # 106, read before the next write
    x.zero_()
    assert x.numpy().tolist() == [0.0] * 64
    assert y.numpy().tolist() == [106.0] * 64


def test_a_buffer_freed_and_replaced_inside_one_batch(client):
    """A tensor dropped while its launch is still recorded, and a new one (which may
    reuse its id) launched in the same batch: the new launch binds the new buffer."""
    exe_launches = 20
    for _ in range(exe_launches):
        old = client.zeros(64, f32)
        _inc(client, old, 7.0)  # recorded, not submitted
        del old
        gc.collect()
        new = client.zeros(64, f32)
        _inc(client, new, 7.0)  # same kernel, same info bytes as the freed one's launch
        _inc(client, new, 7.0)
        assert new.numpy().tolist() == [14.0] * 64


def test_the_repeated_launch_shortcut_tells_buffers_apart(client):
    """Launches identical but for the buffer (same shape, same info bytes) each reach
    their own buffer; identical launches in a row each run."""
    a = client.zeros(64, f32)
    b = client.zeros(64, f32)
    for target in (a, b, a, a, b, a):
        _inc(client, target)
    assert a.numpy().tolist() == [4.0] * 64
    assert b.numpy().tolist() == [2.0] * 64


def test_a_repeated_launch_and_sync_writes_no_info_again(client):
    """The info struct of a repeated launch + sync is already on the device: no
    `write_buffer`, one submit per sync."""
    x = client.zeros(64, u32)
    writes = []
    real_queue = client._submitter._queue  # the info structs' writes go through it

    class CountingQueue:
        def __getattr__(self, name):
            return getattr(real_queue, name)

        def write_buffer(self, *args):
            writes.append(args[0])
            return real_queue.write_buffer(*args)

    _count.launch(client, 1, 64, x)
    client.sync()
    client._submitter._queue = CountingQueue()
    try:
        before = client.submits
        for _ in range(5):
            _count.launch(client, 1, 64, x)
            client.sync()
        assert writes == [] and client.submits - before == 5 + 5 * (client._wait_idle is None)
        _add_scalar.launch(client, 1, 64, client.zeros(64, f32), 2.0)  # other bytes
        client.sync()
        assert writes == [client._info_buffer]
    finally:
        client._submitter._queue = real_queue
    assert x.numpy().tolist() == [6] * 64


def test_launches_from_two_threads_share_one_batch(client):
    """Two threads launching into the same client: every launch of each runs, in each
    thread's order, whatever the interleaving in the shared batch."""
    n = 150  # more than one batch each
    own = [client.zeros(64, u32), client.zeros(64, u32)]
    chains = [(client.zeros(64, f32), client.zeros(64, f32)) for _ in range(2)]

    def work(k: int) -> None:
        a, b = chains[k]
        for i in range(n):
            _count.launch(client, 1, 64, own[k])
            src, dst = (a, b) if i % 2 == 0 else (b, a)
            _plus_one_into.launch(client, 1, 64, src, dst)
    run_threads(work, 2)  # re-raises a thread's exception
    for k in range(2):
        assert own[k].numpy().tolist() == [n] * 64
        a, b = chains[k]
        last, other = (b, a) if n % 2 else (a, b)
        assert last.numpy().tolist() == [float(n)] * 64
        assert other.numpy().tolist() == [float(n - 1)] * 64


def test_a_scalar_changing_every_launch_reaches_each_dispatch(client, monkeypatch):
    """Same kernel and buffers, another scalar each launch: each dispatch reads its own
    info slice, also when the batch's info buffer fills up midway."""
    from cubepy.runtime import wgpu_runtime as wr
    monkeypatch.setattr(wr, "INFO_CAPACITY", 5 * client._info_align)
    x = client.zeros(64, f32)
    used = []
    for k in range(12):
        _inc(client, x, float(k))
        used.append(client._info_used)
        _inc(client, x, float(k))  # the same bytes again: the same slice
        assert client._info_used == used[-1]
    assert max(used) <= 5 * client._info_align
    assert x.numpy().tolist() == [2.0 * sum(range(12))] * 64


def test_pass_commands_go_to_wgpu_native_and_the_public_methods_agree(client):
    """With the pinned wgpu-py the per-launch commands call wgpu-native directly; the
    fallback through wgpu-py's public methods gives the same results."""
    from cubepy.runtime.wgpu_calls import PassCalls
    assert client._calls.native, "wgpu-py's internals moved: launches take the slow path"
    public = PassCalls(native=False)
    assert not public.native
    native = client._calls

    def fresh_batch_with(calls):  # drops the empty pass sync() opened for the next batch
        client.sync()
        client._pass = client._encoder = client._pass_handle = None
        client._calls = calls

    fresh_batch_with(public)
    try:
        a = client.zeros(64, f32)
        b = client.zeros(64, f32)
        for k in range(6):
            _inc(client, a, float(k))  # a new info slice each time
            _inc(client, a, float(k))  # the repeated launch
            _plus_one_into.launch(client, 1, 64, a, b)
        assert a.numpy().tolist() == [2.0 * sum(range(6))] * 64
        assert b.numpy().tolist() == [31.0] * 64
    finally:
        fresh_batch_with(native)
