"""A cuda client's start (cubepy/runtime/cuda_start.py): the driver's calls on a thread,
the compiler's modules imported meanwhile, the context reference given back."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from cubepy.runtime import cuda_start
from cubepy.runtime.cuda_start import COMPILER_MODULES, DriverStart

ROOT = Path(__file__).resolve().parents[1]


def test_compiler_modules_are_what_a_first_cuda_compile_imports(tmp_path):
    """The list imported while the driver starts is the compile's, no more, no less: a
    module the compile stops using, or a new one it starts using, fails this test."""
    script = tmp_path / "first_compile.py"
    script.write_text(textwrap.dedent("""
        import sys
        import cubepy
        import cubepy.runtime.cuda  # what the client has imported before any compile
        from cubepy import ABSOLUTE_POS, Array, cube, f32
        before = set(sys.modules)

        @cube(launch=True)
        def axpy(a: f32, x: Array[f32], y: Array[f32]):
            i = ABSOLUTE_POS
            if i < len(y):
                y[i] = a * x[i] + y[i]

        axpy.source("cuda", cube_dim=(256, 1, 1))
        print([m for m in sys.modules if m not in before and m.startswith("cubepy")])
    """))
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUBEPY_RUNTIME", "CUBEPY_VERIFY")}  # (the suite verifies the IR)
    env.update(PYTHONPATH=str(ROOT), CUBEPY_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded = eval(done.stdout.strip().splitlines()[-1])
    assert sorted(loaded) == sorted(COMPILER_MODULES)
    # In the compile's order, so that each import finds what it needs already there
    assert [m for m in loaded if m in COMPILER_MODULES] == list(COMPILER_MODULES)


class FakeDriver:
    """libcuda's four calls, with cuInit taking `init_s` (sleeping, as a driver call
    through ctypes lets go of the GIL) and each call's result chosen."""

    def __init__(self, init_s: float = 0.0, init=0, device=0, retain=0):
        self.init_s, self.results = init_s, {"init": init, "device": device,
                                             "retain": retain}
        self.calls: list[str] = []
        self.released = threading.Event()

    def cuInit(self, flags):
        self.calls.append("init")
        time.sleep(self.init_s)
        return self.results["init"]

    def cuDeviceGet(self, device, index):
        self.calls.append(f"device {index}")
        return self.results["device"]

    def cuDevicePrimaryCtxRetain(self, context, device):
        self.calls.append("retain")
        return self.results["retain"]

    def cuDevicePrimaryCtxRelease_v2(self, device):
        self.calls.append("release")


@pytest.fixture
def fake_driver(monkeypatch):
    def install(**kwargs) -> FakeDriver:
        driver = FakeDriver(**kwargs)
        monkeypatch.setattr(cuda_start, "_libcuda", lambda: driver)
        return driver
    return install


def test_driver_start_retains_the_context_and_finish_releases_it(fake_driver):
    driver = fake_driver()
    start = DriverStart(2)
    start.finish()
    assert driver.calls == ["init", "device 2", "retain", "release"]
    start.finish()  # a second finish gives nothing back twice
    assert driver.calls.count("release") == 1


@pytest.mark.parametrize("failing", ["init", "device", "retain"])
def test_a_failing_driver_call_is_quiet_and_nothing_is_released(fake_driver, failing):
    driver = fake_driver(**{failing: 100})
    start = DriverStart(0)
    start.finish()
    assert "release" not in driver.calls
    assert driver.calls[-1].split()[0] == failing


def test_the_switch_interval_is_short_while_starts_run_and_restored_after(fake_driver):
    fake_driver(init_s=0.3)
    own = sys.getswitchinterval()
    first = DriverStart(0)
    assert sys.getswitchinterval() == pytest.approx(cuda_start._SWITCH_INTERVAL_S)
    second = DriverStart(1)  # overlapping starts: the last to end restores it
    first.finish()
    assert sys.getswitchinterval() == pytest.approx(cuda_start._SWITCH_INTERVAL_S)
    second.wait()
    assert sys.getswitchinterval() == pytest.approx(own)
    second.finish()  # (after wait: nothing restored twice)
    assert sys.getswitchinterval() == pytest.approx(own)


def test_no_driver_at_all_is_quiet(monkeypatch):
    def missing():
        raise OSError("libcuda.so.1: cannot open shared object file")
    monkeypatch.setattr(cuda_start, "_libcuda", missing)
    start = DriverStart(0)
    start.finish()
    assert not start.busy()


def _modules(tmp_path, monkeypatch, count: int) -> tuple[str, ...]:
    """`count` fresh modules on sys.path, each taking 20 ms to import."""
    folder = tmp_path / "mods"
    folder.mkdir()
    for i in range(count):
        (folder / f"start_probe_{i}.py").write_text("import time\ntime.sleep(0.02)\n")
    monkeypatch.syspath_prepend(str(folder))
    names = tuple(f"start_probe_{i}" for i in range(count))
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    return names


def test_modules_are_imported_while_the_driver_is_busy(fake_driver, tmp_path, monkeypatch):
    modules = _modules(tmp_path, monkeypatch, 3)
    fake_driver(init_s=2.0)
    start = DriverStart(0)
    assert start.import_while_busy(modules) == 3
    assert all(name in sys.modules for name in modules)
    assert start.busy()  # the imports did not wait for the driver
    start.finish()


def test_the_imports_stop_once_the_driver_is_done(fake_driver, tmp_path, monkeypatch):
    modules = _modules(tmp_path, monkeypatch, 40)
    fake_driver(init_s=0.1)
    start = DriverStart(0)
    started = time.perf_counter()
    done = start.import_while_busy(modules)
    took = time.perf_counter() - started
    start.finish()
    # 40 imports would take 0.8 s: they stop within one import of the driver's end
    assert 1 <= done < 40
    assert took < 0.1 + 0.02 * 6
    assert [m for m in modules if m in sys.modules] == list(modules[:done])


def test_a_module_that_fails_to_import_ends_the_imports_quietly(fake_driver, tmp_path,
                                                                monkeypatch):
    modules = _modules(tmp_path, monkeypatch, 2)
    (tmp_path / "mods" / "start_probe_0.py").write_text("raise ImportError('broken')\n")
    fake_driver(init_s=1.0)
    start = DriverStart(0)
    assert start.import_while_busy(modules) == 0
    assert "start_probe_1" not in sys.modules
    start.finish()


def _cuda_present() -> bool:
    import cubepy
    try:
        cubepy.client("cuda")
    except cubepy.LaunchError:
        return False
    return True


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_present(), reason="no CUDA device")
def test_the_client_holds_a_live_primary_context_after_the_start():
    """The start's own context reference is given back, PyCUDA's stays: the context is
    active, and stays so for a second client of the same device."""
    import numpy as np

    import cubepy
    lib = cuda_start._libcuda()
    client = cubepy.client("cuda")
    flags, active = ctypes.c_uint(), ctypes.c_int()
    assert lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active)) == 0
    assert active.value == 1
    other = cubepy.client("cuda")
    x = other.tensor(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(client.tensor(x.numpy()).numpy(), np.arange(4))
    assert lib.cuDevicePrimaryCtxGetState(0, ctypes.byref(flags), ctypes.byref(active)) == 0
    assert active.value == 1
