"""The source explorer: a kernel's Python beside its IR, CUDA, WGSL and Metal, line by line.

`kernel.explore(...)` (or `cubepy explore FILE.py:KERNEL -o page.html`) compiles one
specialisation for every target and builds one self-contained HTML page (inline CSS,
inline script, no network): syntax highlighted with pygments, each Python line linked to
the lines it produced in every target, hover/click highlighting, the specialisation and
the launch ABI. Jupyter shows the same page through `_repr_html_`.

Lines are matched through what the generators already write: `// N: <python line>`
comments in CUDA, WGSL and Metal, `# line N` comments in the IR. A generated line belongs
to the nearest such comment above it at the same or a shallower indentation, so the
statements and the closing braces of a Python `if` map to that `if`.
"""
from __future__ import annotations

import html
import inspect
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import missing_package
from .targets import all_targets

if TYPE_CHECKING:
    from .abi import KernelABI
    from .kernel import CubeFunction

_C_COMMENT = re.compile(r"^(\s*)// (\d+): ")
_IR_COMMENT = re.compile(r"#\s*line (\d+)(?: \"[^\"]*\")?\s*$")
_IDS = itertools.count(1)


def _panels() -> tuple[tuple[str, str], ...]:
    """(name, title) of the IR and of every target registered now that shows source."""
    return (("ir", "IR"),) + tuple((t.name, t.title) for t in all_targets()
                                   if t.shows_source)


@dataclass
class TargetView:
    """One target's generated text and, per line (0-based), the Python line it came from."""

    name: str
    title: str
    text: str
    py_lines: list[int | None]
    abi: "KernelABI | None" = None


@dataclass
class Exploration:
    """A kernel's Python source beside its generated code; `html()` is the page."""

    kernel: str
    filename: str
    python: dict[int, str]  # file line number -> text, the lines shown
    sections: list[tuple[str, int, int]]  # (title, first line, last line) of each function
    spec: str
    checked: bool
    targets: list[TargetView] = field(default_factory=list)

    def links(self) -> dict[int, dict[str, list[int]]]:
        """Python line -> target -> the 1-based generated lines it produced."""
        out: dict[int, dict[str, list[int]]] = {}
        for view in self.targets:
            for i, py in enumerate(view.py_lines):
                if py is not None:
                    out.setdefault(py, {}).setdefault(view.name, []).append(i + 1)
        return out

    def html(self) -> str:
        """A complete HTML document (write it to a file and open it in a browser)."""
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>cubepy explore: {html.escape(self.kernel)}</title></head>\n"
                f"<body style=\"margin:0\">\n{self._repr_html_()}\n</body></html>\n")

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.html(), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        from .explore_html import render
        return render(self, f"cubepy-explore-{next(_IDS)}")


def map_lines(text: str, target: str) -> list[int | None]:
    """The Python line of each generated line (None for lines no statement produced)."""
    stack: list[tuple[int, int]] = []  # (indentation, python line) of open comments
    out: list[int | None] = []
    for line in text.splitlines():
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if target == "ir":
            found = _IR_COMMENT.search(line)
            number = int(found.group(1)) if found else None
        else:
            found = _C_COMMENT.match(line)
            number = int(found.group(2)) if found else None
        if number is not None:
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, number))
            out.append(number)
            continue
        if not stripped:
            out.append(None)
            continue
        while stack and stack[-1][0] > indent:  # left the block of a deeper statement
            stack.pop()
        out.append(stack[-1][1] if stack else None)
    return out


def explore(fn: "CubeFunction", cube_dim=(1, 1, 1), checked: bool = True,
            line_sizes: dict[str, int] | None = None, **specialization) -> Exploration:
    """Compiles `fn` for every target with one specialisation (as `source()` takes it)."""
    try:
        import pygments  # noqa: F401  (needed to render; fail before compiling)
    except ImportError as e:
        raise missing_package("the source explorer", "pygments", "explore", e) from None
    from .ir.passes import run_pipeline
    from .ir.printer import print_kernel
    from .kernel import build_kernel
    from .log import describe
    spec = fn._specialization(cube_dim, specialization, line_sizes)
    parsed = fn._parse()
    ir_text = print_kernel(run_pipeline(build_kernel(parsed, spec, checked), None))
    views = [TargetView("ir", "IR", ir_text, [])]
    for name, title in _panels()[1:]:
        compiled = fn._compile(spec, name, checked)
        views.append(TargetView(name, title, compiled.source or "", [], compiled.abi))
    for view in views:
        view.py_lines = map_lines(view.text, view.name)
    python, sections = _python_lines(fn, {p for v in views for p in v.py_lines if p})
    return Exploration(fn.__name__, parsed.filename, python, sections, describe(spec),
                       checked, views)


def _python_lines(fn: "CubeFunction", wanted: set[int]
                  ) -> tuple[dict[int, str], list[tuple[str, int, int]]]:
    """The kernel's lines, and those of the device functions of its file whose lines the
    generated code cites (they were inlined)."""
    from .kernel import CubeFunction
    lines, first = inspect.getsourcelines(fn.fn)
    shown = {first + i: text.rstrip("\n") for i, text in enumerate(lines)}
    sections = [(f"kernel {fn.__name__}", first, first + len(lines) - 1)]
    filename = inspect.getsourcefile(fn.fn)
    for value in list(fn.fn.__globals__.values()):
        if not isinstance(value, CubeFunction) or value is fn or value.is_kernel:
            continue
        try:
            if inspect.getsourcefile(value.fn) != filename:
                continue
            dlines, dfirst = inspect.getsourcelines(value.fn)
        except (OSError, TypeError):
            continue
        span = range(dfirst, dfirst + len(dlines))
        if any(n in span and n not in shown for n in wanted):
            shown.update({dfirst + i: t.rstrip("\n") for i, t in enumerate(dlines)})
            sections.append((f"device function {value.__name__} (inlined)", dfirst,
                             dfirst + len(dlines) - 1))
    return shown, sorted(sections, key=lambda s: s[1])
