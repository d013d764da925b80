"""The frontend reads a function's lines as inspect.getsourcelines does, without the
tokenizer (cubepy/frontend/parse.py function_source_lines)."""
from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
import textwrap

import pytest

from cubepy.frontend.parse import function_source_lines

CASES = '''
import functools

def deco(f):
    return f

def plain(a):
    return a + 1

@deco
@deco
def decorated(a,
              b):
    x = a
    return x + b  # trailing comment on the last line
    # a comment after the last statement

def ends_in_else_pass(a):
    if a:
        a = 2
    else:
        pass

def closing_paren_at_column_zero(a):
    return max(a,
1
)

def string_with_dedented_lines():
    s = """
first
second"""
    return s

def one_liner(a): return a

class Holder:
    def method(self, a):
        if a:
            return 1
        # a comment
        return 2

def outer():
    def inner(b):
        while b:
            b -= 1
        else:
            pass
    return inner

inner = outer()

@functools.wraps(plain)
def wrapper(*args):
    return plain(*args)
y = 1
'''


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "source_line_cases.py"
    path.write_text(CASES)
    spec = importlib.util.spec_from_file_location("source_line_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["plain", "decorated", "ends_in_else_pass",
                                  "closing_paren_at_column_zero",
                                  "string_with_dedented_lines", "one_liner", "method",
                                  "inner", "wrapper"])
def test_same_lines_as_inspect(cases, name):
    fn = cases.Holder.method if name == "method" else getattr(cases, name)
    lines, first = function_source_lines(fn)
    expected_lines, expected_first = inspect.getsourcelines(fn)
    assert first == expected_first
    # the same function (inspect may also keep comment lines after its last statement)
    assert ast_dump(lines) == ast_dump(expected_lines)
    assert "".join(expected_lines).startswith("".join(lines))


def ast_dump(lines: list[str]) -> str:
    import ast
    return ast.dump(ast.parse(textwrap.dedent("".join(lines))))


def test_a_decoration_compiles_no_tokenizer_pattern(tmp_path):
    """Decorating a kernel no longer runs tokenize (its pattern's compile is the cost)."""
    kernel = tmp_path / "axpy_kernel.py"
    kernel.write_text("from cubepy import *\n"
                      "@cube(launch=True)\n"
                      "def axpy(a: f32, x: Array[f32], y: Array[f32]):\n"
                      "    i = ABSOLUTE_POS\n"
                      "    if i < len(y):\n"
                      "        y[i] = a * x[i] + y[i]\n")
    code = ("import runpy, tokenize\n"
            "calls = []\n"
            "orig = tokenize.generate_tokens\n"
            "tokenize.generate_tokens = lambda *a: calls.append(1) or orig(*a)\n"
            f"ns = runpy.run_path({str(kernel)!r})\n"
            "ns['axpy'].source('cuda')\n"
            "print(len(calls))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "CUBEPY_NO_CACHE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"
