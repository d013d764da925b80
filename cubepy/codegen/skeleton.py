"""Renders the kernel skeletons: the jinja2 templates in codegen/templates/, one per
target, around the body the emitters generate.

A process's first compile should not wait for jinja2: importing it (with the hashlib,
OpenSSL and tempfile it pulls in) is a large share of a cold compile. So cubepy ships
each template translated into plain Python: `codegen/skeletons/<stem>_j2.py` defines
`render(context) -> str`, written by `python -m cubepy.codegen.skeleton` from jinja2's own
parse of the template (codegen/skeleton_translate.py), and gives the text jinja2 gives
(tests/test_skeleton_shipped.py renders both, over the test corpus and variations of it).
It is used while it records the template's current SHA-256 and the translator's version
(`TRANSLATION`); otherwise jinja2 renders the template (codegen/skeleton_jinja.py: its
compiled bytecode kept in the trusted disk cache), so an edited template renders as
written before the translation is rewritten (tests/test_skeleton_shipped.py fails until
then).
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

from ..cache import sha256

TEMPLATES = Path(__file__).parent / "templates"
SHIPPED_PACKAGE = "skeletons"  # codegen/skeletons/: the templates, translated
TRANSLATION = 1  # the translator's version: raise it when what it writes changes

_ENV = None  # the jinja2 environment, made on first need
_SHIPPED: dict[str, Callable[[dict], str] | None] = {}  # template -> render (None: stale)


def render(template: str, **context: Any) -> str:
    """Renders `template` (a file name in codegen/templates/) with `context`."""
    if template not in _SHIPPED:
        _SHIPPED[template] = shipped_renderer(template)
    shipped = _SHIPPED[template]
    if shipped is not None:
        return shipped(context)
    return _environment().get_template(template).render(**context)


def _environment():
    global _ENV
    if _ENV is None:
        _ENV = make_environment()
    return _ENV


def make_environment():
    """A new jinja2 environment for the skeletons (codegen/skeleton_jinja.py)."""
    from .skeleton_jinja import make_environment as make
    return make()


def template_digest(name: str) -> str:
    """The SHA-256 of the template file `name`, as the shipped translation records it."""
    return sha256((TEMPLATES / name).read_bytes()).hexdigest()


def shipped_module_name(name: str) -> str:
    """The module holding template `name`'s translation ("cuda.j2" -> "cuda_j2")."""
    return name.replace(".", "_")


def shipped_renderer(name: str) -> Callable[[dict], str] | None:
    """The `render` of template `name`'s shipped translation, or None when there is none
    or it was made from another version of the template or of the translator."""
    module_name = f"{__package__}.{SHIPPED_PACKAGE}.{shipped_module_name(name)}"
    try:
        module = importlib.import_module(module_name)
        if module.TEMPLATE_SHA256 == template_digest(name) \
                and module.TRANSLATION == TRANSLATION:
            return module.render
    except (ImportError, OSError, AttributeError):
        pass
    return None


# -- what the translations call: jinja2's lookups -------------------------------------------

def attr(obj: Any, name: str) -> Any:
    """`obj.name` in a template: the attribute, else the item (jinja2's getattr)."""
    try:
        return getattr(obj, name)
    except AttributeError:
        pass
    try:
        return obj[name]
    except (TypeError, LookupError):
        raise AttributeError(f"{type(obj).__name__} has no attribute or item {name!r} "
                             f"(a skeleton's context is missing it)") from None


def item(obj: Any, key: Any) -> Any:
    """`obj[key]` in a template: the item, else for a string key the attribute (jinja2's
    getitem)."""
    try:
        return obj[key]
    except (AttributeError, TypeError, LookupError):
        if isinstance(key, str):
            try:
                return getattr(obj, key)
            except AttributeError:
                pass
        raise LookupError(f"{type(obj).__name__} has no item {key!r} "
                          f"(a skeleton's context is missing it)") from None


def join(values: Any, separator: Any = "") -> str:
    """The `join` filter, as jinja2 applies it with autoescape off."""
    return str(separator).join(map(str, values))


def write_shipped() -> list[Path]:
    """Rewrites codegen/skeletons/ from the templates; returns the files written."""
    from .skeleton_translate import translate
    env = make_environment()
    folder = Path(__file__).parent / SHIPPED_PACKAGE
    written = []
    for template in sorted(p.name for p in TEMPLATES.glob("*.j2")):
        path = folder / f"{shipped_module_name(template)}.py"
        path.write_text(translate(env, template))
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_shipped():
        print(f"wrote {written_path}")
