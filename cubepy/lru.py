"""A small bounded mapping for in-memory caches: when full, the least recently used entry
goes. Used for the per-kernel caches of specialisations and launch plans (kernel.py)."""
from __future__ import annotations

from collections import OrderedDict
from typing import Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING = object()


class LRU(OrderedDict):
    """At most `maxsize` entries. `get` and `put` mark an entry as most recently used;
    `lru[key]` is a plain lookup (C speed) for hot paths that call `move_to_end(key)`
    themselves."""

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"an LRU cache holds at least one entry, not {maxsize}")
        super().__init__()
        self.maxsize = maxsize

    def get(self, key, default=None):
        value = OrderedDict.get(self, key, _MISSING)
        if value is _MISSING:
            return default
        self.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        """Stores `value`, dropping the least recently used entry when over `maxsize`."""
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.maxsize:
            self.popitem(last=False)
