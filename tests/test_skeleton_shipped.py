"""The kernel skeletons ship compiled (cubepy/codegen/skeletons/): used while they match
the templates, giving the same text as compiling the templates."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cubepy.codegen import skeleton

TEMPLATE_NAMES = sorted(p.name for p in skeleton.TEMPLATES.glob("*.j2"))


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_shipped_code_records_the_current_template(name):
    """Fails after a template's edit until `python -m cubepy.codegen.skeleton` runs."""
    text = (skeleton.TEMPLATES.parent / skeleton.SHIPPED_PACKAGE
            / f"{skeleton.shipped_module_name(name)}.py").read_text()
    assert f"TEMPLATE_SHA256 = {skeleton.template_digest(name)!r}" in text
    assert f"name = {name!r}" in text


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_shipped_template_is_used_once_per_environment(name):
    env = skeleton.make_environment()
    shipped = env.skeleton(name)
    assert shipped is env.skeleton(name)
    assert shipped.root_render_func.__globals__["TEMPLATE_SHA256"] \
        == skeleton.template_digest(name)


def test_a_render_error_names_the_template_file():
    import traceback
    import jinja2
    template = skeleton.make_environment().skeleton("cuda.j2")
    with pytest.raises(jinja2.UndefinedError) as err:
        template.render()  # (StrictUndefined: `name` is missing)
    last = traceback.extract_tb(err.value.__traceback__)[-1]
    assert last.filename == str(skeleton.TEMPLATES / "cuda.j2") and last.lineno == 1


@pytest.mark.parametrize("target", ["cuda", "wgsl", "metal"])
def test_shipped_skeletons_generate_the_same_source_as_compiled_ones(target, monkeypatch):
    from corpus import axpy, shared_reduce
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")
    sources = []
    for use_shipped in (True, False):
        if not use_shipped:
            monkeypatch.setattr(skeleton, "shipped_template", lambda env, name: None)
        monkeypatch.setattr(skeleton, "_ENV", None)
        for kernel in (axpy, shared_reduce):  # fresh specialisation caches
            monkeypatch.setattr(kernel, "_compiled",
                                type(kernel._compiled)(kernel._compiled.maxsize))
        sources.append([axpy.source(target, cube_dim=(64, 1, 1), Float="f32"),
                        shared_reduce.source(target, cube_dim=(64, 1, 1))])
        assert bool(skeleton._ENV.__dict__.get("shipped")) == use_shipped
    assert sources[0] == sources[1]


def _context(name: str) -> dict:
    """Values for the names the CUDA skeleton reads."""
    return {"name": "kernel_x", "cube_dim": (64, 2, 1), "checked": True, "units": 128,
            "includes": ["cuda_fp16.h"], "fields": ["int n"], "helpers": ["// helper"],
            "params": ["float* x"], "entry": ["int i = 0;"], "body": ["x[i] = 1.0f;"]}


def test_stale_shipped_code_is_not_used(monkeypatch):
    name = "cuda.j2"
    monkeypatch.setattr(skeleton, "template_digest", lambda n: "0" * 64)
    env = skeleton.make_environment()
    assert skeleton.shipped_template(env, name) is None
    template = env.skeleton(name)  # compiled from the template instead
    assert "TEMPLATE_SHA256" not in template.root_render_func.__globals__
    assert template.render(**_context(name)).strip()


def test_other_jinja2_release_does_not_use_shipped_code(monkeypatch):
    monkeypatch.setattr(skeleton, "_jinja2_release", lambda: "0.0")
    assert skeleton.shipped_template(skeleton.make_environment(), TEMPLATE_NAMES[0]) is None


def test_cold_source_compiles_no_template(tmp_path):
    """A first `source()` with an empty cache renders the shipped skeleton: jinja2
    compiles nothing, so its bytecode cache stays empty."""
    code = ("import sys; sys.path.insert(0, 'tests')\n"
            "from corpus import axpy\n"
            "import jinja2\n"
            "calls = []\n"
            "orig = jinja2.Environment.compile\n"
            "jinja2.Environment.compile = lambda *a, **k: calls.append(1) or orig(*a, **k)\n"
            "for target in ('cuda', 'wgsl', 'metal'):\n"
            "    assert axpy.source(target, cube_dim=(64, 1, 1), Float='f32')\n"
            "print(len(calls))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "CUBEPY_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"
    assert not list((tmp_path / "cache").glob("jinja2/*.j2c"))
