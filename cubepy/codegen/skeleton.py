"""Renders the jinja2 kernel skeletons in codegen/templates/ (one environment for every
target).

Compiling a template costs milliseconds (jinja2's lexer, parser and code generator, then
Python's compiler), which matters for a process's first `source()` or launch. So:

- cubepy ships each template already compiled: `codegen/skeletons/<stem>_j2.py` holds the
  Python code jinja2 generates for it (what `jinja2.Environment.compile_templates`
  writes for a `ModuleLoader`), imported like any module (Python caches its bytecode).
  It is used only when it records the template's current SHA-256 and the installed
  jinja2's major.minor version; `python -m cubepy.codegen.skeleton` rewrites them after a
  template changes (tests/test_skeleton_shipped.py fails until then).
- Otherwise the template is compiled, and its bytecode kept on disk in the `jinja2`
  folder of the cubepy cache (cubepy/cache.py, docs/CACHE.md). jinja2 unmarshals that
  bytecode, so it goes through `TrustedBytecodeCache`: an entry is handed to jinja2 only
  from a folder and file the current user owns and nobody else can write, and only when
  its checksum matches. A cache that cannot be used is skipped: rendering never depends
  on it.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jinja2

from ..cache import DiskCache, cache_key, sha256

_ENV = None
TEMPLATES = Path(__file__).parent / "templates"
SHIPPED_PACKAGE = "skeletons"  # codegen/skeletons/: the templates, compiled


class SkeletonEnvironment(jinja2.Environment):
    """The skeletons' environment; keeps the templates loaded from the shipped code."""

    shipped: dict[str, jinja2.Template]

    def skeleton(self, name: str) -> jinja2.Template:
        """The template `name`: from its shipped code when that is current, else
        compiled (through the bytecode cache)."""
        shipped = self.__dict__.setdefault("shipped", {})
        template = shipped.get(name)
        if template is None:
            template = shipped_template(self, name)
            if template is None:
                return self.get_template(name)
            shipped[name] = template
        return template


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


def make_environment() -> SkeletonEnvironment:
    """A new jinja2 environment for the skeletons, with the trusted bytecode cache."""
    return SkeletonEnvironment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined, autoescape=False,
        bytecode_cache=TrustedBytecodeCache())


def _environment() -> SkeletonEnvironment:
    global _ENV
    if _ENV is None:
        _ENV = make_environment()
    return _ENV


def render(template: str, **context) -> str:
    """Renders `template` (a file name in codegen/templates/) with `context`."""
    return _environment().skeleton(template).render(**context)


def _jinja2_release() -> str:
    """jinja2's major.minor version: its generated code calls jinja2.runtime, whose
    names and behaviour stay within a minor release."""
    return ".".join(jinja2.__version__.split(".")[:2])


def template_digest(name: str) -> str:
    """The SHA-256 of the template file `name`, as the shipped code records it."""
    return sha256((TEMPLATES / name).read_bytes()).hexdigest()


def shipped_module_name(name: str) -> str:
    """The module holding template `name`'s compiled code ("cuda.j2" -> "cuda_j2")."""
    return name.replace(".", "_")


def shipped_template(env: jinja2.Environment, name: str) -> jinja2.Template | None:
    """Template `name` made from its shipped compiled code, or None when there is none
    or it was compiled from another version of the template or another jinja2 release."""
    # The module's code, run like a compiled template's (jinja2's Template.from_code):
    # in a namespace of its own, since its functions read `environment` from it.
    module = f"{__package__}.{SHIPPED_PACKAGE}.{shipped_module_name(name)}"
    try:
        spec = importlib.util.find_spec(module)
        code = spec.loader.get_code(module) if spec is not None else None
        if code is None:
            return None
        template = env.template_class.from_code(env, code, env.make_globals(None))
        namespace = template.root_render_func.__globals__
        if namespace["TEMPLATE_SHA256"] == template_digest(name) \
                and namespace["JINJA2_RELEASE"] == _jinja2_release():
            template.filename = str(TEMPLATES / name)  # (tracebacks name the template)
            return template
    except (ImportError, OSError, KeyError, AttributeError):
        pass
    return None


def shipped_code(env: jinja2.Environment, name: str) -> str:
    """The text of template `name`'s shipped module (written by write_shipped)."""
    source, filename, _ = env.loader.get_source(env, name)
    code = env.compile(source, name, filename, raw=True, defer_init=True)
    return (f"# Template {name} compiled by jinja2 {jinja2.__version__}: written by "
            f"`python -m cubepy.codegen.skeleton`, do not edit.\n"
            f"# (cubepy/codegen/skeleton.py uses it while the template's SHA-256 and "
            f"jinja2's major.minor match.)\n"
            f"# flake8: noqa\n"
            f"TEMPLATE_SHA256 = {template_digest(name)!r}\n"
            f"JINJA2_RELEASE = {_jinja2_release()!r}\n"
            f"{code}\n")


def write_shipped() -> list[Path]:
    """Rewrites codegen/skeletons/ from the templates; returns the files written."""
    env = make_environment()
    folder = Path(__file__).parent / SHIPPED_PACKAGE
    written = []
    for template in sorted(p.name for p in TEMPLATES.glob("*.j2")):
        path = folder / f"{shipped_module_name(template)}.py"
        path.write_text(shipped_code(env, template))
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_shipped():
        print(f"wrote {written_path}")
