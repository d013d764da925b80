"""The source explorer: one self-contained HTML page linking each Python line of a kernel
to the IR, CUDA, WGSL and Metal lines it produced."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("pygments")

import cubepy  # noqa: E402
from cubepy.cli import main  # noqa: E402
from cubepy.explore import map_lines  # noqa: E402
from examples_loader import load_example, seed_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("ir", "cuda", "wgsl", "metal")


class Elements(HTMLParser):
    """Every element with an id or data-py: id -> attributes; and the script text."""

    def __init__(self):
        super().__init__()
        self.by_id: dict[str, dict[str, str]] = {}
        self.hrefs: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if "id" in a:
            assert a["id"] not in self.by_id, f"duplicate id {a['id']}"
            self.by_id[a["id"]] = a
        if tag == "a":
            self.hrefs.append(a.get("href", ""))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def _parse(page: str) -> Elements:
    p = Elements()
    p.feed(page)
    return p


@pytest.fixture(scope="module")
def seed_page():
    ex = seed_kernel().explore(cube_dim=cubepy.CubeDim(16, 16, 1), Float=cubepy.f32)
    return ex, ex.html()


def test_each_python_line_links_to_what_it_produced_in_every_target(seed_page):
    ex, page = seed_page
    elements = _parse(page)
    uid = re.search(r'id="(cubepy-explore-\d+)"', page).group(1)
    kernel = seed_kernel()
    for target in ("cuda", "wgsl", "metal"):
        source = kernel.source(target, cube_dim=(16, 16, 1), Float=cubepy.f32)
        cited = {int(n) for n in re.findall(r"^\s*// (\d+): ", source, re.M)}
        linked = {int(a["data-py"]) for i, a in elements.by_id.items()
                  if i.startswith(f"{uid}-{target}-L") and "data-py" in a}
        assert cited and linked == cited, target
    body = range(28, 48)  # the seed kernel's statements (examples/fused_matmul_add_relu.py)
    for n in body:
        py = elements.by_id[f"{uid}-py-L{n}"]
        targets = {re.match(rf"{uid}-(\w+)-L\d+", i).group(1)
                   for i in py["data-links"].split()}
        assert targets == set(TARGETS), (n, targets)
        for target_id in py["data-links"].split():
            assert elements.by_id[target_id]["data-py"] == str(n)   # and back
        assert f"#{uid}-cuda-L" in page


def test_generated_lines_link_back_to_their_python_line(seed_page):
    _, page = seed_page
    elements = _parse(page)
    backs = [h for h in elements.hrefs if "-py-L" in h]
    assert backs and all(h[1:] in elements.by_id for h in backs)
    jumps = [h for h in elements.hrefs if re.search(r"-(ir|cuda|wgsl|metal)-L\d+$", h)]
    assert jumps and all(h[1:] in elements.by_id for h in jumps)


def test_the_statement_under_a_python_if_maps_to_its_own_line():
    cuda = textwrap.dedent("""\
        __global__ void k() {
            unsigned int x = 0;
            // 4: i = ABSOLUTE_POS
            unsigned int i = pos;
            // 5: if i < len(x):
            if (i < n) {
                // 6: x[i] = x[i] * a
                x[i] = x[i] * a;

            }
        }
    """)
    assert map_lines(cuda, "cuda") == [None, None, 4, 4, 5, 5, 6, 6, None, 5, None]
    ir = "kernel k() {  # line 3 \"k.py\"\n  if c {  # line 5\n    x = 1  # line 6\n  }\n}\n"
    assert map_lines(ir, "ir") == [3, 5, 6, 5, 3]


def test_page_is_self_contained_and_shows_specialisation_and_abi(seed_page):
    ex, page = seed_page
    elements = _parse(page)
    assert not re.search(r'(src|href)="(https?:)?//', page)   # nothing fetched
    assert "<style>" in page and elements.scripts and "addEventListener" in elements.scripts[0]
    assert "Float=f32 cube_dim=16x16x1" in page
    assert "Launch ABI" in page and "<td>lhs</td>" in page and "<td>output</td>" in page
    assert "WGSL info struct" in page and "cube_count" in page   # WGSL carries the count
    assert 'class="kn"' in page or 'class="k"' in page          # pygments highlighted


def test_repr_html_is_a_fragment_with_its_own_ids():
    kernel = seed_kernel()
    a = kernel.explore(Float=cubepy.f32)._repr_html_()
    b = kernel.explore(Float=cubepy.f32)._repr_html_()
    assert not a.lstrip().startswith("<!DOCTYPE") and a.startswith('<div class="cubepy-explore"')
    ids_a = set(re.findall(r' id="([^"]+)"', a))
    ids_b = set(re.findall(r' id="([^"]+)"', b))
    assert ids_a and not ids_a & ids_b   # two explorations share a notebook safely


def test_inlined_device_functions_are_shown_and_linked(tmp_path):
    src = tmp_path / "dev.py"
    src.write_text(textwrap.dedent("""\
        from cubepy import cube, Array, Float, ABSOLUTE_POS

        @cube
        def twice(v: Float) -> Float:
            return v + v

        @cube(launch=True)
        def k(x: Array[Float]):
            i = ABSOLUTE_POS
            x[i] = twice(x[i])
    """))
    import importlib.util
    spec = importlib.util.spec_from_file_location("dev_mod", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ex = module.k.explore(Float=cubepy.f32)
    assert [s[0] for s in ex.sections] == ["device function twice (inlined)", "kernel k"]
    links = ex.links()
    assert set(links[5]) >= {"cuda", "wgsl", "metal"}   # `return v + v` produced code
    assert set(links[10]) == set(TARGETS)


def test_cli_explore_writes_the_page(tmp_path, capsys):
    out = tmp_path / "seed.html"
    spec = str(ROOT / "examples" / "fused_matmul_add_relu.py") + \
        ":fused_matmul_add_relu_kernel"
    assert main(["explore", spec, "-D", "Float=f16", "--cube-dim", "8,8", "-o",
                 str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Float=f16 cube_dim=8x8x1" in page
    assert main(["explore", spec]) == 1   # Float unbound: the CLI's own phrasing
    assert "pass -D Float=f32" in capsys.readouterr().err


def test_explore_without_pygments_names_the_extra(tmp_path):
    code = textwrap.dedent("""
        import sys
        sys.modules["pygments"] = None
        sys.path.insert(0, %r)
        from examples_loader import seed_kernel
        import cubepy
        seed_kernel().explore(Float=cubepy.f32)
    """ % str(ROOT / "tests"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("CUBEPY_DEBUG", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert 'pip install "cubepy[explore]"' in run.stderr, run.stderr


def test_explore_checks_the_specialisation_like_source():
    with pytest.raises(cubepy.OptionError, match="no generic placeholder"):
        seed_kernel().explore(Double=cubepy.f32)
    plane = load_example("plane_row_stats").row_stats
    assert "plane" in plane.explore(cube_dim=(64, 1, 1)).html()
