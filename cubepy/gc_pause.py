"""The cyclic garbage collector paused while cubepy compiles.

A first compile makes tens of thousands of objects (the AST, IR nodes, and the compiler
modules it imports) and so set off about a dozen collections; paused, it sets off one
when it ends. On the development machine a cold decorate + `source("cuda")` of a small
kernel went from 33.0 to 30.2 ms (medians of 41 fresh processes, interleaved).
Reference counting frees nearly all of a compile's garbage as soon as it is dropped; the
few cycles among it wait for the first collection after the pause. The pause is
process-wide (the collector has no other setting), nests, spans threads compiling at
once, and never enables a collector that was off when it began.
"""
from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_depth = 0  # compiles running now, on any thread
_disabled_here = False  # whether the outermost one turned the collector off


class _GcPaused:
    def __enter__(self) -> None:
        global _depth, _disabled_here
        with _lock:
            if _depth == 0 and gc.isenabled():
                gc.disable()
                _disabled_here = True
            _depth += 1

    def __exit__(self, *exc: object) -> None:
        global _depth, _disabled_here
        with _lock:
            _depth -= 1
            if _depth == 0 and _disabled_here:
                _disabled_here = False
                gc.enable()


gc_paused = _GcPaused()
"""`with gc_paused:` runs its body with the cyclic collector off (module docstring)."""
