"""The kernel skeletons ship translated into plain Python (cubepy/codegen/skeletons/):
used while they match the templates, giving the text jinja2 gives, with no jinja2
import on a process's first compile."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
from types import SimpleNamespace

import jinja2
import pytest

from cubepy.codegen import skeleton
from cubepy.codegen.skeleton_translate import NotTranslatable, translate

TEMPLATE_NAMES = sorted(p.name for p in skeleton.TEMPLATES.glob("*.j2"))
SKELETON_OPTIONS = dict(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                        undefined=jinja2.StrictUndefined, autoescape=False)


def _module(text: str) -> SimpleNamespace:
    """Runs a translation's text as a module of the skeletons package."""
    namespace = {"__name__": f"cubepy.codegen.{skeleton.SHIPPED_PACKAGE}.under_test",
                 "__package__": f"cubepy.codegen.{skeleton.SHIPPED_PACKAGE}"}
    exec(compile(text, "<translation>", "exec"), namespace)
    return SimpleNamespace(**namespace)


def _both(templates: dict[str, str], name: str, context: dict) -> tuple[str, str]:
    """(jinja2's rendering, the translation's) of `name` among `templates`."""
    env = jinja2.Environment(loader=jinja2.DictLoader(templates), **SKELETON_OPTIONS)
    return (env.get_template(name).render(**context),
            _module(translate(env, name)).render(context))


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_shipped_translation_records_the_current_template(name):
    """Fails after a template's edit until `python -m cubepy.codegen.skeleton` runs."""
    text = (skeleton.TEMPLATES.parent / skeleton.SHIPPED_PACKAGE
            / f"{skeleton.shipped_module_name(name)}.py").read_text()
    assert f"TEMPLATE_SHA256 = {skeleton.template_digest(name)!r}" in text
    assert f"TEMPLATE = {name!r}" in text
    assert text == translate(skeleton.make_environment(), name)  # and is what it writes


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_shipped_translation_is_what_renders(name):
    renderer = skeleton.shipped_renderer(name)
    assert renderer is not None and renderer.__module__.endswith(
        skeleton.shipped_module_name(name))


def _corpus_contexts(monkeypatch) -> list[tuple[str, dict]]:
    """(template, context) of every skeleton rendered for the corpus's source cases and
    some benchmark kernels, checked and unchecked, on each of their targets."""
    import corpus
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")
    seen: list[tuple[str, dict]] = []
    real = skeleton.render
    monkeypatch.setattr(skeleton, "render",
                        lambda template, **ctx: seen.append((template, ctx))
                        or real(template, **ctx))
    for module in ("cuda", "metal", "wgsl"):  # (the emitters import `render` by name)
        monkeypatch.setattr(f"cubepy.codegen.{module}.render", skeleton.render)
    for _, kernel, cube_dim, values, targets in corpus.SOURCE_CASES + _benchmark_cases():
        for target in targets:
            for checked in (True, False):
                monkeypatch.setattr(kernel, "_compiled", type(kernel._compiled)(
                    kernel._compiled.maxsize))
                kernel.source(target, cube_dim=cube_dim, checked=checked, **values)
    return seen


def _benchmark_cases() -> list[tuple]:
    """Benchmark kernels whose skeletons carry what the corpus's lack: f16, lines,
    plane operations and atomics, tensor-core fragments (same layout as SOURCE_CASES)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    from benchmarks.kernels import elementwise, layernorm, matmul_tc, reduce_sum, softmax
    from cubepy import f16
    tc = dict(matmul_tc.CONFIGS[0])
    tc_dim = tc.pop("cube_dim")
    every = ("cuda", "wgsl", "metal")
    return [
        ("softmax", softmax.softmax_in_registers, (64, 1, 1),
         {"line_sizes": {"x": 4, "out": 4}, "per_unit": 4}, every),
        ("layernorm_f16", layernorm.layernorm_in_registers, (64, 1, 1),
         {"line_sizes": {"x": 8, "weight": 8, "bias": 8, "y": 8}, "per_unit": 2,
          "Float": f16}, every),
        ("reduce_sum", reduce_sum.reduce_sum, (256, 1, 1), {"line_sizes": {"x": 4}}, every),
        ("add_relu_f16", elementwise.add_relu, (256, 1, 1), {"Float": f16}, every),
        ("matmul_tc", matmul_tc.matmul_tc.kernel, tc_dim,
         {"line_sizes": {"a": 8, "b": 8, "c": 8}, "Float": f16, **tc}, ("cuda",)),
    ]


def _variations(context: dict) -> list[dict]:
    """The context, then with each true value false and each list emptied in turn."""
    out = [context]
    for key, value in context.items():
        if isinstance(value, bool):
            out.append({**context, key: not value})
        elif isinstance(value, (list, tuple)) and value and key != "cube_dim":
            out.append({**context, key: type(value)()})
    return out


def test_translations_give_jinja2s_text_over_the_corpus(monkeypatch):
    contexts = _corpus_contexts(monkeypatch)
    assert {t for t, _ in contexts} == set(TEMPLATE_NAMES)
    assert len(contexts) > 100
    env = skeleton.make_environment()
    for template, context in contexts:
        shipped = skeleton.shipped_renderer(template)
        for variation in _variations(context):
            assert shipped(variation) == env.get_template(template).render(**variation), \
                template


def test_a_cold_process_renders_without_importing_jinja2(tmp_path):
    code = ("import sys; sys.path.insert(0, 'tests')\n"
            "from corpus import axpy\n"
            "for target in ('cuda', 'wgsl', 'metal'):\n"
            "    assert axpy.source(target, cube_dim=(64, 1, 1), Float='f32')\n"
            "print(sorted(m for m in sys.modules if m.startswith('jinja2')))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "CUBEPY_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert not (tmp_path / "cache" / "jinja2").exists()


@pytest.mark.parametrize("stale", ["template", "translator"])
def test_a_stale_translation_is_not_used_and_jinja2_renders(monkeypatch, stale):
    name = "cuda.j2"
    context = {"name": "kernel_x", "cube_dim": (64, 2, 1), "checked": True, "units": 128,
               "includes": ["cuda_fp16.h"], "fields": ["int n"], "helpers": ["// helper"],
               "params": ["float* x", "int n"], "entry": ["int i = 0;"],
               "body": ["x[i] = 1.0f;"]}
    current = skeleton.render(name, **context)
    if stale == "template":
        monkeypatch.setattr(skeleton, "template_digest", lambda n: "0" * 64)
    else:
        monkeypatch.setattr(skeleton, "TRANSLATION", skeleton.TRANSLATION + 1)
    monkeypatch.setattr(skeleton, "_SHIPPED", {})
    assert skeleton.shipped_renderer(name) is None
    assert skeleton.render(name, **context) == current  # by jinja2 this time
    assert skeleton._SHIPPED == {name: None}


def test_every_construct_translated_gives_jinja2s_text():
    template = (
        "{% if a and not b %}A{% elif b or c %}B{% else %}C{% endif %}\n"
        "{% for x in xs %}{{ loop.index }}/{{ loop.length }}:{{ x.v }}{{ x['w'] }}"
        "{{ ';' if not loop.last }}{% if loop.first %}^{% endif %}"
        "{% for y in x.ys %}({{ loop.index0 }}{{ y }}){% endfor %}{% else %}none"
        "{% endfor %}\n"
        "{{ xs | length }} {{ names | join }} {{ names | join(', ') }} {{ n if 0 }}"
        "{{ 'big' if n > 2 else 'small' }}{{ n == 3 }}{{ 'p' in names }}{{ 7 }}\n"
        "{%- for n in names %} {{ n }}{% endfor %}\n"
        "  {% if a %}\n    indented {{ a }}\n  {% endif %}\n")
    xs = [{"v": 1, "w": 2, "ys": [5, 6]}, SimpleNamespace(v=3, w=4, ys=[])]
    # (x['w'] on the namespace falls back to the attribute, x.v on the dict to the item)
    for a, b, c, xs_, names, n in itertools.product(
            (True, False), (True, False), (1, 0), (xs, []), (["p", "q"], []), (1, 3)):
        context = dict(a=a, b=b, c=c, xs=xs_, names=names, n=n)
        expected, got = _both({"t.j2": template}, "t.j2", context)
        assert got == expected, context


@pytest.mark.parametrize("text, what", [
    ("{% set x = 1 %}", "the statement Assign"),
    ("{{ x | upper }}", "the upper filter"),
    ("{{ range(3) }}", "the expression Call"),
    ("{{ cycler }}", "jinja2's global `cycler`"),
    ("{% for x in xs %}{{ loop.cycle(1, 2) }}{% endfor %}", "the expression Call"),
    ("{% for x in xs %}{{ loop.revindex }}{% endfor %}", "loop.revindex"),
    ("{% for a, b in xs %}{% endfor %}", "a for loop over several names"),
    ("{{ (x if y) | join }}", "an inline if without else outside"),
    ("{{ x[1:2] }}", "a slice"),
    ("{% macro m() %}{% endmacro %}", "the statement Macro"),
])
def test_what_is_not_translated_is_an_error_at_the_templates_line(text, what):
    env = jinja2.Environment(loader=jinja2.DictLoader({"t.j2": "line one\n" + text}),
                             **SKELETON_OPTIONS)
    with pytest.raises(NotTranslatable, match=r"^t\.j2:2: ") as err:
        translate(env, "t.j2")
    assert what in str(err.value)


def test_a_missing_value_is_an_error_naming_it():
    with pytest.raises(KeyError, match="name"):
        skeleton.render("cuda.j2")
    with pytest.raises(AttributeError, match="'binding'"):
        skeleton.attr(SimpleNamespace(), "binding")
    with pytest.raises(LookupError, match="has no item 3"):
        skeleton.item([1, 2], 3)


def test_a_jinja2_render_error_names_the_template_file():
    import traceback
    template = skeleton.make_environment().get_template("cuda.j2")
    with pytest.raises(jinja2.UndefinedError) as err:
        template.render()  # (StrictUndefined: `name` is missing)
    last = traceback.extract_tb(err.value.__traceback__)[-1]
    assert last.filename == str(skeleton.TEMPLATES / "cuda.j2") and last.lineno == 1
