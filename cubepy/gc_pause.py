"""The cyclic garbage collector paused while cubepy compiles.

A first compile makes tens of thousands of objects (the AST, IR nodes, and the compiler
modules it imports), which set off about a dozen collections. Paused, they set off
none: reference counting frees a compile's garbage as soon as it is dropped (a compile
leaves no cycles behind), and what the compile leaves alive moves to the oldest
generation when the pause ends, unscanned (`_promote_young_objects`). On the development
machine a cold decorate + `source("cuda")` of a small kernel went from 33.0 to 30.2 ms
with the pause alone, and a cold first launch on the cpu runtime from 27.6 to 25.1 ms
with the promotion added (medians of 41 fresh processes each, interleaved;
docs/PERFORMANCE.md).

The pause is process-wide (the collector has no other setting), nests, spans threads
compiling at once, and never enables a collector that was off when it began.
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
                _promote_young_objects()
                gc.enable()


def _promote_young_objects() -> None:
    """Moves every object the young generations hold into the oldest one, unscanned.

    What a compile leaves alive (the compiler modules' functions and classes, the IR and
    code kept for launches) would otherwise all be scanned by the first young collection
    after the pause, and again by the next older one: 1-3 ms after a first compile. A
    compile leaves no cyclic garbage, so scanning it finds nothing; the oldest
    generation's full collections still see it all. `gc.freeze()` + `gc.unfreeze()` is
    that move (list splices, no scan). It is skipped when the process holds frozen
    objects, which unfreezing would hand back to the collector: a pre-fork server's, or
    the interpreter's own (Python 3.12 starts with a few hundred frozen tuples; 3.11 and
    3.13 with none), so on 3.12 the young collections after a compile remain. It is
    also skipped when the pause left fewer young objects than would set off a
    collection (a compile read from the disk cache): the program's own young objects
    keep their normal schedule."""
    if (gc.get_count()[0] > gc.get_threshold()[0] > 0
            and gc.get_freeze_count() == 0):
        gc.freeze()
        gc.unfreeze()


gc_paused = _GcPaused()
"""`with gc_paused:` runs its body with the cyclic collector off (module docstring)."""
