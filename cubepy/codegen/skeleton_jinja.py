"""The skeletons' jinja2 environment, for what the shipped translations do not cover (an
edited template, and the translation itself): see cubepy/codegen/skeleton.py.

jinja2 compiles a template into Python bytecode and keeps it on disk in the `jinja2`
folder of the cubepy cache (cubepy/cache.py, docs/CACHE.md). jinja2 unmarshals that
bytecode, so it goes through `TrustedBytecodeCache`: an entry is handed to jinja2 only
from a folder and file the current user owns and nobody else can write, and only when its
checksum matches. A cache that cannot be used is skipped: rendering never depends on it.
"""
from __future__ import annotations

import sys

import jinja2

from ..cache import DiskCache, cache_key
from .skeleton import TEMPLATES


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
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined, autoescape=False,
        bytecode_cache=TrustedBytecodeCache())
