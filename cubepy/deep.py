"""Compiling deeply nested kernels: the compiler's tree walks are recursive, so a kernel
nested deeper than Python's default recursion limit allows is compiled again on a thread
with a large stack and a raised recursion limit (see docs/LANGUAGE.md, "Limits").

The cyclic garbage collector is paused while the compiler runs (gc_pause.py).

The recursion limit is per interpreter, so it is raised only while the deep thread runs,
one deep compile at a time; other threads keep their own (default-sized) stacks but see
the raised limit meanwhile, which matters only for code recursing thousands deep."""
from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

from .errors import CompileError
from .gc_pause import gc_paused

T = TypeVar("T")
_TOO_DEEP = ("the kernel is too deeply nested to compile (expressions or inlined calls "
             "nested thousands deep)")

STACK_BYTES = 512 * 1024 * 1024  # the deep thread's stack (virtual memory, touched lazily)
RECURSION_LIMIT = 100_000  # Python frames on that thread; 512 MiB covers them
_LOCK = threading.Lock()  # one deep compile at a time (the limit is per interpreter)
_ON_DEEP_THREAD = threading.local()


def call_deep(fn: Callable[[], T], where: Callable[[str], CompileError]) -> T:
    """`fn()`, with the cyclic GC paused; when it overflows the recursion limit, `fn()`
    again on a thread with a large stack. A RecursionError there too becomes
    `where(reason)`, a CompileError."""
    with gc_paused:
        try:
            return fn()
        except RecursionError:
            if getattr(_ON_DEEP_THREAD, "active", False):  # nested: as deep as it gets
                raise where(_TOO_DEEP) from None
        return _call_on_deep_thread(fn, where)


def _call_on_deep_thread(fn: Callable[[], T], where: Callable[[str], CompileError]) -> T:
    with _LOCK:
        outcome: list = []

        def worker() -> None:
            _ON_DEEP_THREAD.active = True
            old = sys.getrecursionlimit()
            sys.setrecursionlimit(RECURSION_LIMIT)
            try:
                outcome.append((True, fn()))
            except BaseException as exc:  # handed to the calling thread
                outcome.append((False, exc))
            finally:
                sys.setrecursionlimit(old)

        old_size = threading.stack_size(STACK_BYTES)
        try:
            thread = threading.Thread(target=worker, name="cubepy-deep-compile")
            thread.start()
        finally:
            threading.stack_size(old_size)
        thread.join()
    ok, value = outcome[0]
    if ok:
        return value
    if isinstance(value, RecursionError):
        raise where(_TOO_DEEP) from None
    raise value
