"""The one statement walker of the code generators.

`StatementWalker` owns what every generator does the same way: the output lines and
their indentation, nesting a block one level deeper, dispatching each statement kind to
a hook (`stmt_if`, `stmt_for`, ... named after the IR node class, lower case), and the
error for a statement kind a generator lacks. `BracedWalker` adds what the braced
languages (C, CUDA, MSL, WGSL) share: the `// <line>: <python>` comment before the first
statement of each source line, IR comments, if/else-if/else chains, while loops,
break, continue and terminate. Generators supply the hooks that differ: declarations,
assignments, stores, atomics, for loops (bounds and steps are spelled differently),
barriers, and `condition(expr)` for the text of a branch or loop condition.

The numpy generator (numpy_gen.py) builds on `StatementWalker` alone: its control flow
is lane masks, not braces, so its if/loop hooks are its own.
"""
from __future__ import annotations

from typing import Callable

from ..errors import compile_error
from ..ir import nodes as n
from ..ir.names import NameTable
from .names import comment_text, source_line

INDENT = "    "


class StatementWalker:
    """Walks a kernel's statements, writing indented lines through per-kind hooks.
    `temps` numbers the generator's temporaries (one counter for every stem)."""

    def __init__(self, depth: int = 1):
        self.lines: list[str] = []
        self.depth = depth
        self.temps = NameTable()

    # -- output -----------------------------------------------------------------------
    def line(self, text: str) -> None:
        """Appends `text` at the current depth."""
        self.lines.append(INDENT * self.depth + text)

    # -- walking ----------------------------------------------------------------------
    def walk(self, block: n.Block) -> None:
        """Writes every statement of `block` at the current depth."""
        for stmt in block.stmts:
            self.stmt(stmt)

    def nested(self, block: n.Block) -> None:
        """Writes `block` one level deeper."""
        self.depth += 1
        self.walk(block)
        self.depth -= 1

    def stmt(self, s: n.Stmt) -> None:
        """Writes one statement: `before(s)`, then its kind's hook."""
        self.before(s)
        method = getattr(self, "stmt_" + type(s).__name__.lower(), None)
        if method is None:
            self.unsupported(s)
        method(s)

    def before(self, s: n.Stmt) -> None:
        """Called before each statement's hook (source comments, error locations)."""

    def unsupported(self, s: n.Stmt) -> None:
        """A statement kind this generator has no hook for."""
        compile_error(s.loc, f"this code generator does not support "
                             f"{type(s).__name__} statements")


class BracedWalker(StatementWalker):
    """The statement forms C, CUDA, MSL and WGSL write alike."""

    def __init__(self, depth: int = 1):
        super().__init__(depth)
        self._last_line: tuple[str, int] | None = None

    def condition(self, e: n.Expr) -> str:
        """The text of a branch or loop condition (inside the parentheses)."""
        raise NotImplementedError

    def before(self, s: n.Stmt) -> None:
        if not isinstance(s, n.Comment):
            self.source_comment(s.loc)

    def source_comment(self, loc: n.Loc) -> None:
        """`// 14: <python line>` before the first statement of each source line."""
        if loc.lineno <= 0:
            return
        key = (loc.filename, loc.lineno)
        if key == self._last_line:
            return
        self._last_line = key
        text = source_line(loc.filename, loc.lineno)
        self.line(f"// {loc.lineno}: {text}" if text else f"// line {loc.lineno}")

    def stmt_comment(self, s: n.Comment) -> None:
        for text in s.text.splitlines() or [""]:
            self.line(f"// {comment_text(text)}".rstrip())

    def branch(self, cond: str, then: Callable[[], None],
               orelse: Callable[[], None] | None = None) -> None:
        """`if (cond) { then() } else { orelse() }`, each part one level deeper."""
        self.line(f"if ({cond}) {{")
        self.depth += 1
        then()
        self.depth -= 1
        if orelse is not None:
            self.line("} else {")
            self.depth += 1
            orelse()
            self.depth -= 1
        self.line("}")

    def stmt_if(self, s: n.If) -> None:
        self.line(f"if ({self.condition(s.cond)}) {{")
        self.nested(s.then)
        orelse = s.orelse
        while len(orelse.stmts) == 1 and isinstance(orelse.stmts[0], n.If):
            inner = orelse.stmts[0]  # an elif chain
            self.line(f"}} else if ({self.condition(inner.cond)}) {{")
            self.nested(inner.then)
            orelse = inner.orelse
        if orelse.stmts:
            self.line("} else {")
            self.nested(orelse)
        self.line("}")

    def stmt_while(self, s: n.While) -> None:
        self.line(f"while ({self.condition(s.cond)}) {{")
        self.nested(s.body)
        self.line("}")

    def stmt_break(self, s: n.Break) -> None:
        self.line("break;")

    def stmt_continue(self, s: n.Continue) -> None:
        self.line("continue;")

    def stmt_terminate(self, s: n.Terminate) -> None:
        self.line("return;")
