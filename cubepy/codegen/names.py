"""Every piece of user text that reaches generated CUDA, WGSL or MSL source goes through
this module: identifiers through `mangle` (and `Namer`, which keeps them unique within a
kernel), copied Python lines and other comment text through `comment_text`.

Identifiers: a user name is kept as it is when it is an ASCII identifier that no target
reserves (codegen/reserved.py: keywords, reserved words, predefined macros, library and
built-in names of every target, and the names the generator introduces). Otherwise it is
made ASCII and legal and gets a trailing `_`: `float` -> `float_`, `__x` -> `x_`,
`cube_pos` -> `cube_pos_`, `π` -> `u03c0_`. Every fixed name the generator introduces
starts with `cube_` and never ends with `_` (or is one of reserved.GENERATED), so a user
name can never take one; names it derives from user names (WGSL's `cube_load_<buffer>`)
are claimed from the kernel's `Namer`, like user names. Two user names that mangle alike
are told apart by `Namer` with a number: `x_`, `x_1`.
"""
from __future__ import annotations

import functools
import linecache
import re

from .reserved import MACRO_PREFIX, reserved

GENERATED_PREFIX = "cube_"
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def _is_safe(name: str, taken: frozenset[str]) -> bool:
    return bool(_IDENT.match(name)) and "__" not in name \
        and not name.startswith(GENERATED_PREFIX) and name not in taken \
        and not MACRO_PREFIX.match(name)


def _is_free(name: str) -> bool:
    """A numbered spelling is usable unless some target reserves it (even a name the
    generator derives, such as `cube_load_x_1`, must not become a macro)."""
    return name not in reserved(None, True) and not MACRO_PREFIX.match(name)


def _ascii(name: str) -> str:
    """`name` spelled with [A-Za-z0-9_]: accents dropped (é -> e), any other character
    written as its code point (π -> u03c0)."""
    if not name.isascii():
        import unicodedata  # (loaded only for names beyond ASCII)
        name = unicodedata.normalize("NFKD", name)
    out = []
    for ch in name:
        if ch.isascii():
            out.append(ch if ch.isalnum() or ch == "_" else f"_u{ord(ch):04x}_")
        elif unicodedata.category(ch) != "Mn":  # combining marks (accents) are dropped
            out.append(f"_u{ord(ch):04x}_")
    return "".join(out)


def mangle(name: str, target: str | None = None, global_scope: bool = False,
           avoid: frozenset[str] = frozenset()) -> str:
    """A legal identifier for the user name `name` in `target` ("cuda", "wgsl", "metal";
    None: every target): unchanged where safe, else ASCII, without `__` or a leading
    `_`, with a trailing `_`. Keywords of every target are avoided in each, so names
    read alike across targets; library names only where the target has them.
    `global_scope` also avoids the C library's global functions (the kernel's name);
    `avoid` adds names reserved in this position only."""
    if name not in avoid and _is_safe(name, reserved(target, global_scope)):
        return name
    base = re.sub(r"_+", "_", _ascii(name)).strip("_") or "v"
    if base[0].isdigit():
        base = "v" + base
    return base + "_"


def entry_name(kernel_name: str, target: str) -> str:
    """The name of a kernel's entry function in CUDA or MSL source (WGSL's is `main`)."""
    return mangle(kernel_name, target, global_scope=True)


def numbered(base: str, i: int) -> str:
    """`base` with the number `i` appended, never forming `__`."""
    return f"{base}{i}" if base.endswith("_") else f"{base}_{i}"


class Namer:
    """Unique identifiers for one kernel in `target`: each key (a namespace and an IR
    name) gets `mangle(name, target)` once, numbered when an earlier key took that
    spelling. `claim` hands out the generator's own derived names from the same pool."""

    def __init__(self, target: str | None, taken: frozenset[str] | set[str] = frozenset()):
        self.target = target
        self._map: dict[tuple, str] = {}
        self._taken: set[str] = set(taken)

    def get(self, key: tuple, name: str, avoid: frozenset[str] = frozenset()) -> str:
        """The identifier of `key` (IR name `name`); `avoid`: see `mangle`."""
        found = self._map.get(key)
        if found is None:
            found = self.claim(mangle(name, self.target, avoid=avoid))
            self._map[key] = found
        return found

    def claim(self, base: str) -> str:
        """`base`, or `base` numbered, whichever is free first; taken from then on."""
        candidate, i = base, 1
        while candidate in self._taken or (candidate != base and not _is_free(candidate)):
            candidate, i = numbered(base, i), i + 1
        self._taken.add(candidate)
        return candidate

    def is_taken(self, name: str) -> bool:
        return name in self._taken

    def __contains__(self, key: tuple) -> bool:
        return key in self._map


@functools.lru_cache(maxsize=512)
def info_field_names(abi, target: str) -> dict[tuple[str, str], str]:
    """(kind, param) -> the info struct field's identifier in `target`, unique within
    the struct. Scalar parameters are named first (as their locals are); the generator's
    fields (`x_len`, `x_shape`, `cube_count`, ...) follow and are numbered if a
    parameter took the spelling, e.g. a scalar `x_len` next to a tensor `x`."""
    namer = Namer(target)
    return {(f.kind, f.param): namer.get((f.kind, f.param), f.name)
            for f in sorted(abi.fields, key=lambda f: f.kind != "scalar")}


def field_name(abi, target: str, kind: str, param: str = "") -> str:
    """The identifier of the info struct field `kind` of parameter `param`."""
    return info_field_names(abi, target)[(kind, param)]


# Characters written as <U+XXXX> in comments: every control character (each target ends
# a line at some of LF, VT, FF, CR, NEL), line and paragraph separators (WGSL ends lines
# there too), format characters (bidirectional overrides could make the comment display
# as code), surrogates, private-use and unassigned code points.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escaped(ch: str) -> bool:
    """Whether `ch` is one of _ESCAPED_CATEGORIES; in ASCII only the control characters
    are, so the Unicode database is loaded only for source beyond ASCII."""
    if ch.isascii():
        return ch < " " or ch == "\x7f"
    import unicodedata
    return unicodedata.category(ch) in _ESCAPED_CATEGORIES


def comment_text(text: str) -> str:
    """`text` made safe to follow `//` on one line of any target: it cannot end the
    comment, continue it onto the next line (trailing `\\` or the trigraph `??/`), or
    close a block comment (`*/`)."""
    out = []
    for ch in text.strip():  # str.strip() also drops line and paragraph separators
        if ch == "\t":
            out.append(" ")
        elif _escaped(ch):
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    safe = "".join(out).replace("*/", "* /").strip()
    while safe.endswith(("\\", "??/")):  # a line splice would swallow the next line
        safe = safe[:-1 if safe.endswith("\\") else -3].rstrip()
    return safe


def source_line(filename: str, lineno: int) -> str:
    """Line `lineno` of the Python file `filename`, as comment-safe text ('' if none)."""
    return comment_text(linecache.getline(filename, lineno))
