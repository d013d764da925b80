"""The documentation site (mkdocs.yml over docs/): every page in the navigation, the API
reference covering every public name, the gallery and charts the build generates, the
name table naming only real cubepy names, the packaging metadata, and (where MkDocs is
installed) a strict build. Code blocks run in tests/test_readme_snippets.py."""
from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import cubepy

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS_YML = (ROOT / "mkdocs.yml").read_text()


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nav_pages() -> list[str]:
    return re.findall(r"^\s*- (?:[^:\n]+: )?(\S+\.md)\s*$", MKDOCS_YML, re.M)


def test_every_page_is_in_the_navigation_and_every_nav_entry_exists():
    nav = _nav_pages()
    generated = ["gallery/index.md"] + [f"gallery/{k}.md" for k in _load("gen_gallery").KERNELS]
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")) + generated
    assert sorted(nav) == sorted(pages)
    assert len(nav) == len(set(nav))


def test_the_pages_the_code_and_tests_cite_stay_where_they_are():
    for page in ("LANGUAGE.md", "ARCHITECTURE.md", "RUNTIMES.md", "CACHE.md", "ERRORS.md",
                 "EXPLORE.md", "CPU_RUNTIME.md"):
        assert page in _nav_pages()


def test_api_reference_covers_every_public_name():
    hooks = _load("hooks")
    api = (DOCS / "API.md").read_text()
    kinds = re.findall(r"<!-- cubepy-names: (\w+) -->", api)
    tabled = {n for kind in kinds for n in hooks.names_of_kind(kind)}
    documented = set(re.findall(r"^::: cubepy\.(\w+)\s*$", api, re.M))
    public = {n for n, o in vars(cubepy).items()
              if not n.startswith("_") and not inspect.ismodule(o)}
    assert public - tabled - documented == set()
    assert "`cubepy.math`" in api  # the one public submodule a kernel uses


def test_names_tables_come_from_docstrings_and_reject_unknown_kinds():
    hooks = _load("hooks")
    table = hooks.names_table("intrinsics")
    assert f"| `cubepy.plane_shuffle_xor` | {cubepy.plane_shuffle_xor.__doc__} |" in table
    page = hooks.on_page_markdown("a\n<!-- cubepy-names: dtypes -->\nb")
    assert "| `cubepy.bf16` | 16-bit floating point |" in page and "cubepy-names" not in page
    with pytest.raises(ValueError, match="unknown cubepy-names kind"):
        hooks.names_of_kind("widgets")


@pytest.fixture(scope="module")
def gallery() -> dict[str, str]:
    """The gallery pages the site build adds: file name -> text."""
    return {path.name: text for path, text in _load("gen_gallery").pages().items()}


def test_gallery_has_a_page_per_example_with_its_output_source_and_code(gallery):
    examples = {p.stem for p in (ROOT / "examples").glob("*.py")}
    assert set(gallery) == {f"{name}.md" for name in examples} | {"index.md"}
    for name in examples:
        page = gallery[f"{name}.md"]
        assert f"$ python examples/{name}.py --runtime cpu\nruntime: cpu" in page
        assert "OK" in page.split("## Source")[0]  # the example checked itself
        assert f'<!-- snippet: skip -->\n```python\n--8<-- "examples/{name}.py"' in page
        for tab in ('=== "CUDA"', '=== "WGSL"', '=== "Metal"', '=== "IR"'):
            assert tab in page, (name, tab)
        assert f"]({name}.md)" in gallery["index.md"]


def test_gallery_shows_the_code_the_kernel_generates_now(gallery):
    row_stats = _load("gen_gallery")._load("plane_row_stats").row_stats
    cuda = row_stats.source("cuda", cube_dim=(256, 1, 1))
    indented = "\n".join(("    " + line).rstrip() for line in cuda.rstrip().splitlines())
    assert indented in gallery["plane_row_stats.md"]


def test_gallery_pages_do_not_depend_on_where_the_repository_is(gallery):
    for name, text in gallery.items():
        assert str(ROOT) not in text, name


def test_gallery_refuses_an_example_without_an_entry(monkeypatch):
    module = _load("gen_gallery")
    monkeypatch.delitem(module.KERNELS, "plane_row_stats")
    with pytest.raises(SystemExit, match="plane_row_stats"):
        module.pages()


def test_benchmark_charts_show_the_recorded_results():
    charts = _load("gen_charts")
    page = (DOCS / "BENCHMARKS.md").read_text()
    for chart in charts.CHARTS:
        assert f"(images/{chart})" in page
    # the bars carry the recorded numbers: cubepy's checked CUDA launch, 5.49 us
    assert ">5.49 us<" in charts.svg("bench_cuda_launch.svg")
    assert charts.svg("bench_cuda_launch.svg").startswith("<svg ")


def test_name_table_names_only_real_cubepy_names():
    table = (DOCS / "NAMES.md").read_text().split("## Differences")[0]
    rows = [line.split("|")[-2] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| concept")]
    assert len(rows) >= 25
    receivers = {"f": cubepy.CubeFunction, "cubepy": cubepy}
    # code shapes and Python types, not cubepy names
    plain_words = {"a", "for", "return", "t", "client", "x", "bool", "float", "str", "int"}
    for cell in rows:
        for chunk in re.findall(r"`([^`]+)`", cell):
            name = re.match(r"@?(\w+)", chunk).group(1)
            attr = re.match(r"@?\w+\.(\w+)", chunk)
            if name in receivers:  # `f.launch(...)`, `cubepy.math.exp(x)`, `cubepy emit`
                assert attr is None or hasattr(receivers[name], attr.group(1)), chunk
            elif name not in plain_words and not name[0].isdigit():
                assert hasattr(cubepy, name), f"NAMES.md names {chunk!r}, not in cubepy"


def test_pyproject_has_classifiers_urls_and_a_docs_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    classifiers = project["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert any(c.startswith("Operating System :: MacOS") for c in classifiers)
    assert any(c.startswith("License :: OSI Approved :: MIT") for c in classifiers)
    trove = importlib.util.find_spec("trove_classifiers")
    if trove is not None:
        from trove_classifiers import classifiers as known
        assert set(classifiers) <= known, set(classifiers) - known
    urls = project["urls"]
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls)
    repo_url = re.search(r"^repo_url: (\S+)$", MKDOCS_YML, re.M).group(1)
    assert urls["Repository"] == repo_url
    extra = " ".join(project["optional-dependencies"]["docs"])
    assert "mkdocs-material" in extra and "mkdocstrings[python]" in extra


def _mkdocs_installed() -> bool:
    return all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings"))


@pytest.mark.skipif(not _mkdocs_installed(), reason='needs pip install -e ".[docs]"')
def test_site_builds_strictly_with_the_api_reference_and_gallery(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    api = (tmp_path / "site" / "API" / "index.html").read_text()
    assert "Compiles a Python function for the GPU" in api  # cube's docstring
    assert "cubepy.plane_sum" in api and "cubepy.ABSOLUTE_POS_X" in api
    assert (tmp_path / "site" / "images" / "bench_cuda_launch.svg").read_text().startswith("<svg")
    gallery = (tmp_path / "site" / "gallery" / "plane_row_stats" / "index.html").read_text()
    assert "exit_on_error" in gallery  # the example's source, included from examples/
    assert "cube_info_t" in gallery  # its generated code
