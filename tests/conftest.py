"""Shared fixtures: `runtime_client` runs a test on every runtime present here.

cpu always runs; wgpu runs where wgpu-py finds an adapter (the software Vulkan adapter
counts); cuda runs where PyCUDA finds a GPU. Parameters carry the `wgpu` / `cuda` marks,
so `pytest -m "cuda or wgpu"` selects the GPU runs.
"""
from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def _runtime_present(name: str) -> bool:
    import cubepy
    try:
        cubepy.client(name)
        return True
    except cubepy.LaunchError:
        return False


RUNTIME_PARAMS = [
    pytest.param("cpu", id="cpu"),
    pytest.param("wgpu", id="wgpu", marks=[
        pytest.mark.wgpu,
        pytest.mark.skipif(not _runtime_present("wgpu"), reason="no wgpu adapter")]),
    pytest.param("cuda", id="cuda", marks=[
        pytest.mark.cuda,
        pytest.mark.skipif(not _runtime_present("cuda"), reason="no CUDA device")]),
]


@pytest.fixture(params=RUNTIME_PARAMS)
def runtime_client(request):
    """A client of each runtime present on this machine."""
    import cubepy
    return cubepy.client(request.param)


HAVE_NVCC = shutil.which("nvcc") is not None
HAVE_CLANG = shutil.which("clang++") is not None
