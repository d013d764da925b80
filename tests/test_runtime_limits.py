"""Limits are errors, never crashes or hangs: shared memory beyond the device's limit,
scalars that do not fit their type, impossible shapes and views, bad runtime names, and a
lost device are LaunchErrors on every runtime."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cubepy
import cubepy.runtime as runtime_mod
from cubepy import (ABSOLUTE_POS, UNIT_POS, Array, Comptime, LaunchError, SharedMemory,
                    Tensor, cube, f16, f32, sync_cube)
from cubepy.runtime import DeviceTensor


# -- shared memory ------------------------------------------------------------------------

@cube(launch=True)
def staged(x: Array[f32], n: Comptime[int]):
    s = SharedMemory(f32, n)
    s[UNIT_POS] = x[UNIT_POS]
    sync_cube()
    x[UNIT_POS] = s[UNIT_POS] + 1.0


@cube(launch=True)
def two_tiles(x: Array[f32], n: Comptime[int]):
    a = SharedMemory(f32, n)
    b = SharedMemory(f32, n)
    a[UNIT_POS] = x[UNIT_POS]
    b[UNIT_POS] = x[UNIT_POS]
    sync_cube()
    x[UNIT_POS] = a[UNIT_POS] + b[UNIT_POS]


def test_shared_memory_at_the_limit_runs(runtime_client):
    client = runtime_client
    x = client.tensor(np.arange(32, dtype=np.float32))
    staged.launch(client, 1, 32, x, client.limits.max_shared_bytes // 4)
    np.testing.assert_array_equal(x.numpy(), np.arange(32, dtype=np.float32) + 1)


def test_shared_memory_over_the_limit_is_a_launch_error(runtime_client):
    client = runtime_client
    limit = client.limits.max_shared_bytes
    x = client.tensor(np.arange(32, dtype=np.float32))
    start = time.monotonic()
    with pytest.raises(LaunchError) as info:
        staged.launch(client, 1, 32, x, limit // 4 + 1)  # a size from a comptime value
    message = str(info.value)
    assert "staged" in message and str(limit) in message and "max_shared_bytes" in message
    assert f"{(limit // 4 + 1) * 4} bytes" in message
    assert time.monotonic() - start < 30
    # The client is still usable afterwards (nothing reached the driver).
    staged.launch(client, 1, 32, x, 64)
    np.testing.assert_array_equal(x.numpy(), np.arange(32, dtype=np.float32) + 1)


def test_shared_memory_limit_counts_every_array(runtime_client):
    client = runtime_client
    half = client.limits.max_shared_bytes // 8  # f32 elements filling half the limit
    x = client.tensor(np.ones(32, np.float32))
    two_tiles.launch(client, 1, 32, x, half)
    np.testing.assert_array_equal(x.numpy(), np.full(32, 2, np.float32))
    with pytest.raises(LaunchError, match=r"two_tiles uses \d+ bytes of SharedMemory "
                                          r"\(a\w*: \d+ bytes, b\w*: \d+ bytes\)"):
        two_tiles.launch(client, 1, 32, x, half + 1)


# -- scalars ------------------------------------------------------------------------------

@cube(launch=True)
def fill32(x: Tensor[f32], v: f32):
    x[ABSOLUTE_POS] = v


@cube(launch=True)
def fill16(x: Tensor[f16], v: f16):
    x[ABSOLUTE_POS] = v


@pytest.mark.parametrize("value", [1e39, -1e39, 10**400, -(10**400), 10**39])
def test_scalar_beyond_f32_is_a_launch_error(runtime_client, value):
    x = runtime_client.zeros(4, f32)
    with pytest.raises(LaunchError, match="parameter 'v'.*does not fit in f32") as info:
        fill32.launch(runtime_client, 1, 4, x, value)
    assert info.value.param == "v"


def test_scalar_overflow_after_a_cached_plan_is_a_launch_error(runtime_client):
    x = runtime_client.zeros(4, f32)
    fill32.launch(runtime_client, 1, 4, x, 2.5)  # the plan for (Tensor, float) exists
    with pytest.raises(LaunchError, match="does not fit in f32"):
        fill32.launch(runtime_client, 1, 4, x, 1e39)
    fill32.launch(runtime_client, 1, 4, x, float("inf"))  # inf is a value, not overflow
    fill32.launch(runtime_client, 1, 4, x, 3.4028234e38)  # the largest f32
    assert x.numpy()[0] == np.float32(3.4028234e38)


def test_scalar_beyond_f16_is_a_launch_error(runtime_client):
    if f16 not in runtime_client.limits.dtypes:
        pytest.skip("the device has no f16")
    x = runtime_client.zeros(4, f16)
    with pytest.raises(LaunchError, match="100000.0 does not fit in f16"):
        fill16.launch(runtime_client, 1, 4, x, 1e5)
    fill16.launch(runtime_client, 1, 4, x, 65504.0)
    assert x.numpy()[0] == np.float16(65504.0)


# -- shapes and views ---------------------------------------------------------------------

BAD_SHAPES = [(-1,), -3, (4, -2), (2**32, 2**32), (2**32,), (2.5,), (True,), "ab", None]


@pytest.mark.parametrize("shape", BAD_SHAPES, ids=repr)
@pytest.mark.parametrize("make", ["empty", "zeros"])
def test_impossible_shapes_are_refused(runtime_client, make, shape):
    with pytest.raises(LaunchError, match="shape"):
        getattr(runtime_client, make)(shape, f32)


def test_a_shape_too_large_for_memory_is_a_launch_error(runtime_client):
    with pytest.raises(LaunchError):
        runtime_client.zeros((2**31, 2**31), f32)  # each size fits u32; 2**64 bytes do not


def test_empty_shapes_are_fine(runtime_client):
    for shape in [(0,), (3, 0), ()]:
        t = runtime_client.zeros(shape, f32)
        assert t.shape == shape and t.numpy().shape == shape


@pytest.mark.parametrize("shape, strides, buffer_len", [
    ((4,), (2,), 4),            # reaches element 6
    ((2, 3), (3, 1), 5),        # reaches element 5
    ((4,), (-1,), 4),           # negative stride
    ((2, 2), (1,), 4),          # one stride for two dimensions
    ((2**31,), (1,), 16),       # the shape alone is beyond the buffer
])
def test_device_tensor_views_outside_their_buffer_are_refused(shape, strides, buffer_len):
    client = cubepy.client("cpu")
    base = client.zeros(buffer_len, f32)
    with pytest.raises(LaunchError, match="strides|buffer"):
        DeviceTensor(client, base.handle, shape, strides, f32, buffer_len)


def test_device_tensor_views_inside_their_buffer_are_accepted():
    client = cubepy.client("cpu")
    base = client.tensor(np.arange(6, dtype=np.float32))
    view = DeviceTensor(client, base.handle, (3, 2), (1, 3), f32, 6)  # a transpose
    np.testing.assert_array_equal(view.numpy(), np.arange(6, dtype=np.float32)
                                  .reshape(2, 3).T)
    broadcast = DeviceTensor(client, base.handle, (4, 6), (0, 1), f32, 6)
    assert broadcast.numpy().shape == (4, 6)


def test_tensors_beyond_u32_elements_are_refused_at_launch():
    client = cubepy.client("cpu")
    small = client.zeros(4, f32)
    fill32.launch(client, 1, 4, small, 1.0)  # a plan for (Tensor[f32], float) exists
    huge = DeviceTensor(client, small.handle, (2**16, 2**16), (0, 0), f32, 2**32 + 4)
    with pytest.raises(LaunchError, match="parameter 'x' has 4294967300 elements") as info:
        fill32.launch(client, 1, 4, huge, 1.0)
    assert info.value.param == "x"


# -- runtime names ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cpu:abc", "wgpu:-1", "cuda:-1", "cpu:1", "cpu:", ":0",
                                  " cpu", "CPU", "", 7, "metal"])
def test_bad_runtime_names_are_launch_errors(name):
    with pytest.raises(LaunchError):
        cubepy.client(name)


def test_cpu_and_cpu0_are_one_client():
    assert cubepy.client("cpu:0") is cubepy.client("cpu")


# -- a lost device ------------------------------------------------------------------------

def _calls(client, kernel_tensor):
    """Every kind of call a user makes on a client, by name."""
    return {
        "tensor": lambda: client.tensor(np.ones(4, np.float32)),
        "zeros": lambda: client.zeros(4, f32),
        "launch": lambda: fill32.launch(client, 1, 4, kernel_tensor, 1.0),
        "sync": client.sync,
        "numpy": kernel_tensor.numpy,
    }


def _assert_every_call_fails_fast(client, tensor) -> None:
    for name, call in _calls(client, tensor).items():
        start = time.monotonic()
        with pytest.raises(LaunchError, match="was lost"):
            call()
        assert time.monotonic() - start < 5, f"{name} took too long"


class _Unreachable:
    """Stands in for a wgpu device or queue: any use fails the test (a real lost
    device could hang there)."""

    def __getattr__(self, name):
        raise AssertionError(f"a lost client touched wgpu ({name})")


def _private_wgpu_client():
    """A wgpu client of its own (not the shared one), for tests that break it."""
    try:
        from cubepy.runtime.wgpu_runtime import WgpuClient
        return WgpuClient(0)
    except (ImportError, LaunchError) as e:
        pytest.skip(f"no wgpu adapter: {e}")


@pytest.mark.wgpu
def test_wgpu_destroyed_device_fails_every_later_call_at_once():
    client = _private_wgpu_client()
    x = client.zeros(4, f32)
    fill32.launch(client, 1, 4, x, 2.0)
    assert x.numpy().tolist() == [2.0] * 4
    client._device.destroy()
    with pytest.raises(LaunchError, match="lost"):
        client.tensor(np.ones(4, np.float32))  # the first call learns of the loss
    assert client.lost is not None
    client._device = client._queue = _Unreachable()
    _assert_every_call_fails_fast(client, x)
    _assert_every_call_fails_fast(client, x)  # and keeps failing


@pytest.mark.wgpu
def test_wgpu_submit_reporting_device_loss_marks_the_client_lost():
    client = _private_wgpu_client()
    x = client.zeros(4, f32)
    real_queue = client._submitter._queue  # the queue batches are submitted on

    class LosingQueue:
        def __getattr__(self, name):
            return getattr(real_queue, name)

        def submit(self, buffers):
            raise RuntimeError("Validation Error: Device is lost (driver reset)")

    client._submitter._queue = LosingQueue()
    fill32.launch(client, 1, 4, x, 1.0)  # recorded, not yet submitted
    with pytest.raises(LaunchError, match="was lost.*driver reset"):
        client.sync()
    client._device = client._queue = _Unreachable()
    _assert_every_call_fails_fast(client, x)


@pytest.mark.wgpu
def test_wgpu_other_submit_errors_leave_the_client_usable():
    client = _private_wgpu_client()
    x = client.zeros(4, f32)
    real_queue = client._submitter._queue  # the queue batches are submitted on

    class FailingOnce:
        def __getattr__(self, name):
            return getattr(real_queue, name)

        def submit(self, buffers):
            client._submitter._queue = real_queue
            raise RuntimeError("Validation Error: something else")

    client._submitter._queue = FailingOnce()
    fill32.launch(client, 1, 4, x, 1.0)
    with pytest.raises(LaunchError, match="something else"):
        client.sync()
    assert client.lost is None
    fill32.launch(client, 1, 4, x, 5.0)
    assert x.numpy().tolist() == [5.0] * 4


def test_a_lost_shared_client_is_replaced(monkeypatch):
    from cubepy.runtime.cpu import CpuClient
    lost = CpuClient()
    lost.lost = "test"
    monkeypatch.setitem(runtime_mod._CLIENTS, "cpu", lost)
    with pytest.raises(LaunchError, match="was lost"):
        lost.zeros(4, f32)
    fresh = cubepy.client("cpu")
    assert fresh is not lost and fresh.lost is None
    assert cubepy.client("cpu") is fresh


_CUDA_FAULT = textwrap.dedent("""
    import time, numpy as np, cubepy
    from cubepy import cube, Array, f32, u32, ABSOLUTE_POS, LaunchError

    @cube(launch=True)
    def poke(x: Array[f32], far: u32):
        x[ABSOLUTE_POS + far] = 1.0

    c = cubepy.client("cuda")
    x = c.zeros(4, f32)
    poke.launch_unchecked(c, 1, 1, x, 0xFFFFFF00)  # ~16 GiB past a 16-byte buffer
    try:
        c.sync()
        print("NO FAULT")
    except LaunchError as e:
        print("FAULT", "lost" in str(e))
    for name, call in [("zeros", lambda: c.zeros(4, f32)),
                       ("tensor", lambda: c.tensor(np.ones(4, np.float32))),
                       ("launch", lambda: poke.launch(c, 1, 1, x, 0)),
                       ("sync", c.sync), ("numpy", x.numpy)]:
        start = time.monotonic()
        try:
            call()
            print(name, "RAN")
        except LaunchError as e:
            print(name, "LOST" if "was lost" in str(e) else "OTHER",
                  round(time.monotonic() - start, 3))
    try:  # a new client: the process's context stays poisoned, so refused (not hung)
        print("REPLACED", cubepy.client("cuda") is not c)
    except LaunchError as e:
        print("REPLACED refused")
""")


@pytest.mark.cuda
def test_cuda_context_fault_fails_every_later_call_at_once(tmp_path):
    """In a child process: the fault poisons the process's CUDA context."""
    try:
        cubepy.client("cuda")
    except LaunchError:
        pytest.skip("no CUDA device")
    root = os.path.dirname(os.path.dirname(cubepy.__file__))  # this cubepy, then the rest
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    script = tmp_path / "fault.py"  # a file: cubepy compiles kernels from their source
    script.write_text(_CUDA_FAULT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=300, env=env)
    out = done.stdout.split("\n")
    assert "FAULT True" in out, done.stdout + done.stderr
    for name in ("zeros", "tensor", "launch", "sync", "numpy"):
        line = next(l for l in out if l.startswith(name + " "))
        assert line.split()[1] == "LOST", line
        assert float(line.split()[2]) < 5, line
    assert "REPLACED True" in out or "REPLACED refused" in out, done.stdout

