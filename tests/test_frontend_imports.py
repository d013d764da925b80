"""The frontend stands on its own: parsing and building a kernel needs no device layer.

The frontend recognises @cube device functions through a registration hook
(frontend/intrinsics.py) instead of importing kernel.py, and `cubepy` loads its runtime
layer only when `cubepy.client` or `cubepy.available_runtimes` is first read."""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

import cubepy

FRONTEND = pathlib.Path(cubepy.__file__).parent / "frontend"
FORBIDDEN = ("kernel", "runtime", "codegen")
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _imported_modules(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, absolute cubepy module) of every import in a frontend module, lazy ones
    inside functions included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                out.append((node.lineno, node.module or ""))
                continue
            base = ["cubepy", "frontend"][:3 - node.level]  # level 1: frontend, 2: cubepy
            mod = ".".join(base + ([node.module] if node.module else []))
            out.append((node.lineno, mod))
            if node.module is None:  # `from .. import runtime`
                out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _forbidden(module: str) -> bool:
    return any(module == f"cubepy.{f}" or module.startswith(f"cubepy.{f}.")
               for f in FORBIDDEN)


@pytest.mark.parametrize("path", sorted(FRONTEND.glob("*.py")), ids=lambda p: p.name)
def test_frontend_module_imports_no_kernel_runtime_or_codegen(path):
    bad = [f"{path.name}:{line} imports {mod}" for line, mod in _imported_modules(path)
           if _forbidden(mod)]
    assert bad == []


def test_the_scan_sees_relative_and_lazy_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from ..kernel import cube\n"
                     "def f():\n    from ..runtime.base import Client\n"
                     "from .. import codegen\nfrom .values import Py\n")
    found = [m for _, m in _imported_modules(probe)]
    assert sorted(m for m in found if _forbidden(m)) == [
        "cubepy.codegen", "cubepy.kernel", "cubepy.runtime.base"]
    assert "cubepy.frontend.values" in found


_BUILD_CORPUS = """
import sys
from tests.corpus import SOURCE_CASES
from cubepy.frontend import build_kernel
for case_id, kernel, cube_dim, spec, targets in SOURCE_CASES:
    build_kernel(kernel._parse(), kernel._specialization(cube_dim, dict(spec)))
    kernel.ir(cube_dim, **spec)  # the target-independent passes too
print(len(SOURCE_CASES))
print(sorted(m for m in sys.modules if m.startswith(("cubepy.runtime", "cubepy.codegen"))))
"""


def _run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_parsing_and_building_the_corpus_loads_no_runtime_or_codegen():
    count, loaded = _run(_BUILD_CORPUS)
    assert int(count) > 20
    assert loaded == "[]"


def test_runtime_loads_on_first_use_of_client():
    lines = _run("import sys, cubepy\n"
                 "print('cubepy.runtime' in sys.modules)\n"
                 "print(callable(cubepy.client), callable(cubepy.available_runtimes))\n"
                 "print('cubepy.runtime' in sys.modules)\n"
                 "from cubepy import available_runtimes\n"
                 "print(available_runtimes is cubepy.runtime.available_runtimes)\n")
    assert lines == ["False", "True True", "True", "True"]


def test_lazy_names_are_listed_and_unknown_names_still_fail():
    assert {"client", "available_runtimes", "client_for", "cube"} <= set(dir(cubepy))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        cubepy.no_such_name  # noqa: B018


def test_device_functions_are_recognised_through_the_hook():
    from cubepy.frontend.inlinable import is_cube_decorator, is_inlinable

    @cubepy.cube
    def twice(v: cubepy.f32) -> cubepy.f32:
        return v + v

    assert is_inlinable(twice) and not is_inlinable(twice.fn)
    assert is_cube_decorator(cubepy.cube) and not is_cube_decorator(twice)
