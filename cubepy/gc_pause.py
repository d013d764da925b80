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

import functools
import gc
import sys
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
    objects of its own (`_only_immortal_objects_frozen`), which unfreezing would hand
    back to the collector, and when the pause left fewer young objects than would set
    off a collection (a compile read from the disk cache): the program's own young
    objects keep their normal schedule."""
    if gc.get_count()[0] > gc.get_threshold()[0] > 0 and _only_immortal_objects_frozen():
        gc.freeze()
        gc.unfreeze()


def _only_immortal_objects_frozen() -> bool:
    """Whether the permanent generation holds nothing that unfreezing could harm.

    A pre-fork server freezes its objects so that collections never touch (and copy)
    their pages; those must stay frozen. Python 3.12 starts with a few hundred frozen
    objects of its own: the immortal `__mro__` and `__bases__` tuples of the built-in
    types, which its collector moves to the permanent generation whenever it meets them
    (their reference counts say nothing), so unfrozen they simply go back at the next
    full collection. A user's `gc.freeze()` takes every tracked object, thousands at
    least once anything is imported, so a permanent generation no larger than the count
    of those tuples holds only them."""
    frozen = gc.get_freeze_count()
    return frozen == 0 or frozen <= _immortal_tuples_of_builtin_types()


@functools.cache
def _immortal_tuples_of_builtin_types() -> int:
    """How many `__mro__`/`__bases__` tuples of the interpreter's static types are
    immortal and tracked by the collector (375 on Python 3.12; none before it). A walk
    down from `object` through the static types, 0.2-0.4 ms, done once."""
    if sys.version_info < (3, 12):
        return 0
    found: set[int] = set()
    seen: set[type] = set()
    pending = [object]
    while pending:
        cls = pending.pop()
        # A heap type (a class statement, or an extension's own) is never built in,
        # and neither is anything derived from it.
        if cls.__flags__ & _HEAP_TYPE or cls in seen:
            continue
        seen.add(cls)
        pending.extend(type.__subclasses__(cls))
        for bases in (cls.__mro__, cls.__bases__):
            if sys.getrefcount(bases) >= _IMMORTAL_REFCOUNT and gc.is_tracked(bases):
                found.add(id(bases))
    return len(found)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE
_IMMORTAL_REFCOUNT = 1 << 30  # far above any real count; immortal ones read 2**32 - 1


gc_paused = _GcPaused()
"""`with gc_paused:` runs its body with the cyclic collector off (module docstring)."""
