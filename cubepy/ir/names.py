"""The one fresh-name generator of the compiler.

Every pass or generator that invents names draws them from a `NameTable`: the names
already taken, a suffix style, and one counter for numbered temporaries. The styles
reproduce the conventions the generated code has always used, so switching a caller
to the table changes no output:

- "underscore_n": base, base_1, base_2, ... (frontend locals, line scalars)
- "always_n":     base_1, base_2, ...       (unrolled loop copies: never the bare base)
- "append_":      base, base_, base__, ...  (the uniform-barrier flag)
- "n":            base, base1, base2, ...

User identifiers in generated source are mangled per target by codegen/names.py's
`Namer`, which builds on this kind of table but also knows each target's reserved words.
"""
from __future__ import annotations

from typing import Iterable

STYLES = ("underscore_n", "always_n", "append_", "n")


class NameTable:
    """Names taken in one scope, and fresh ones derived from a base."""

    def __init__(self, taken: Iterable[str] = (), style: str = "underscore_n"):
        if style not in STYLES:
            raise ValueError(f"unknown name style {style!r}: expected one of {STYLES}")
        self.taken: set[str] = set(taken)
        self.style = style
        self._count = 0

    def fresh(self, base: str) -> str:
        """A name derived from `base` that is not taken; taken from then on."""
        for name in self._candidates(base):
            if name not in self.taken:
                self.taken.add(name)
                return name
        raise AssertionError("unreachable: candidates are endless")

    def _candidates(self, base: str) -> Iterable[str]:
        if self.style != "always_n":
            yield base
        i = 1
        while True:
            if self.style == "append_":
                yield base + "_" * i
            elif self.style == "n":
                yield f"{base}{i}"
            else:
                yield f"{base}_{i}"
            i += 1

    def number(self) -> int:
        """The next number of the table's counter (1, 2, ...), shared by every stem."""
        self._count += 1
        return self._count

    def counter(self, stem: str) -> str:
        """A numbered temporary `{stem}{n}` (e.g. "cube_t" -> cube_t3, "_t" -> _t4);
        the caller's stem carries a prefix no user name can have."""
        return f"{stem}{self.number()}"

    def reserve(self, name: str) -> None:
        """Marks `name` taken."""
        self.taken.add(name)

    def __contains__(self, name: str) -> bool:
        return name in self.taken
