"""Renders the jinja2 kernel skeletons in codegen/templates/ (one environment for every
target).

Compiling a template costs milliseconds, which matters for a cold `source()` call, so
compiled templates are kept on disk in the `jinja2` folder of the cubepy cache
(cubepy/cache.py, docs/CACHE.md). jinja2 unmarshals that bytecode, so it goes through
`TrustedBytecodeCache`: an entry is handed to jinja2 only from a folder and file the
current user owns and nobody else can write, and only when its checksum matches. A
cache that cannot be used is skipped: rendering never depends on it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import jinja2

from ..cache import DiskCache, cache_key

_ENV = None


class TrustedBytecodeCache(jinja2.BytecodeCache):
    """jinja2's bytecode cache on top of cubepy's DiskCache (trust + checksum checks
    before jinja2 reads anything)."""

    def __init__(self, disk: DiskCache | None = None):
        self.disk = disk or DiskCache("jinja2", ".j2c")

    def key(self, bucket: jinja2.bccache.Bucket) -> str:
        """The entry key: jinja2's template key plus the jinja2 and Python versions
        (jinja2's bytecode is specific to both)."""
        return cache_key("jinja2-bytecode", jinja2.__version__, sys.version, bucket.key)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = self.disk.get(self.key(bucket))
        if data is None:
            return
        try:
            bucket.bytecode_from_string(data)  # also rejects a stale template checksum
        except Exception:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.disk.put(self.key(bucket), bucket.bytecode_to_string())


def make_environment() -> jinja2.Environment:
    """A new jinja2 environment for the skeletons, with the trusted bytecode cache."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined, autoescape=False,
        bytecode_cache=TrustedBytecodeCache())


def _environment() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = make_environment()
    return _ENV


def render(template: str, **context) -> str:
    """Renders `template` (a file name in codegen/templates/) with `context`."""
    return _environment().get_template(template).render(**context)
