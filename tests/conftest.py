"""Shared fixtures: `runtime_client` runs a test on every runtime present here.

cpu always runs; wgpu runs where wgpu-py finds an adapter (the software Vulkan adapter
counts); cuda runs where PyCUDA finds a GPU. Parameters carry the `wgpu` / `cuda` marks,
so `pytest -m "cuda or wgpu"` selects the GPU runs.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# The session's own cache folder: kernels compiled by an earlier run would come from the
# disk cache of specialisations (docs/CACHE.md) without the frontend and the passes, and
# so escape the IR checks below. A folder given in $CUBEPY_CACHE_DIR is used as it is.
if not os.environ.get("CUBEPY_CACHE_DIR"):
    import atexit
    import tempfile
    os.environ["CUBEPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="cubepy-test-cache-")
    atexit.register(shutil.rmtree, os.environ["CUBEPY_CACHE_DIR"], True)


def run_threads(work, count: int) -> list:
    """Runs work(thread_index) in `count` threads released together; their results
    (re-raising the first exception of any thread)."""
    start = threading.Barrier(count)

    def run(t):
        start.wait(timeout=60)
        return work(t)

    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(run, t) for t in range(count)]
        return [f.result(timeout=600) for f in futures]


def client_or_none(name: str):
    """`cubepy.client(name)`, or None where that runtime has no device here."""
    import cubepy
    try:
        return cubepy.client(name)
    except cubepy.LaunchError:
        return None


def _runtime_present(name: str) -> bool:
    return client_or_none(name) is not None


def wgpu_client():
    """The wgpu client, or None where there is no adapter."""
    return client_or_none("wgpu")


def needs_wgpu() -> list:
    """A test module's `pytestmark` when all its tests need a wgpu adapter."""
    return [pytest.mark.wgpu,
            pytest.mark.skipif(wgpu_client() is None, reason="no wgpu adapter")]


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


CHECKED_KERNELS: list[str] = []  # names of the kernels the fixture below checked


@pytest.fixture(autouse=True, scope="session")
def every_kernel_round_trips_and_verifies():
    """Every kernel any test builds, before and after the passes, is checked by the IR
    verifier and must survive print -> parse -> print unchanged (the IR text round trip
    covers the whole test suite, not only the shared corpus). The verifier also runs
    after each pass (CUBEPY_VERIFY)."""
    import cubepy.kernel as kernel_mod
    from cubepy.ir.parser import parse_kernel
    from cubepy.ir.printer import print_kernel
    from cubepy.ir.verify import verify

    def check(k):
        verify(k)
        text = print_kernel(k)
        again = parse_kernel(text)
        assert print_kernel(again) == text, f"IR text round trip changed {k.name}"
        if "nan" not in text:  # NaN constants are never equal to themselves
            assert again == k, f"IR parsed back from text differs from {k.name}"
        CHECKED_KERNELS.append(k.name)
        return k

    build, pipeline = kernel_mod.build_kernel, kernel_mod.run_pipeline
    kernel_mod.build_kernel = lambda parsed, spec, *rest: check(build(parsed, spec, *rest))
    kernel_mod.run_pipeline = lambda k, target: check(pipeline(k, target))
    previous = os.environ.get("CUBEPY_VERIFY")
    os.environ["CUBEPY_VERIFY"] = "1"
    yield
    kernel_mod.build_kernel, kernel_mod.run_pipeline = build, pipeline
    if previous is None:
        os.environ.pop("CUBEPY_VERIFY", None)
    else:
        os.environ["CUBEPY_VERIFY"] = previous
