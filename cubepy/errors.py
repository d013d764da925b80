"""The two user-facing errors: CompileError (a kernel the compiler rejects) and
LaunchError (arguments or a configuration a launch rejects)."""
from __future__ import annotations

import linecache
from typing import NoReturn, Optional

from .ir.nodes import Loc


class CompileError(Exception):
    """A kernel the compiler rejects, located at the user's line.

    Attributes: `msg`, `filename`, `lineno` (line in the user's file), `col_offset`
    (0-based column, as in `ast`), `source_line` (the text of that line, if known).
    `str(error)` shows the message, `file:line:col`, the line and a caret.
    """

    def __init__(self, msg: str, filename: str = "<unknown>", lineno: int = 0,
                 col_offset: int = 0, end_col_offset: Optional[int] = None,
                 source_line: Optional[str] = None):
        self.msg = msg
        self.filename = filename
        self.lineno = lineno
        self.col_offset = col_offset
        self.end_col_offset = end_col_offset
        if source_line is None and lineno > 0:
            source_line = linecache.getline(filename, lineno).rstrip("\n") or None
        self.source_line = source_line
        super().__init__(self._render())

    @classmethod
    def at(cls, loc: Loc, msg: str) -> "CompileError":
        return cls(msg, loc.filename, loc.lineno, loc.col, loc.end_col)

    def _render(self) -> str:
        text = f"{self.msg}\n  --> {self.filename}:{self.lineno}:{self.col_offset + 1}"
        if self.source_line:
            line = self.source_line.expandtabs()
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            start = max(self.col_offset - indent, 0)
            width = 1
            if self.end_col_offset is not None and self.end_col_offset > self.col_offset:
                width = min(self.end_col_offset - self.col_offset, len(stripped) - start)
            text += f"\n   | {stripped}\n   | {' ' * start}{'^' * max(width, 1)}"
        return text

    def __reduce__(self):
        return (type(self), (self.msg, self.filename, self.lineno, self.col_offset,
                             self.end_col_offset, self.source_line))


def compile_error(loc: Loc, msg: str) -> NoReturn:
    """Raises a CompileError at `loc`: the one way the compiler reports a user's mistake."""
    raise CompileError.at(loc, msg)


class LaunchError(Exception):
    """A launch rejected before anything runs; the message names the parameter."""

    def __init__(self, msg: str, param: Optional[str] = None):
        self.msg = msg
        self.param = param
        super().__init__(msg)
