"""Every construct the frontend rejects raises one CompileError at the user's line and
column, with the source line and a caret in its text.

Each kernel marks its offending line with a `# E:<tag>` comment; the expected line
number is looked up from that marker and the column from a snippet of that line, so
editing this file never breaks the tests.
"""
from __future__ import annotations

import importlib.util
import math as pymath
import textwrap

import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CompileError, Comptime, Float, Line, SharedMemory,
                    Tensor, cube, f16, f32, f64, i32, u32, unroll)
from cubepy.frontend import build_kernel
from cubepy.spec import Specialization

with open(__file__) as _f:
    _LINES = _f.read().splitlines()


def _marker_line(tag: str) -> tuple[int, str]:
    hits = [(i + 1, text) for i, text in enumerate(_LINES) if text.rstrip().endswith(f"# E:{tag}")]
    assert len(hits) == 1, f"marker {tag} must appear exactly once"
    return hits[0]


def build(kernel, cube_dim=(1, 1, 1), **spec):
    parsed = kernel._parse()
    generics = {k: v for k, v in spec.items() if k in parsed.generics}
    comptime = {k: v for k, v in spec.items() if k not in generics}
    return build_kernel(parsed, Specialization.make(generics, comptime, cube_dim))


def compile_error(make, **spec) -> CompileError:
    """The CompileError raised by decorating (make()) or building the kernel."""
    with pytest.raises(CompileError) as info:
        build(make(), **spec)
    return info.value


def check(err: CompileError, tag: str, snippet: str, *words: str) -> None:
    lineno, text = _marker_line(tag)
    assert err.lineno == lineno, str(err)
    assert err.col_offset == text.index(snippet), str(err)
    assert err.filename == __file__
    rendered = str(err)
    assert text.split("# E:")[0].strip() in rendered
    assert "^" in rendered.splitlines()[-1]
    for w in words:
        assert w in err.msg, err.msg


# ----------------------------------------------------------------------------- syntax

def test_list_comprehension():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            x = [i for i in range(3)]  # E:listcomp
        return k
    check(compile_error(make), "listcomp", "[i for", "comprehension")


def test_lambda():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            f = lambda v: v  # E:lambda
        return k
    check(compile_error(make), "lambda", "lambda", "lambda")


def test_try():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            try:  # E:try
                a[0] = 1.0
            except Exception:
                pass
        return k
    check(compile_error(make), "try", "try", "try")


def test_with():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            with a:  # E:with
                pass
        return k
    check(compile_error(make), "with", "with", "with")


def test_class():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            class A:  # E:class
                pass
        return k
    check(compile_error(make), "class", "class", "class")


def test_string_value():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            s = "abc"  # E:string
        return k
    check(compile_error(make), "string", '"abc"', "string")


def test_fstring():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            s = f"{a}"  # E:fstring
        return k
    check(compile_error(make), "fstring", 'f"', "f-string")


def test_star_args():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], *rest):  # E:varargs
            pass
        return k
    check(compile_error(make), "varargs", "rest", "*args")


def test_default_argument():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n: u32 = 3):  # E:default
            pass
        return k
    check(compile_error(make), "default", "3)", "default")


def test_missing_annotation():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n):  # E:noann
            pass
        return k
    check(compile_error(make), "noann", "n)", "annotation")


def test_invalid_annotation():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n: pymath):  # E:badann
            pass
        return k
    check(compile_error(make), "badann", "pymath", "annotation")


def test_keyword_argument():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = max(a[1], b=a[2])  # E:kwarg
        return k
    check(compile_error(make), "kwarg", "b=", "keyword")


def test_other_decorator():
    def deco(f):
        return f

    def make():
        @cube(launch=True)
        @deco  # E:deco
        def k(a: Array[f32]):
            pass
        return k
    check(compile_error(make), "deco", "deco", "decorator")


# ----------------------------------------------------------------------------- names

def test_unknown_name():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = foo + 1.0  # E:unknown
        return k
    check(compile_error(make), "unknown", "foo", "unknown name 'foo'")


def test_unknown_method():
    def make():
        @cube(launch=True)
        def k(t: Tensor[f32]):
            n = t.foo()  # E:method
        return k
    check(compile_error(make), "method", "t.foo", "t.foo()")


def test_wrong_builtin_arity():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = pymath.exp(a[1], a[2])  # E:arity
        return k
    check(compile_error(make), "arity", "pymath.exp", "exp() takes 1 argument, got 2")


def test_recursion_direct():
    @cube
    def rec(v: f32) -> f32:
        return rec(v - 1.0)  # E:rec

    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = rec(a[0])
        return k
    check(compile_error(make), "rec", "rec(v", "recursive", "rec -> rec")


def test_recursion_mutual():
    @cube
    def ping(v: f32) -> f32:
        return pong(v)

    @cube
    def pong(v: f32) -> f32:
        return ping(v)  # E:mutual

    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = ping(a[0])
        return k
    check(compile_error(make), "mutual", "ping(v)", "recursive", "ping -> pong -> ping")


def test_used_before_assignment():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = later  # E:before
            later = 1.0
        return k
    check(compile_error(make), "before", "later", "before it is assigned")


# ----------------------------------------------------------------------------- types

def test_int_true_division():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            a[0] = a[1] / a[2]  # E:intdiv
        return k
    check(compile_error(make), "intdiv", "a[1] /", "//")


def test_literal_int_division():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            a[0] = 7 / 2  # E:litdiv
        return k
    check(compile_error(make), "litdiv", "7 / 2", "//")


def test_type_mixing_names_both_types():
    def make():
        @cube(launch=True)
        def k(a: Array[u32], b: Array[i32]):
            x = a[0] + b[0]  # E:mix
        return k
    err = compile_error(make)
    check(err, "mix", "a[0] +", "u32", "i32", "cast")


def test_float_literal_into_int():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            a[0] = a[1] * 1.5  # E:floatlit
        return k
    check(compile_error(make), "floatlit", "a[1] *", "float literal", "i32")


def test_literal_out_of_range():
    def make():
        @cube(launch=True)
        def k(a: Array[u32]):
            a[0] = a[1] + 5000000000  # E:range
        return k
    check(compile_error(make), "range", "5000000000", "does not fit in u32")


def test_stored_literal_error_points_at_the_literal():
    def make():
        @cube(launch=True)
        def k(a: Array[u32]):
            a[0] = -1  # E:storedlit
        return k
    check(compile_error(make), "storedlit", "-1", "does not fit in u32", "negative")


def test_reassign_other_type():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            x = u32(1)
            x = i32(2)  # E:reassign
            a[0] = f32(x)
        return k
    check(compile_error(make), "reassign", "x = i32", "'x'", "u32", "i32")


def test_negate_unsigned():
    def make():
        @cube(launch=True)
        def k(a: Array[u32]):
            a[0] = -a[1]  # E:neg
        return k
    check(compile_error(make), "neg", "-a[1]", "negate", "u32")


def test_float_index():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = a[a[1]]  # E:index
        return k
    check(compile_error(make), "index", "a[1]]", "index", "f32")


def test_math_on_int():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            a[0] = i32(cubepy.math.sqrt(a[1]))  # E:mathint
        return k
    check(compile_error(make), "mathint", "cubepy.math.sqrt", "sqrt()", "float", "i32")


def test_non_bool_condition():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            if a[0] and a[1] > 0:  # E:nonbool
                a[2] = 1
        return k
    check(compile_error(make), "nonbool", "a[0] and", "bool", "comparison")


def test_int_pow_runtime_exponent():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            a[0] = a[1] ** a[2]  # E:pow
        return k
    check(compile_error(make), "pow", "a[1] **", "exponent")


def test_unbound_generic():
    def make():
        @cube(launch=True)
        def k(a: Array[Float]):  # E:unbound
            a[0] = Float(0.0)
        return k
    check(compile_error(make), "unbound", "a: Array", "Float is not bound", "Float=f32")


def test_line_scalar_parameter():
    def make():
        @cube(launch=True)
        def k(a: Line[f32]):  # E:line
            pass
        return k
    check(compile_error(make), "line", "a: Line", "scalar parameter cannot be a Line")


# ----------------------------------------------------------------------------- statements

def test_rebind_tensor_param():
    def make():
        @cube(launch=True)
        def k(a: Tensor[f32], b: Tensor[f32]):
            a = b  # E:rebind
        return k
    check(compile_error(make), "rebind", "a = b", "rebind", "'a'")


def test_kernel_returns_value():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            return a[0]  # E:retval
        return k
    check(compile_error(make), "retval", "a[0]", "cannot return a value")


def test_break_outside_loop(tmp_path):
    """Python itself rejects this when compiling a file; the frontend reads the source
    text, so its own check is exercised by editing the file after import."""
    import linecache
    path = tmp_path / "brk.py"
    good = ("from cubepy import *\n\n@cube(launch=True)\ndef k(a: Array[f32]):\n"
            "    while a[0] > 0.0:\n        break\n")
    path.write_text(good)
    spec = importlib.util.spec_from_file_location("brk", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text(good.replace("    while a[0] > 0.0:\n", "    if a[0] > 0.0:\n"))
    linecache.checkcache(str(path))
    with pytest.raises(CompileError) as info:
        build(cube(launch=True)(module.k.fn))
    err = info.value
    assert (err.lineno, err.col_offset) == (6, 8)
    assert "outside a loop" in err.msg and "break" in str(err) and "^" in str(err)


def test_assign_loop_variable():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            for i in range(4):
                i = 2  # E:loopvar
        return k
    check(compile_error(make), "loopvar", "i = 2", "loop variable")


def test_loop_variable_after_loop():
    def make():
        @cube(launch=True)
        def k(a: Array[i32]):
            for i in range(4):
                a[i] = 0
            a[0] = i  # E:afterloop
        return k
    check(compile_error(make), "afterloop", "i  #", "after its loop")


def test_non_constant_unroll_bound():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n: u32):
            for i in unroll(range(n)):  # E:unroll
                a[i] = 1.0
        return k
    check(compile_error(make), "unroll", "n))", "compile time")


def test_zero_step():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            for i in range(0, 4, 0):  # E:zerostep
                a[i] = 1.0
        return k
    check(compile_error(make), "zerostep", "0)", "zero")


def test_negative_step_unsigned():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n: u32):
            for i in range(n, 0, -1):  # E:negstep
                a[i] = 1.0
        return k
    check(compile_error(make), "negstep", "range(n", "negative step", "u32")


def test_shared_memory_runtime_size():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n: u32):
            s = SharedMemory(f32, n)  # E:shared
            s[0] = a[0]
        return k
    check(compile_error(make), "shared", "n)", "compile time")


def test_atomic_inside_and_is_built_under_the_left_operand():
    """An atomic on the right of `and` runs only where the left side holds (as Python
    evaluates it): it is built inside an if on the left operand, not before it."""
    @cube(launch=True)
    def k(a: Array[u32]):
        if a[0] > 0 and cubepy.atomic_add(a, 1, u32(1)) > 0:
            a[2] = u32(1)
    from cubepy.ir import nodes as n
    body = build(k).body.stmts
    top = [s for s in body if isinstance(s, n.If)]
    assert not any(isinstance(s, n.AtomicOp) for s in body)
    assert any(isinstance(s, n.AtomicOp) for s in top[0].then.stmts)


def test_atomic_on_f16():
    def make():
        @cube(launch=True)
        def k(a: Array[f16]):
            cubepy.atomic_max(a, 0, f16(1.0))  # E:atomicf16
        return k
    check(compile_error(make), "atomicf16", "a, 0", "f16")


def test_plane_sum_of_bool():
    def make():
        @cube(launch=True)
        def k(a: Array[f32]):
            a[0] = f32(cubepy.plane_sum(a[0] > 1.0))  # E:plane
        return k
    check(compile_error(make), "plane", "a[0] > 1.0", "plane_sum() takes", "not bool")


def test_comptime_not_bound():
    def make():
        @cube(launch=True)
        def k(a: Array[f32], n: Comptime[int]):  # E:comptime
            a[0] = f32(n)
        return k
    check(compile_error(make), "comptime", "n: Comptime", "'n'")


def test_f64_rejected_on_wgsl():
    """f64 is rejected by the WGSL legalisation: still a CompileError at the user's line."""
    @cube(launch=True)
    def k(a: Array[Float]):
        a[ABSOLUTE_POS] = a[ABSOLUTE_POS] * Float(2.0)  # E:f64
    with pytest.raises(CompileError) as info:
        k.source("wgsl", cube_dim=(64, 1, 1), Float=f64)
    err = info.value
    lineno, _ = _marker_line("f64")
    assert "f64" in err.msg
    assert err.lineno == lineno or err.lineno == lineno - 2, str(err)
    assert "^" in str(err)


# ----------------------------------------------------------------------------- garbage

_GARBAGE = [
    "x = [1, 2]", "x = {1: 2}", "x = {1}", "x = a[1:2:3]", "x = a[0, 1]", "del x",
    "import os", "raise ValueError()", "assert a[0] > 0.0", "x = (y := 3)",
    "global g", "yield 1", "x = None", "x = ...", "x = b'abc'", "x = a @ a",
    "x = 1 if a[0] is None else 2", "x = 1 in a", "for i in a:\n        pass",
    "for i, j in range(3):\n        pass", "while True:\n        pass\n    else:\n        x = a + 1",
    "x = a + 1", "a[0] = a", "x = len(3)", "x = range(3)", "x = unroll(3)", "x = a.shape",
    "x = a.shape(1.5)", "x = a.rank()", "x = cubepy + 1", "x = cubepy.math.exp + 1", "x = print(1)",
    "x = u32()", "x = u32(1, 2)", "x = f32(a)", "x = max(1)", "x = abs(1, 2)",
    "x = select(True, 1)", "x = SharedMemory(f32, 0)", "y = SharedMemory(3, 4)",
    "x = cubepy.atomic_add(a, 0)", "x = cubepy.atomic_add(3, 0, 1)", "x = terminate() + 1",
    "x = sync_cube + 1", "x = int(a[0])", "x = 1 << 2.0", "x = 1.0 & 2.0",
    "x = a[0] & a[1]", "x = ~a[0]", "x = not a[0]", "x = True + a[0]", "continue",
    "return 3", "x: f32 = u32(1)", "x = 'a' < 'b' < 1", "x = pymath.nope(1.0)",
    "x = pymath.exp(1)\n    y = pymath.exp(i32(1))", "a.x = 1", "(x, y) = 1",
    "x, y = 1, 2, 3", "x = 1\n    x = a[0]\n    x = u32(1)", "x = Float(1.0)",
    "x = lambda: 0", "x = [i for i in range(3)]", "x = (i for i in range(3))",
    "x = 1 if a else 2", "x = a if a[0] > 0.0 else a", "x = -True + b[0] + a[0]",
    "x = b[0] ** -1", "x = b[0] ** 100", "x = u32(1) ** a[0]",
]


def _garbage_kernel(tmp_path, i: int, body: str):
    src = textwrap.dedent("""\
        import math as pymath
        import cubepy
        from cubepy import *

        @cube(launch=True)
        def k(a: Array[f32], b: Array[i32], n: u32):
            {body}
        """).replace("{body}", body)
    path = tmp_path / f"garbage_{i}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"garbage_{i}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


@pytest.mark.parametrize("i", range(len(_GARBAGE)))
def test_garbage_raises_only_compile_error(tmp_path, i):
    body = _GARBAGE[i]
    try:
        kernel = _garbage_kernel(tmp_path, i, body)
        build(kernel)
    except CompileError as err:
        assert err.lineno >= 5 and err.msg
        return
    except SyntaxError:
        return  # Python itself rejects it: never reaches the frontend
    pytest.fail(f"no CompileError for {body!r}")
