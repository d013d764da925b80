"""A cuda client's start, with the wait put to use.

Most of a cuda client's creation is the driver's: cuInit and the primary context's
creation take on the order of 100 ms. PyCUDA makes both calls holding the GIL, so a
process can do nothing else meanwhile. `DriverStart` makes the same two calls first,
through ctypes (which lets go of the GIL), on a thread; meanwhile the main thread
imports PyCUDA and then the compiler modules a first compile needs. PyCUDA's own calls
then find the driver started and the context made, and return at once. While a start
runs, the GIL changes hands every 0.1 ms rather than every 5, so that the thread gets it
back at once when a driver call returns.

The compiler's modules are imported only while the driver is still busy: the import
stops between two modules once the thread has ended, so it never makes the client
later by more than one module's import (under a millisecond). A process whose kernels
are all in the disk cache then holds modules it does not use (a few MB), at no cost in
time; a process that compiles no longer pays for their import (about 12 ms on the H200)
at its first launch. NVRTC itself is not loaded here: a cache hit still loads no
compiler library.
"""
from __future__ import annotations

import ctypes
import importlib
import sys
import threading

# The modules a plain kernel's first compile for cuda imports, in the order it imports
# them (tests/test_cuda_start.py keeps this list equal to what a compile loads).
COMPILER_MODULES = (
    "cubepy.ir.nodes", "cubepy.frontend.parse", "cubepy.ir.visit", "cubepy.ir.names",
    "cubepy.frontend.infer", "cubepy.frontend.context", "cubepy.frontend.values",
    "cubepy.frontend.indexing", "cubepy.frontend.math_calls", "cubepy.frontend.intrinsics",
    "cubepy.frontend.calls", "cubepy.frontend.pyforms", "cubepy.frontend.tuples",
    "cubepy.frontend.exprs", "cubepy.ir.scalar", "cubepy.frontend.finalize",
    "cubepy.frontend.build", "cubepy.ir.passes.rewrite", "cubepy.ir.passes.dce",
    "cubepy.ir.passes.consteval", "cubepy.ir.passes.fold", "cubepy.ir.passes.legalize",
    "cubepy.ir.passes.needs", "cubepy.ir.passes", "cubepy.codegen.clike_dialect",
    "cubepy.codegen.reserved",
    "cubepy.codegen.names", "cubepy.codegen.walker", "cubepy.codegen.clike_helpers",
    "cubepy.codegen.skeleton", "cubepy.codegen.clike", "cubepy.codegen.cuda",
    "cubepy.codegen.skeletons", "cubepy.codegen.skeletons.cuda_j2",
)


# While a start runs, the interpreter hands the GIL over every 0.1 ms instead of every
# 5: each driver call's return needs the GIL back, which the main thread, busy importing,
# would otherwise keep for up to 5 ms each time. The first start lowers it and the last
# to end puts the process's own interval back.
_SWITCH_INTERVAL_S = 1e-4
_starts_lock = threading.Lock()
_starts_running = 0
_saved_interval = 0.0


def _start_began() -> None:
    global _starts_running, _saved_interval
    with _starts_lock:
        if _starts_running == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_interval, _SWITCH_INTERVAL_S))
        _starts_running += 1


def _start_ended() -> None:
    global _starts_running
    with _starts_lock:
        _starts_running -= 1
        if _starts_running == 0:
            sys.setswitchinterval(_saved_interval)


def _libcuda() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libcuda.so.1" if sys.platform != "win32" else "nvcuda.dll")
    except OSError:
        from . import cuda_driver  # (looks the library up by name: ldconfig, ~20 ms)
        return cuda_driver.lib()


class DriverStart:
    """cuInit and device `index`'s primary context, made on a thread through ctypes.

    Failures are kept quiet: PyCUDA's calls that follow meet the same failure and
    report it as before. `finish()` waits for the thread and gives back the context
    reference it holds (call it once PyCUDA holds its own, so that the context is not
    destroyed and made again in between)."""

    def __init__(self, index: int):
        self._index = index
        self._lib: ctypes.CDLL | None = None
        self._device = ctypes.c_int(0)
        self._context: ctypes.c_void_p | None = None
        self._thread = threading.Thread(target=self._start, name="cubepy-cuda-start",
                                        daemon=True)
        self._ended = False
        _start_began()
        self._thread.start()

    def _start(self) -> None:
        try:
            lib = _libcuda()
            if lib.cuInit(0) != 0:
                return
            if lib.cuDeviceGet(ctypes.byref(self._device), self._index) != 0:
                return
            context = ctypes.c_void_p()
            if lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), self._device) == 0:
                self._lib, self._context = lib, context
        except Exception:  # no driver: PyCUDA's own calls report it
            pass

    def busy(self) -> bool:
        """Whether the driver calls are still running."""
        return self._thread.is_alive()

    def import_while_busy(self, modules: tuple[str, ...] = COMPILER_MODULES) -> int:
        """Imports `modules` in order while the driver calls run; returns how many were
        imported (or found imported) before they ended. An import that fails is left for
        the compile to meet and report."""
        done = 0
        for name in modules:
            if not self.busy():
                break
            if name not in sys.modules:
                try:
                    importlib.import_module(name)
                except Exception:
                    break
            done += 1
        return done

    def wait(self) -> None:
        """Waits for the driver calls to end."""
        self._thread.join()
        if not self._ended:
            self._ended = True
            _start_ended()

    def finish(self) -> None:
        """Waits for the driver calls and releases the primary context reference taken
        by them (the context lives on while PyCUDA holds its own)."""
        self.wait()
        lib, context, self._lib, self._context = self._lib, self._context, None, None
        if lib is not None and context is not None:
            release = getattr(lib, "cuDevicePrimaryCtxRelease_v2", None) \
                or lib.cuDevicePrimaryCtxRelease
            release(self._device)
