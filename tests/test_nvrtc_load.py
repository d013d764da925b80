"""NVRTC's load starts on a thread when a launch is about to compile a kernel (the
library's dlopen only), and the compile waits for it: same outcome, same errors, as
loading it at the compile."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32
from cubepy.errors import LaunchError
from cubepy.runtime import cuda_compile, nvrtc_lib


@pytest.fixture
def fresh_load(monkeypatch):
    """No load started yet in this test, and no compiler found but the fakes given."""
    monkeypatch.setattr(cuda_compile, "_loading", None)
    monkeypatch.setattr(nvrtc_lib, "_loaded", None)
    monkeypatch.setattr(nvrtc_lib, "_tried", None)
    monkeypatch.setattr(nvrtc_lib, "_opened_ahead", {})
    monkeypatch.delenv("CUBEPY_CUDA_COMPILER", raising=False)
    monkeypatch.setattr(cuda_compile, "nvcc_identity", lambda: None)
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")


def test_compile_waits_for_the_background_load(fresh_load, monkeypatch):
    release = threading.Event()
    seen = []

    def slow_open(candidates):
        seen.append(threading.current_thread().name)
        release.wait(5)
        seen.append("opened")

    def identity():
        seen.append("identity")
        return "nvrtc-13.0|lib"

    monkeypatch.setattr(nvrtc_lib, "open_ahead", slow_open)
    monkeypatch.setattr(cuda_compile, "nvrtc_version", lambda: "nvrtc-13.0")
    monkeypatch.setattr(cuda_compile, "nvrtc_identity", identity)
    monkeypatch.setattr(cuda_compile, "compile_nvrtc", lambda src, arch, fast_math: b"cubin")
    cuda_compile.start_loading_nvrtc()
    cuda_compile.start_loading_nvrtc()  # once per process
    threading.Timer(0.05, release.set).start()
    assert cuda_compile.CudaCompiler("sm_80").compile("__global__ void k() {}") == b"cubin"
    assert seen[:3] == ["cubepy-nvrtc-load", "opened", "identity"]


def test_failing_load_gives_the_same_error_at_the_compile(fresh_load, monkeypatch):
    def no_library():
        raise nvrtc_lib.NvrtcError("libnvrtc was not found")

    monkeypatch.setattr(nvrtc_lib, "load", no_library)
    messages = []
    for background in (False, True):
        cuda_compile.nvrtc_version.cache_clear()
        cuda_compile.nvrtc_identity.cache_clear()
        if background:
            cuda_compile.start_loading_nvrtc()
        with pytest.raises(LaunchError) as err:
            cuda_compile.CudaCompiler("sm_80").compile("__global__ void k() {}")
        messages.append(str(err.value))
    cuda_compile.nvrtc_version.cache_clear()
    cuda_compile.nvrtc_identity.cache_clear()
    assert messages[0] == messages[1]
    assert "neither NVRTC (libnvrtc) nor nvcc was found" in messages[1]


def test_forced_nvcc_loads_no_nvrtc(fresh_load, monkeypatch):
    monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvcc")
    cuda_compile.start_loading_nvrtc()
    assert cuda_compile._loading is None


def test_launch_announces_a_compile_only_on_a_miss(monkeypatch, tmp_path):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path))
    client = cubepy.client("cpu")
    calls = []
    monkeypatch.setattr(type(client), "_compile_coming", lambda self: calls.append(1),
                        raising=False)

    @cube(launch=True)
    def scale_announced(x: Array[f32]):
        i = ABSOLUTE_POS
        if i < len(x):
            x[i] = x[i] * 2.0

    x = client.tensor(np.ones(8, np.float32))
    scale_announced.source("cuda", cube_dim=(8, 1, 1))
    assert calls == []  # source() compiles for no client
    scale_announced.launch(client, CubeCount(1), CubeDim(8), x)
    scale_announced.launch(client, CubeCount(1), CubeDim(8), x)
    assert calls == [1]
    np.testing.assert_array_equal(x.numpy(), np.full(8, 4.0, np.float32))


class FakeNvrtc:
    """A loaded libnvrtc (nvrtc_lib.Nvrtc), recording the calls and their threads."""

    def __init__(self):
        self.calls = []

    def _record(self, name):
        self.calls.append((name, threading.current_thread().name))

    def version(self):
        self._record("version")
        return 13, 0

    def compile(self, source, name, options):
        self._record(f"compile {' '.join(options)}")
        return b"cubin"


def test_the_thread_only_opens_the_library(fresh_load, monkeypatch):
    """The thread runs the dlopen of the candidates listed before it started, and
    nothing of NVRTC: the compile's load asks the version, on its own thread."""
    fake = FakeNvrtc()
    opened = []
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", "/nowhere/libnvrtc.so.13")
    monkeypatch.setattr(nvrtc_lib, "open_ahead", lambda candidates: opened.append(
        (candidates, threading.current_thread().name)))
    monkeypatch.setattr(nvrtc_lib, "load", lambda: fake)
    cuda_compile.nvrtc_version.cache_clear()
    try:
        cuda_compile.start_loading_nvrtc()
        cuda_compile.wait_for_nvrtc_load()
        assert opened == [(["/nowhere/libnvrtc.so.13"], "cubepy-nvrtc-load")]
        assert fake.calls == []
        assert cuda_compile.nvrtc_version() == "nvrtc-13.0"
    finally:
        cuda_compile.nvrtc_version.cache_clear()
    assert fake.calls == [("version", "MainThread")]


def test_no_thread_once_the_library_is_loaded(fresh_load, monkeypatch):
    monkeypatch.setattr(nvrtc_lib, "_loaded", FakeNvrtc())
    cuda_compile.start_loading_nvrtc()
    assert cuda_compile._loading is None
