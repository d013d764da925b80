"""Clients shared between threads: launches, uploads and downloads from 8 threads at once
give exact results on every runtime, and a kernel first launched by several threads at
once is specialised and compiled once."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import cubepy
import cubepy.kernel as kernel_mod
from cubepy import ABSOLUTE_POS, Tensor, cube, f32, u32
from conftest import run_threads

THREADS = 8
LAUNCHES = 50
N = 257  # not a multiple of the cube dim: the checked launch drops the extra units


@cube(launch=True)
def scale_add(x: Tensor[f32], out: Tensor[f32], a: f32, b: f32):
    out[ABSOLUTE_POS] = x[ABSOLUTE_POS] * a + b


@cube(launch=True)
def add_index(out: Tensor[f32], offset: u32):
    out[ABSOLUTE_POS] = out[ABSOLUTE_POS] + f32(ABSOLUTE_POS + offset)


def _cube_count(n: int, dim: int = 64) -> int:
    return -(-n // dim)


def test_eight_threads_launch_upload_download_exact(runtime_client):
    client = runtime_client

    def work(t: int) -> int:
        checked = 0
        for j in range(LAUNCHES):
            host = (np.arange(N, dtype=np.float32) + 1000 * t + j)  # exact in f32
            x = client.tensor(host)
            out = client.zeros(N, f32)
            a, b = float(t + 1), float(j)
            scale_add.launch(client, _cube_count(N), 64, x, out, a, b)
            add_index.launch(client, _cube_count(N), 64, out, t)
            index = (np.arange(N) + t).astype(np.float32)
            want = host * np.float32(a) + np.float32(b) + index
            got = out.numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"thread {t}, launch {j}")
            checked += 1
        return checked

    assert run_threads(work, THREADS) == [LAUNCHES] * THREADS
    client.sync()


def test_threads_keep_their_launches_queued_until_their_download(runtime_client):
    """Several launches per thread before one download: on wgpu the threads' launches
    share the open batch, and each thread's download still sees all of its own work."""
    client = runtime_client

    def work(t: int) -> None:
        out = client.zeros(N, f32)
        for j in range(LAUNCHES):
            add_index.launch(client, _cube_count(N), 64, out, j)
        want = sum((np.arange(N) + j).astype(np.float64) for j in range(LAUNCHES))
        np.testing.assert_array_equal(out.numpy(), want.astype(np.float32),
                                      err_msg=f"thread {t}")

    run_threads(work, THREADS)


def _fresh_kernel():
    """A kernel object no thread has launched yet (so its first compile is concurrent)."""
    @cube(launch=True)
    def triple(x: Tensor[f32], out: Tensor[f32]):
        out[ABSOLUTE_POS] = x[ABSOLUTE_POS] * 3.0
    return triple


def test_threads_sharing_a_new_kernel_compile_it_once(runtime_client, monkeypatch):
    client = runtime_client
    builds = []
    build = kernel_mod.build_kernel

    def counting_build(parsed, spec, *rest):
        builds.append(spec)
        return build(parsed, spec, *rest)

    monkeypatch.setattr(kernel_mod, "build_kernel", counting_build)
    compiles = []
    compile_ = client.compile

    def counting_compile(kernel, abi, checked, **given):
        compiles.append(kernel.name)
        return compile_(kernel, abi, checked, **given)

    monkeypatch.setattr(client, "compile", counting_compile)
    triple = _fresh_kernel()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: a race in compiling shows

    def work(t: int) -> None:
        host = np.arange(N, dtype=np.float32) * (t + 1)
        for _ in range(5):
            x, out = client.tensor(host), client.zeros(N, f32)
            triple.launch(client, _cube_count(N), 64, x, out)
            np.testing.assert_array_equal(out.numpy(), host * 3)

    try:
        run_threads(work, THREADS)
    finally:
        sys.setswitchinterval(interval)
    assert len(builds) == 1, f"specialised {len(builds)} times"
    assert compiles == ["triple"], f"compiled {len(compiles)} times"


def test_a_fresh_thread_can_launch_on_a_client_made_elsewhere(runtime_client):
    """cuda: the thread never had the context current; the client makes it current."""
    client = runtime_client
    results = []

    def work():
        x = client.tensor(np.arange(N, dtype=np.float32))
        out = client.zeros(N, f32)
        scale_add.launch(client, _cube_count(N), 64, x, out, 2.0, 1.0)
        results.append(out.numpy())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert len(results) == 1
    np.testing.assert_array_equal(results[0], np.arange(N, dtype=np.float32) * 2 + 1)


@pytest.mark.wgpu
def test_wgpu_threads_never_share_an_info_slot():
    """Scalars travel in the batch's info buffer: interleaved launches from many threads
    with different scalars each read their own values."""
    try:
        client = cubepy.client("wgpu")
    except cubepy.LaunchError:
        pytest.skip("no wgpu adapter")

    def work(t: int) -> None:
        outs = []
        for j in range(20):
            out = client.zeros(64, f32)
            scale_add.launch(client, 1, 64, out, out, 0.0, float(t * 100 + j))
            outs.append(out)
        for j, out in enumerate(outs):
            np.testing.assert_array_equal(out.numpy(), np.full(64, t * 100 + j, np.float32))

    run_threads(work, THREADS)


@pytest.mark.wgpu
def test_wgpu_buffer_freed_while_another_thread_holds_the_lock_does_not_wait():
    """A buffer's finalizer runs in the thread that frees it; it must not wait for a
    lock another thread holds (two clients' threads could deadlock), and the freed
    buffer's bind groups are still dropped before a new buffer is bound."""
    from cubepy.runtime.wgpu_runtime import WgpuClient
    try:
        client = WgpuClient(0)
    except cubepy.LaunchError:
        pytest.skip("no wgpu adapter")
    box = [client.zeros(64, f32)]
    add_index.launch(client, 1, 64, box[0], 0)
    client.sync()
    freed_id = id(box[0].handle)
    assert freed_id in client._bind_group_users
    thread = threading.Thread(target=box.clear)  # drops the last reference there
    with client._lock:
        thread.start()
        thread.join(timeout=10)
        assert not thread.is_alive(), "freeing a buffer waited for the client's lock"
        assert freed_id in client._freed
    y = client.zeros(64, f32)
    add_index.launch(client, 1, 64, y, 1)
    assert client._freed == []
    np.testing.assert_array_equal(y.numpy(), np.arange(64, dtype=np.float32) + 1)


def test_threads_asking_for_a_new_client_get_the_same_one(monkeypatch):
    import cubepy.runtime as runtime_mod
    from cubepy.runtime.cpu import CpuClient
    monkeypatch.setattr(runtime_mod, "_CLIENTS", {})
    made = []

    class SlowCpuClient(CpuClient):
        def __init__(self):
            made.append(self)
            threading.Event().wait(0.05)  # creation takes a while: threads overlap
            super().__init__()

    import cubepy.runtime.cpu as cpu_mod
    monkeypatch.setattr(cpu_mod, "CpuClient", SlowCpuClient)
    clients = run_threads(lambda t: cubepy.client("cpu"), THREADS)
    assert len(made) == 1
    assert all(c is clients[0] for c in clients)


_THREAD_EXIT_SCRIPT = """
import threading, numpy as np, cubepy
from cubepy import ABSOLUTE_POS, Tensor, cube, f32

@cube(launch=True)
def twice(x: Tensor[f32], out: Tensor[f32]):
    out[ABSOLUTE_POS] = x[ABSOLUTE_POS] * 2.0

def work():
    client = cubepy.client("cuda")          # made, used and left on this thread
    x = client.tensor(np.arange(64, dtype=np.float32))
    out = client.empty(64, cubepy.f32)
    twice.launch(client, cubepy.CubeCount(1), cubepy.CubeDim(64), x, out)
    assert (out.numpy() == np.arange(64) * 2).all()

for _ in range(3):                          # threads that end after using the client
    t = threading.Thread(target=work); t.start(); t.join()
work()                                      # and the main thread afterwards
print("done")
"""


@pytest.mark.cuda
def test_cuda_threads_end_cleanly_after_using_a_client(tmp_path):
    """PyCUDA aborts the process when a thread ends with a context pushed: worker threads
    (thread pools, torch's autograd threads) must leave none behind."""
    import os
    import subprocess
    try:
        cubepy.client("cuda")
    except cubepy.LaunchError:
        pytest.skip("no CUDA device")
    script = tmp_path / "thread_exit.py"
    script.write_text(_THREAD_EXIT_SCRIPT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ))
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "done"
    assert "context stack was not empty" not in run.stderr
