"""Compiles ahead of their launch: `prepare`, autotune's configs compiled side by side,
and the cuda client's compile threads (with a recording stand-in for PyCUDA and NVRTC,
so these run without a GPU; the GPU tests compile for real)."""
from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Comptime, CubeCount, CubeDim, LaunchError, Tensor,
                    cube, f32)
from cubepy.runtime import cuda as cuda_mod
from cubepy.runtime import cuda_compile


@cube(launch=True)
def scale(x: Tensor[f32], y: Tensor[f32], factor: Comptime[int]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = x[i] * f32(factor)


@cube
def helper(x: Tensor[f32]):
    x[0] = 1.0


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_AUTOTUNE", raising=False)
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)


def _cpu_client_counting(monkeypatch):
    """The cpu client, with its `compile` calls and launches counted."""
    client = cubepy.client("cpu")
    counts = {"compile": 0, "dispatch": 0}
    compile_, dispatch = client.compile, client.dispatch

    def counting_compile(*args, **kwargs):
        counts["compile"] += 1
        return compile_(*args, **kwargs)

    def counting_dispatch(*args, **kwargs):
        counts["dispatch"] += 1
        return dispatch(*args, **kwargs)
    monkeypatch.setattr(client, "compile", counting_compile)
    monkeypatch.setattr(client, "dispatch", counting_dispatch)
    return client, counts


def test_prepare_compiles_what_the_launch_runs_and_runs_nothing(monkeypatch):
    client, counts = _cpu_client_counting(monkeypatch)
    x = client.tensor(np.arange(64, dtype=np.float32))
    y = client.zeros(64, f32)
    kernel = cube(launch=True)(scale.fn)  # a fresh kernel: nothing compiled yet
    kernel.prepare(client, CubeCount(1), CubeDim(64), x, y, 3)
    assert counts == {"compile": 1, "dispatch": 0}
    assert not y.numpy().any()  # nothing ran
    kernel.launch(client, CubeCount(1), CubeDim(64), x, y, 3)
    assert counts == {"compile": 1, "dispatch": 1}  # the launch found its plan
    assert np.array_equal(y.numpy(), 3 * np.arange(64, dtype=np.float32))
    kernel.prepare_unchecked(client, CubeCount(1), CubeDim(64), x, y, factor=3)
    assert counts["compile"] == 2  # unchecked is a build of its own
    kernel.launch_unchecked(client, CubeCount(1), CubeDim(64), x, y, factor=3)
    assert counts == {"compile": 2, "dispatch": 2}


def test_prepare_checks_the_arguments_as_a_launch_does():
    client = cubepy.client("cpu")
    x = client.tensor(np.zeros(8, np.float32))
    with pytest.raises(LaunchError) as err:
        scale.prepare(client, CubeCount(1), CubeDim(8), x, np.zeros(8, np.int32), 2)
    assert err.value.param == "y"
    with pytest.raises(LaunchError, match="takes 3 arguments"):
        scale.prepare(client, CubeCount(1), CubeDim(8), x)
    with pytest.raises(LaunchError, match="device function"):
        helper.prepare(client, CubeCount(1), CubeDim(8), x)


def test_autotune_hands_every_config_to_the_runtime_before_timing(monkeypatch):
    """The configs' code is generated and handed to `compile_ahead` before the first
    timed launch, so a runtime that compiles in the background compiles them all
    meanwhile."""
    client, counts = _cpu_client_counting(monkeypatch)
    events = []
    monkeypatch.setattr(client, "compile_ahead",
                        lambda compiled: events.append(("ahead", compiled.source)))
    dispatch = client.dispatch

    def recording_dispatch(*args, **kwargs):
        events.append(("launch", None))
        return dispatch(*args, **kwargs)
    monkeypatch.setattr(client, "dispatch", recording_dispatch)
    configs = [{"cube_dim": CubeDim(32), "factor": 2}, {"cube_dim": CubeDim(64), "factor": 2},
               {"cube_dim": CubeDim(4096), "factor": 2}]  # beyond the device: skipped
    kernel = cubepy.autotune(configs=configs, key=["x"], warmup=1, reps=2)(
        cube(launch=True)(scale.fn))
    x = client.tensor(np.ones(256, np.float32))
    y = client.zeros(256, f32)
    kernel.launch(client, lambda cfg: CubeCount(256 // cfg["cube_dim"].x), x, y)
    aheads = [e for e in events if e[0] == "ahead"]
    assert len(aheads) == 2  # (the cpu's code for either cube dim is the same text)
    assert events[:2] == aheads  # before any launch
    assert counts["compile"] == 2  # each config built once, at its first timed launch
    assert np.array_equal(y.numpy(), np.full(256, 2, np.float32))


def test_autotuned_prepare_builds_every_config_and_tuning_builds_nothing_more(monkeypatch):
    client, counts = _cpu_client_counting(monkeypatch)
    configs = [{"cube_dim": CubeDim(32), "factor": 5}, {"cube_dim": CubeDim(64), "factor": 5}]
    kernel = cubepy.autotune(configs=configs, key=["x"], warmup=1, reps=2)(
        cube(launch=True)(scale.fn))
    x = client.tensor(np.ones(128, np.float32))
    y = client.zeros(128, f32)

    def count(cfg):
        return CubeCount(128 // cfg["cube_dim"].x)
    kernel.prepare(client, count, x, y)
    assert counts == {"compile": 2, "dispatch": 0}
    kernel.launch(client, count, x, y)
    assert counts["compile"] == 2 and counts["dispatch"] > 2
    assert np.array_equal(y.numpy(), np.full(128, 5, np.float32))


# -- the cuda client's compile threads, with stand-ins -----------------------------------

class _Module:
    def get_function(self, name):
        return object()


class _Driver:
    Error = RuntimeError
    module_from_buffer = staticmethod(lambda cubin: _Module())


def _fake_cuda_client(compiler, monkeypatch):
    client = object.__new__(cuda_mod.CudaClient)
    client._cuda, client._ctx, client.device = _Driver, object(), "fake"
    client._modules, client._ahead, client.compiler = {}, {}, compiler
    client._lock = threading.RLock()
    monkeypatch.setattr(cuda_mod._tls, "ctx", client._ctx, raising=False)
    return client


def _artefacts(*factors):
    return [scale._compile(scale._specialization(CubeDim(64), {"factor": f}), "cuda",
                           True) for f in factors]


class _Compiler:
    """Compiles ahead on any thread; a compile on the loading thread is a failure unless
    `fallback` says what it gives."""

    def __init__(self, served=None, fallback=None):
        self.served = served or (lambda source: (b"cubin:" + source.encode()[:8], "ahead"))
        self.fallback = fallback
        self.threads = []
        self.last_compiler = ""

    def compile_served(self, source, fast_math=True):
        self.threads.append(threading.current_thread().name)
        return self.served(source)

    def compile(self, source, fast_math=True):
        if self.fallback is None:
            raise AssertionError("compiled again on the loading thread")
        self.last_compiler = "again"
        return self.fallback(source)


def test_a_source_compiled_ahead_is_loaded_without_compiling_it_again(monkeypatch):
    compiler = _Compiler()
    client = _fake_cuda_client(compiler, monkeypatch)
    (one,) = _artefacts(2)
    client.compile_ahead(one.artefact)
    client.compile_ahead(one.artefact)  # already under way: not started twice
    exe = client._load_locked(one.artefact.source, one.artefact.entry, one.abi, True)
    assert exe.compiler == "ahead" and len(compiler.threads) == 1
    assert compiler.threads[0].startswith("cubepy-compile")
    assert client._ahead == {}  # taken
    client._modules[(one.artefact.source, True)] = exe.module
    client.compile_ahead(one.artefact)  # loaded already: nothing to compile
    assert client._ahead == {} and len(compiler.threads) == 1


def test_a_failed_compile_ahead_is_compiled_again_for_its_error(monkeypatch):
    def rejected(source):
        raise LaunchError("the CUDA compiler rejected the generated source")

    compiler = _Compiler(served=rejected, fallback=rejected)
    client = _fake_cuda_client(compiler, monkeypatch)
    (one,) = _artefacts(2)
    client.compile_ahead(one.artefact)
    with pytest.raises(LaunchError, match="rejected"):
        client._load_locked(one.artefact.source, one.artefact.entry, one.abi, True)
    assert client._ahead == {} and compiler.last_compiler == "again"


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: one compile thread")
def test_compiles_ahead_run_side_by_side(monkeypatch):
    """Two sources handed over one after the other compile at the same time: each
    compile waits at a barrier that only two compiles running at once pass."""
    barrier = threading.Barrier(2, timeout=30)

    def served(source):
        barrier.wait()
        return b"cubin", "ahead"

    compiler = _Compiler(served=served)
    client = _fake_cuda_client(compiler, monkeypatch)
    first, second = _artefacts(2, 3)
    start = time.perf_counter()
    client.compile_ahead(first.artefact)
    client.compile_ahead(second.artefact)
    for c in (first, second):
        exe = client._load_locked(c.artefact.source, c.artefact.entry, c.abi, True)
        assert exe.compiler == "ahead"
    assert time.perf_counter() - start < 30 and not barrier.broken


def test_a_forked_child_compiles_ahead_on_threads_of_its_own():
    """The parent's compile threads do not exist in a forked child: the child's
    compile_ahead starts threads of its own instead of waiting for them forever."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    compiler = _Compiler()
    cuda_compile.compile_ahead(compiler, "parent").result(timeout=30)
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its compile finishes
        try:
            code = 0 if cuda_compile.compile_ahead(compiler, "child").result(
                timeout=20)[1] == "ahead" else 1
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_no_more_compiles_run_at_once_than_the_compile_threads():
    """NVRTC gains nothing past four threads (AHEAD_THREADS): more compiles handed over
    than that wait for a thread instead of each getting one."""
    running, most = [0], [0]
    lock = threading.Lock()

    def served(source):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return b"cubin", "ahead"

    compiler = _Compiler(served=served)
    futures = [cuda_compile.compile_ahead(compiler, f"source {i}")
               for i in range(2 * cuda_compile.AHEAD_THREADS)]
    assert all(f.result(timeout=30)[1] == "ahead" for f in futures)
    assert 1 <= most[0] <= min(cuda_compile.AHEAD_THREADS, os.cpu_count() or 1)
    if (os.cpu_count() or 1) >= 2:
        assert most[0] >= 2  # and several do run at once
