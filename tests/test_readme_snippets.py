"""The code blocks of README.md and of the documentation (docs/**/*.md) run as written.

Marker convention (an HTML comment on the line right before a ```python fence; several
markers are separated by commas, e.g. `<!-- snippet: continues, requires torch -->`):

    (no marker)                        the block is a script of its own
    <!-- snippet: continues -->        the block runs after the block before it, in the
                                       same script (it uses the names that block defined)
    <!-- snippet: skip -->             the block is not run (a fragment, a whole example
                                       included from examples/, or GPU-only code: say why
                                       in the page's text)
    <!-- snippet: requires torch -->   the block (and its script) runs only where the
                                       named modules import; skipped otherwise

Each script runs in a subprocess with CUBEPY_RUNTIME=cpu, from an empty temporary
directory where only the `cubepy` package is importable (as after `pip install cubepy`):
a snippet cannot lean on the repository's examples/ or tests/. A top-level
`print(...)  # TEXT` line claims that output: the test checks that stdout contains TEXT.
```bash blocks: each command line starting with `cubepy ` is run (as `python -m cubepy ...`)
from a temporary directory holding a copy of the repository's examples/, and must exit 0.
Blocks in other languages (```text, ```cuda, ```swift, ...) are listings, not programs.
Each page is a program of its own: `continues` never reaches across pages.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# README first, then the documentation site's pages (mkdocs.yml serves docs/).
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
MARKERS = ("continues", "skip", "requires")
_MARKER = re.compile(r"^<!--\s*snippet:\s*(.*?)\s*-->\s*$")
_CLAIMED_OUTPUT = re.compile(r"^print\(.*\)\s+#\s*(\S.*?)\s*$")


@dataclass
class Block:
    lang: str
    line: int  # line of the opening fence in its page
    code: str
    markers: list[str] = field(default_factory=list)
    page: str = "README.md"  # the page, relative to the repository root


@dataclass
class Script:
    """One or more blocks run as one program."""

    blocks: list[Block]
    requires: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return f"{self.blocks[0].page}:" + "+".join(str(b.line) for b in self.blocks)

    def source(self) -> str:
        return "\n".join(f"# --- {b.page} line {b.line}\n{b.code}" for b in self.blocks)


def read_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced blocks of a markdown text, each with the markers just above it."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = lines[i].strip()
        if fence.startswith("```") and len(fence) > 3:
            markers = []
            found = _MARKER.match(lines[i - 1].strip()) if i else None
            if found:
                markers = [m.strip() for m in found.group(1).split(",") if m.strip()]
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            blocks.append(Block(fence[3:].strip(), i + 1, "\n".join(lines[i + 1:end]) + "\n",
                                markers, page))
            i = end
        i += 1
    return blocks


def python_scripts(blocks: list[Block]) -> list[Script]:
    scripts: list[Script] = []
    for block in (b for b in blocks if b.lang == "python"):
        if "skip" in block.markers:
            continue
        needs = {m.split(None, 1)[1].strip() for m in block.markers if m.startswith("requires ")}
        if "continues" in block.markers:
            assert scripts and scripts[-1].blocks[0].page == block.page, \
                f"{block.page}:{block.line}: 'continues' but no block of its page runs before it"
            scripts[-1].blocks.append(block)
            scripts[-1].requires |= needs
        else:
            scripts.append(Script([block], needs))
    return scripts


def cli_commands(blocks: list[Block]) -> list[tuple[int, str]]:
    """(page:line, command) of each `cubepy ...` command in the bash blocks."""
    out = []
    for block in (b for b in blocks if b.lang == "bash"):
        joined = block.code.replace("\\\n", " ")
        for cmd in joined.splitlines():
            cmd = cmd.split("#", 1)[0].strip()
            if cmd.startswith("cubepy "):
                out.append((f"{block.page}:{block.line}", cmd))
    return out


def _page_blocks(path: Path) -> list[Block]:
    return read_blocks(path.read_text(), str(path.relative_to(ROOT)))


BLOCKS = [block for path in PAGES for block in _page_blocks(path)]
SCRIPTS = [script for path in PAGES for script in python_scripts(_page_blocks(path))]


def test_readme_has_python_snippets_and_only_known_markers():
    assert len(SCRIPTS) >= 1
    for block in BLOCKS:
        for marker in block.markers:
            assert marker.split()[0] in MARKERS, \
                f"{block.page}:{block.line}: unknown snippet marker {marker!r} (known: {MARKERS})"
            assert block.lang == "python", \
                f"{block.page}:{block.line}: snippet markers apply to ```python blocks only"


def test_docs_pages_are_collected_and_their_snippets_run():
    """The documentation's pages are read, and those with python examples contribute."""
    pages = {s.blocks[0].page for s in SCRIPTS}
    assert {"README.md", "docs/index.md", "docs/GETTING_STARTED.md", "docs/METAL.md"} <= pages
    skipped = {b.page for b in BLOCKS if "skip" in b.markers}
    assert "docs/EXPLORE.md" in skipped and "docs/ERRORS.md" in skipped


def test_continues_never_reaches_into_another_page():
    first = read_blocks("```python\na = 1\n```\n", "docs/A.md")
    second = read_blocks("<!-- snippet: continues -->\n```python\nprint(a)\n```\n", "docs/B.md")
    with pytest.raises(AssertionError, match="docs/B.md:2"):
        python_scripts(first + second)


def test_markers_are_parsed_as_documented():
    text = ("```python\na = 1\n```\n<!-- snippet: continues, requires json -->\n"
            "```python\nprint(a)  # 1\n```\n<!-- snippet: skip -->\n```python\nboom\n```\n"
            "```python\nb = 2\n```\n")
    scripts = python_scripts(read_blocks(text))
    assert [s.name for s in scripts] == ["README.md:1+5", "README.md:12"]
    assert scripts[0].requires == {"json"}
    assert "boom" not in "".join(s.source() for s in scripts)


@pytest.fixture(scope="module")
def installed_like(tmp_path_factory) -> Path:
    """A directory holding only `cubepy` (a link to this checkout's package)."""
    site = tmp_path_factory.mktemp("site")
    (site / "cubepy").symlink_to(ROOT / "cubepy", target_is_directory=True)
    return site


def _env(site: Path) -> dict[str, str]:
    env = dict(os.environ, CUBEPY_RUNTIME="cpu", PYTHONPATH=str(site))
    env.pop("CUBEPY_DEBUG", None)
    return env


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.name)
def test_python_snippet_runs_as_written(script: Script, installed_like, tmp_path):
    for module in sorted(script.requires):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{script.name} needs {module}")
    path = tmp_path / "snippet.py"
    path.write_text(script.source())
    run = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=_env(installed_like),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{script.name} failed:\n{run.stderr[-4000:]}"
    for block in script.blocks:
        for k, line in enumerate(block.code.splitlines()):
            claim = _CLAIMED_OUTPUT.match(line)
            if claim:
                assert claim.group(1) in run.stdout, \
                    f"{block.page}:{block.line + 1 + k} claims {claim.group(1)!r}; got\n{run.stdout}"


@pytest.mark.parametrize("where,command", [
    pytest.param(w, c, id=f"{w}-{c.split()[1]}") for w, c in cli_commands(BLOCKS)])
def test_cli_command_runs_as_written(where, command, installed_like, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    args = command.split()[1:]
    run = subprocess.run([sys.executable, "-m", "cubepy", *args], cwd=tmp_path,
                         env=_env(installed_like), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{where}: {command}\n{run.stderr[-4000:]}"
    assert run.stdout.strip()
    if "-o" in args:
        assert (tmp_path / args[args.index("-o") + 1]).stat().st_size > 0
