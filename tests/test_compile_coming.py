"""Decorating a kernel that no process has compiled tells the clients of this process a
compile is coming (a cuda client then starts loading NVRTC while the kernel is parsed);
a kernel compiled before, a device function, or a process without clients tells none."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, f32


def scale(x: Array[f32], factor: f32):
    x[ABSOLUTE_POS] = x[ABSOLUTE_POS] * factor


def twice(v: f32) -> f32:
    return v * 2.0


class _Listening:
    """A stand-in client that counts the notices."""

    def __init__(self):
        self.notices = 0

    def _compile_coming(self) -> None:
        self.notices += 1


@pytest.fixture
def listening(monkeypatch, tmp_path):
    import cubepy.runtime as runtime
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    client = _Listening()
    monkeypatch.setitem(runtime._CLIENTS, "listening", client)
    return client


def test_a_kernel_decorated_first_tells_the_clients_then_not_again(listening):
    cubepy.cube(launch=True)(scale)
    assert listening.notices == 1
    cubepy.cube(launch=True)(scale)  # its signature now comes from the disk cache
    assert listening.notices == 1


def test_a_device_function_tells_no_client(listening):
    cubepy.cube(twice)
    assert listening.notices == 0


def test_without_the_disk_cache_every_new_kernel_tells_the_clients(listening, monkeypatch):
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")
    cubepy.cube(launch=True)(scale)
    cubepy.cube(launch=True)(scale)
    assert listening.notices == 2


def test_the_cuda_client_starts_loading_nvrtc_once(monkeypatch):
    from cubepy.runtime import compile_coming, cuda, cuda_compile
    started = []
    monkeypatch.setattr(cuda_compile, "start_loading_nvrtc", started.append)
    client = object.__new__(cuda.CudaClient)  # (no device needed for the notice)
    client.arch = "sm_90"
    import cubepy.runtime as runtime
    monkeypatch.setattr(runtime, "_CLIENTS", {"cuda": client})
    compile_coming()
    assert started == ["sm_90"]


def test_decorating_never_loads_the_runtime_layer(tmp_path):
    code = ("import runpy, sys\n"
            "runpy.run_path(sys.argv[1])\n"
            "print('cubepy.runtime' in sys.modules)\n")
    kernel = tmp_path / "kernel_mod.py"
    kernel.write_text("import cubepy\n"
                      "from cubepy import ABSOLUTE_POS, Array, f32\n"
                      "@cubepy.cube(launch=True)\n"
                      "def scale(x: Array[f32], factor: f32):\n"
                      "    x[ABSOLUTE_POS] = x[ABSOLUTE_POS] * factor\n")
    env = {**os.environ, "CUBEPY_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code, str(kernel)], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
