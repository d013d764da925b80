"""Renders the jinja2 kernel skeletons in codegen/templates/ (one environment for every
target).

Compiling a template costs milliseconds, which matters for a cold `source()` call, so
compiled templates are kept in jinja2's on-disk bytecode cache under the cubepy cache
folder ($CUBEPY_CACHE_DIR, default ~/.cache/cubepy). A cache that cannot be written is
skipped silently: rendering never depends on it.
"""
from __future__ import annotations

import os
from pathlib import Path

_ENV = None


def _cache_dir() -> Path:
    base = os.environ.get("CUBEPY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cubepy")
    return Path(base) / "jinja2"


def _environment():
    global _ENV
    if _ENV is None:
        import jinja2
        bytecode_cache = None
        try:
            folder = _cache_dir()
            folder.mkdir(parents=True, exist_ok=True)
            bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))
        except OSError:
            pass
        _ENV = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
            undefined=jinja2.StrictUndefined, autoescape=False,
            bytecode_cache=bytecode_cache)
    return _ENV


def render(template: str, **context) -> str:
    """Renders `template` (a file name in codegen/templates/) with `context`."""
    return _environment().get_template(template).render(**context)
