"""The user-facing errors: CompileError (a kernel the compiler rejects), LaunchError
(arguments, a configuration or a runtime a launch rejects) and OptionError (a bad
keyword of source()/ir()), all CubepyError.

They are the user's mistakes, so their tracebacks end at the user's call: the public
entry points (decoration, source(), ir(), launch(), client()) drop cubepy's own frames
and the chained internal exceptions before the error propagates (`hide_internal_frames`).
CUBEPY_DEBUG=1 keeps everything, for reporting a bug in cubepy itself. See docs/ERRORS.md.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import linecache
import os
import sys
import types
from typing import Callable, Iterator, NoReturn, Optional, TypeVar

from .ir.loc import Loc

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class CubepyError(Exception):
    """Base of the errors cubepy raises for a user's mistake (never for its own bugs)."""


class CompileError(CubepyError):
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
        text = (f"{self.msg}\n  --> {_display_name(self.filename)}:{self.lineno}:"
                f"{self.col_offset + 1}")
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


def _display_name(filename: str) -> str:
    """`Cell In[3]` for the code of an IPython/Jupyter cell (its file name is opaque:
    `<ipython-input-3-...>` or `/tmp/ipykernel_.../....py`), else the file name."""
    if not filename.startswith("<") and "ipykernel" not in filename \
            or "IPython" not in sys.modules:
        return filename
    try:
        from IPython import get_ipython
        shell = get_ipython()
        label = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # an IPython without these APIs: the plain name is still right
        return filename
    return " ".join(label) if label else filename


def compile_error(loc: Loc, msg: str) -> NoReturn:
    """Raises a CompileError at `loc`: the one way the compiler reports a user's mistake."""
    raise CompileError.at(loc, msg)


class LaunchError(CubepyError):
    """A launch rejected before anything runs; the message names the parameter."""

    def __init__(self, msg: str, param: Optional[str] = None):
        self.msg = msg
        self.param = param
        super().__init__(msg)


class OptionError(CubepyError, TypeError, ValueError):
    """A keyword of source()/ir() that the kernel does not take, or a value it rejects
    (an unknown target, a dtype outside a placeholder's bound). It is a TypeError and a
    ValueError, as Python reports bad arguments, so existing handlers still catch it."""


for _cls in (CubepyError, CompileError, LaunchError, OptionError):
    _cls.__module__ = "cubepy"  # tracebacks say cubepy.CompileError, the public name


def debug_enabled() -> bool:
    """CUBEPY_DEBUG=1: errors keep cubepy's frames and chained exceptions."""
    return os.environ.get("CUBEPY_DEBUG", "").strip().lower() not in ("", "0", "false", "no")


def _is_internal(frame: types.FrameType) -> bool:
    filename = frame.f_code.co_filename
    if filename.startswith(_PACKAGE_DIR) or filename.startswith("<cubepy"):
        return True
    module = frame.f_globals.get("__name__") or ""
    return module == "cubepy" or module.startswith("cubepy.")


def hide_internal_frames(exc: BaseException) -> None:
    """Drops cubepy's frames from `exc`'s traceback and hides its chained exceptions,
    unless CUBEPY_DEBUG is set. The caller re-raises `exc` with a bare `raise`, which does
    not add the caller's own frame again, so the traceback ends at the user's call."""
    if debug_enabled():
        return
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        if not _is_internal(tb.tb_frame):
            frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    user_tb = None
    for frame, lasti, lineno in reversed(frames):
        user_tb = types.TracebackType(user_tb, frame, lasti, lineno)
    exc.with_traceback(user_tb)
    exc.__cause__ = None
    exc.__suppress_context__ = True


_F = TypeVar("_F", bound=Callable)


def public_entry(fn: _F) -> _F:
    """Makes `fn` a public entry point: a CubepyError leaving it shows only user frames.
    (Costs one call; the launch hot path inlines the same try/except instead.)"""
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CubepyError as exc:
            hide_internal_frames(exc)
            raise  # a bare raise: this frame is not added to the traceback
    return entry  # type: ignore[return-value]


def missing_package(feature: str, module: str, extra: str, exc: ImportError,
                    note: str = "") -> LaunchError:
    """The LaunchError for an optional package that does not import: the exact pip
    command when it is not installed, the import error when it is installed but broken."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == module:
        return LaunchError(f"{feature} needs the {module} package, which is not installed. "
                           f"Install it with:  pip install \"cubepy[{extra}]\"{note}")
    return LaunchError(f"{feature} needs the {module} package, which failed to import "
                       f"({type(exc).__name__}: {exc}){note}")


_ON_COMMAND_LINE = contextvars.ContextVar("cubepy_on_command_line", default=False)


@contextlib.contextmanager
def command_line_phrasing() -> Iterator[None]:
    """Inside this block messages tell how to bind a value the way the `cubepy` command
    does (`-D Float=f32`, `--line-size x=4`) instead of the Python API's keywords."""
    token = _ON_COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _ON_COMMAND_LINE.reset(token)


def how_to_bind(assignment: str, launch: bool = False) -> str:
    """`-D NAME=VALUE` on the command line; `NAME=VALUE to source()/ir()` in Python."""
    if _ON_COMMAND_LINE.get():
        return f"-D {assignment}"
    return f"{assignment} to source()/ir(){'/launch()' if launch else ''}"


def line_sizes_option() -> str:
    """What the user calls the line sizes option where they are."""
    return "--line-size" if _ON_COMMAND_LINE.get() else "line_sizes"


def exit_code(exc: CubepyError) -> int:
    """The exit status for a command that stops on `exc`: 1 for a kernel the compiler
    rejects, 2 for a usage or environment problem (a missing runtime, a bad option)."""
    return 1 if isinstance(exc, CompileError) else 2


@contextlib.contextmanager
def exit_on_error(prog: str | None = None) -> Iterator[None]:
    """For scripts and command lines: a CubepyError inside the block is printed as one
    message (no traceback) and exits with `exit_code(exc)`. CUBEPY_DEBUG=1 lets it
    propagate with its full traceback.

        if __name__ == "__main__":
            with cubepy.exit_on_error():
                sys.exit(main())
    """
    try:
        yield
    except CubepyError as exc:
        if debug_enabled():
            raise
        raise SystemExit(report_error(exc, prog)) from None


def report_error(exc: CubepyError, prog: str | None = None) -> int:
    """Prints `PROG: error: MESSAGE` on stderr; returns `exit_code(exc)`."""
    prog = prog or os.path.basename(sys.argv[0] or "cubepy")
    print(f"{prog}: error: {exc}", file=sys.stderr)
    return exit_code(exc)
