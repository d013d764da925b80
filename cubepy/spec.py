"""The specialisation key: everything that makes one compiled variant of a kernel.

Everything after the frontend is a pure function of (kernel, Specialization, target,
checked), which makes caching simple and safe. Two specialisations are equal only when
they compile to the same code: comptime floats compare by bit pattern (`-0.0` is not
`0.0`, and a NaN equals a NaN with the same bits).
"""
from __future__ import annotations

import struct
from typing import Any

from .ir.batched_dataclass import build_pending, dataclass  # (frozen classes, cheap to create)
from .ir.types import DType


def exact_key(value: Any) -> Any:
    """`value` as a cache key that tells apart every value compiling differently: floats
    by their IEEE bit pattern, containers element by element, others by type and value
    (so True is not 1)."""
    if isinstance(value, float):
        return (float, struct.pack("<d", value))
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(exact_key(v) for v in value))
    return (type(value), value)


@dataclass(frozen=True, eq=False)
class Specialization:
    """generics: placeholder name -> DType; comptime: parameter name -> Python value;
    cube_dim: (x, y, z); line_sizes: buffer parameter name -> line size (1 if absent);
    shared_mem: the bytes of DynamicSharedMemory given at launch (None: not given);
    fast_math: False for strict floats (`@cube(launch=True, fast_math=False)`);
    misaligned: line buffer parameters whose address is not a multiple of their line's
    bytes (16 at most): their lines are read and written element by element, the others
    as one vector access where the target has them."""

    generics: tuple[tuple[str, DType], ...] = ()
    comptime: tuple[tuple[str, Any], ...] = ()
    cube_dim: tuple[int, int, int] = (1, 1, 1)
    line_sizes: tuple[tuple[str, int], ...] = ()
    shared_mem: int | None = None
    fast_math: bool = True
    misaligned: tuple[str, ...] = ()

    @staticmethod
    def make(generics: dict | None = None, comptime: dict | None = None,
             cube_dim=(1, 1, 1), line_sizes: dict | None = None,
             shared_mem: int | None = None, fast_math: bool = True,
             misaligned=()) -> "Specialization":
        lines = tuple(sorted((k, v) for k, v in (line_sizes or {}).items() if v != 1))
        sized = {k for k, _ in lines}
        return Specialization(
            tuple(sorted((generics or {}).items())),
            tuple(sorted((comptime or {}).items(), key=lambda kv: kv[0])),
            tuple(int(v) for v in cube_dim), lines,
            None if shared_mem is None else int(shared_mem), bool(fast_math),
            tuple(sorted(k for k in misaligned if k in sized)))

    def __post_init__(self) -> None:  # the exact key, computed once
        object.__setattr__(self, "_key", (
            self.generics, tuple((k, exact_key(v)) for k, v in self.comptime),
            self.cube_dim, self.line_sizes, self.shared_mem, self.fast_math,
            self.misaligned))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Specialization):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def generic(self, name: str) -> DType | None:
        for k, v in self.generics:
            if k == name:
                return v
        return None

    def comptime_value(self, name: str) -> Any:
        for k, v in self.comptime:
            if k == name:
                return v
        raise KeyError(name)

    def has_comptime(self, name: str) -> bool:
        return any(k == name for k, _ in self.comptime)

    def aligned(self, name: str) -> bool:
        """Whether line buffer `name` may be accessed a whole line at a time."""
        return name not in self.misaligned

    def line_size(self, name: str) -> int:
        for k, v in self.line_sizes:
            if k == name:
                return v
        return 1


build_pending()  # (the frozen classes above)
