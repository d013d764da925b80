"""Compiling deeply nested kernels: the compiler's tree walks are recursive, so a kernel
nested deeper than Python's default recursion limit allows is compiled again on a thread
with a large stack and a raised recursion limit (see docs/LANGUAGE.md, "Limits")."""
from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

from .errors import CompileError

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024  # the deep thread's stack (virtual memory, touched lazily)
RECURSION_LIMIT = 100_000  # Python frames on that thread; 512 MiB covers them
_LOCK = threading.Lock()  # one deep compile at a time (the limit is per interpreter)


def call_deep(fn: Callable[[], T], where: Callable[[str], CompileError]) -> T:
    """`fn()`; when it overflows the recursion limit, `fn()` again on a thread with a
    large stack. A RecursionError there too becomes `where(reason)`, a CompileError."""
    try:
        return fn()
    except RecursionError:
        pass
    with _LOCK:
        outcome: list = []

        def worker() -> None:
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
        raise where("the kernel is too deeply nested to compile (expressions or inlined "
                    "calls nested thousands deep)") from None
    raise value
