"""Kernels type-check: the static view of cubepy (cubepy/__init__.pyi, cubepy/math.pyi)
lets mypy and pyright check the examples, the benchmark kernels and README's kernels
with no error, still reports a user's obvious mistakes, and covers every public name.

How cubepy itself is checked: mypy runs from the repository root with
`--follow-imports=silent` on the listed files. mypy then analyses cubepy (through its
stubs) to type the user's code but reports errors only in the listed files, which is how
mypy treats an installed package with py.typed (errors inside site-packages are never
shown to its users). This tests the checkout's own package, without installing it or
copying it, and the stubs themselves are listed too, so an error in the static view is
reported. pyright, when it runs here (it needs node), checks the same files.
"""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import cubepy
from cubepy.math import PUBLIC_MATH
from test_readme_snippets import python_scripts, read_blocks

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = Path(__file__).resolve().parent / "typing_samples"
STUBS = [ROOT / "cubepy" / "__init__.pyi", ROOT / "cubepy" / "math.pyi"]
KERNEL_FILES = [*sorted((ROOT / "examples").glob("*.py")),
                *sorted((ROOT / "benchmarks" / "kernels").glob("*.py")),
                SAMPLES / "static_view.py", SAMPLES / "planes_view.py"]
USER_ERRORS = SAMPLES / "user_errors.py"
_MYPY_LINE = re.compile(r"^(?P<path>[^:\n]+\.pyi?):(?P<line>\d+): error: (?P<msg>.*)$")
_PYRIGHT_LINE = re.compile(r"^\s*(?P<path>/[^:\n]+\.pyi?):(?P<line>\d+):\d+ - error: (?P<msg>.*)$")


@pytest.fixture(scope="module")
def readme_kernels(tmp_path_factory) -> Path:
    """README's python blocks as the one script they form (`continues` chains them)."""
    scripts = python_scripts(read_blocks((ROOT / "README.md").read_text()))
    assert scripts, "README.md has no python blocks"
    path = tmp_path_factory.mktemp("readme") / "readme_kernels.py"
    path.write_text("\n\n".join(script.source() for script in scripts))
    return path


def _errors_by_file(output: str, pattern: re.Pattern) -> dict[Path, list[str]]:
    found: dict[Path, list[str]] = {}
    for line in output.splitlines():
        match = pattern.match(line.strip() if pattern is _MYPY_LINE else line)
        if match:
            path = (ROOT / match["path"]).resolve()
            found.setdefault(path, []).append(f"{match['line']}: {match['msg']}")
    return found


@pytest.fixture(scope="module")
def mypy_errors(readme_kernels, tmp_path_factory) -> dict[Path, list[str]]:
    """One mypy run over every checked file: errors per file (resolved path)."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    files = [*STUBS, *KERNEL_FILES, readme_kernels, USER_ERRORS]
    cache = tmp_path_factory.mktemp("mypy_cache")
    # --allow-redefinition: README's blocks form one script, which rebinds `x` from a
    # cubepy tensor to a torch tensor in its PyTorch section.
    cmd = [sys.executable, "-m", "mypy", "--follow-imports=silent", "--allow-redefinition",
           "--ignore-missing-imports", "--no-error-summary", "--show-absolute-path",
           "--cache-dir", str(cache), *map(str, files)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    found = _errors_by_file(done.stdout, _MYPY_LINE)
    unexpected = set(found) - {p.resolve() for p in files}
    assert not unexpected, f"errors outside the listed files: {done.stdout}"
    return found


@pytest.mark.parametrize("path", [*STUBS, *KERNEL_FILES],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_file_type_checks_clean_under_mypy(path, mypy_errors):
    assert mypy_errors.get(path.resolve(), []) == []


def test_readme_kernels_type_check_clean_under_mypy(readme_kernels, mypy_errors):
    assert mypy_errors.get(readme_kernels.resolve(), []) == []


def _marked_error_lines(path: Path) -> set[int]:
    lines = path.read_text().splitlines()
    return {n for n, line in enumerate(lines, 1) if re.search(r"#\s*error:", line)}


def test_mypy_reports_each_user_mistake_and_nothing_else(mypy_errors):
    errors = mypy_errors.get(USER_ERRORS.resolve(), [])
    reported = {int(e.split(":")[0]) for e in errors}
    assert reported == _marked_error_lines(USER_ERRORS), errors
    assert any("Tensor[f32]" in e and '"str"' in e for e in errors), errors


def _pyright() -> str:
    exe = shutil.which("pyright")
    if exe is None:
        pytest.skip("pyright is not installed")
    try:
        probe = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("pyright could not start (it fetches node packages on first use)")
    if probe.returncode != 0:
        pytest.skip(f"pyright cannot run here: {probe.stderr.strip()[:200]}")
    return exe


def test_pyright_finds_no_error_in_kernels_and_reports_user_mistakes(readme_kernels):
    exe = _pyright()
    files = [*KERNEL_FILES, readme_kernels, USER_ERRORS]
    done = subprocess.run([exe, *map(str, files)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    found = _errors_by_file(done.stdout, _PYRIGHT_LINE)
    clean = {p: e for p, e in found.items() if p != USER_ERRORS.resolve()}
    assert clean == {}, done.stdout
    reported = {int(e.split(":")[0]) for e in found.get(USER_ERRORS.resolve(), [])}
    assert reported == _marked_error_lines(USER_ERRORS), done.stdout


# ----------------------------------------------------------------------------- coverage

def _runtime_public_names() -> set[str]:
    """The public names cubepy/__init__.py binds (imports, assignments, defs) plus the
    runtime names it loads on first use."""
    tree = ast.parse((ROOT / "cubepy" / "__init__.py").read_text())
    names: set[str] = set(cubepy._LAZY_RUNTIME)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def _stub_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            # in a stub only `import x as x` re-exports (PEP 484)
            names.update(a.asname for a in node.names if a.asname == a.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def test_stub_declares_every_public_name_of_the_package():
    runtime = _runtime_public_names()
    assert {"Tensor", "f32", "ABSOLUTE_POS", "cube", "client"} <= runtime  # the parse works
    missing = runtime - _stub_names(STUBS[0])
    assert not missing, f"add these to cubepy/__init__.pyi: {sorted(missing)}"


def test_stub_declares_nothing_the_package_lacks():
    public = {n for n in _stub_names(STUBS[0]) if not n.startswith("_") or n == "__version__"}
    extra = {n for n in public if not hasattr(cubepy, n)}
    assert not extra, f"cubepy/__init__.pyi declares names cubepy lacks: {sorted(extra)}"


def test_math_stub_declares_every_math_intrinsic_with_its_arity():
    declared = {node.name: len(node.args.posonlyargs) + len(node.args.args)
                for node in ast.parse(STUBS[1].read_text()).body
                if isinstance(node, ast.FunctionDef)}
    assert declared == {**PUBLIC_MATH, "gamma": 1}


def test_stubs_are_shipped_in_the_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["cubepy"]
    for stub in STUBS:
        assert any(Path(stub.name).match(p) for p in patterns), (stub.name, patterns)
    assert "py.typed" in patterns
