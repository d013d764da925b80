"""Python forms in kernels: `match`, `enumerate`/`zip` over ranges, tuples as values
(device functions returning several values), device functions with side effects inside
`and`/`or`, `bool`/`int`/`float` annotations, names read from a closure, and
`for ... else`/`while ... else`. Each form runs on every runtime present (cpu, wgpu,
cuda) against the same device function run as plain Python where it only uses Python
(`f.__wrapped__`), or against a Python transcription; the user's mistakes are
CompileErrors at their line; one kernel using every form is compiled by nvcc, naga and
clang++."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CompileError, Comptime, CubeCount, CubeDim, Float,
                    Int, atomic_add, cube, f32, i32, u32, unroll)
from cubepy.frontend import build_kernel
from cubepy.ir import nodes as n
from cubepy.spec import Specialization

DIM = 64
XS = np.arange(-20, DIM - 20, dtype=np.int32)  # negative, zero and positive subjects


def run(client, kernel, *arrays, dtype=i32, **spec):
    """Launches kernel(x, out, *arrays) over XS on one cube; returns out."""
    x = client.tensor(XS)
    out = client.zeros(DIM, dtype)
    kernel.launch(client, CubeCount(1), CubeDim(DIM), x, out, *arrays, **spec)
    return out.numpy()


def line_of(fn, marker: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, t in enumerate(lines) if marker in t)


# ----------------------------------------------------------------------------- match

@cube
def classify(v: int, flag: bool) -> int:
    match v:
        case 0:
            return 100
        case 1 | 2 | -3:
            return 200
        case -1 | -2:
            return 300
        case 7 if flag:
            return 400
        case 8 | 9 as w if w > 8:
            return 500 + w
        case big if big > 30:
            return big * 2
        case _:
            r = 0
            match v % 3:
                case 0:
                    r = 1
                case 1:
                    r = 2
            return r


@cube(launch=True)
def match_kernel(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    out[i] = classify(x[i], i % u32(2) == u32(0))


def test_match_on_runtime_integers(runtime_client):
    got = run(runtime_client, match_kernel)
    want = [classify.__wrapped__(int(v), k % 2 == 0) for k, v in enumerate(XS)]
    np.testing.assert_array_equal(got, want)


@cube(launch=True)
def match_comptime(x: Array[i32], out: Array[i32], op: Comptime[str], k: Comptime[int],
                   neg: Comptime[bool]):
    i = ABSOLUTE_POS
    match op:
        case "add":
            out[i] = x[i] + k
        case "mul" | "times":
            out[i] = x[i] * k
        case "never":
            out[i] = x[i] + u32(1)  # does not type-check: never compiled unless chosen
        case _:
            out[i] = -x[i]
    match k:
        case 3:
            out[i] += 1000
        case _:
            pass
    match neg:
        case True:
            out[i] = -out[i]
        case False:
            pass


@pytest.mark.parametrize("op,neg", [("add", False), ("mul", True), ("times", False),
                                    ("neg", True)])
def test_match_on_a_comptime_value_compiles_only_the_taken_arm(runtime_client, op, neg):
    got = run(runtime_client, match_comptime, op=op, k=3, neg=neg)
    x = XS.astype(np.int64)
    want = {"add": x + 3, "mul": x * 3, "times": x * 3, "neg": -x}[op] + 1000
    np.testing.assert_array_equal(got, -want if neg else want)
    ir = match_comptime.ir(cube_dim=(DIM, 1, 1), op=op, k=3, neg=neg)
    assert "if" not in ir.split("{", 1)[1]  # no runtime test left
    with pytest.raises(CompileError, match="cannot mix"):
        match_comptime.ir(cube_dim=(DIM, 1, 1), op="never", k=3, neg=False)


# ----------------------------------------------------------------------------- loops

@cube
def loop_forms(n: int, m: int) -> int:
    acc = 0
    for i, v in enumerate(range(n, 3 * n + 4, 2)):
        if v % 3 == 0:
            continue  # the counter still advances
        acc += (i + 1) * v
    for k, v in enumerate(range(m, -1, -1), 10):
        acc += k * v
    for a, b in zip(range(n), range(m, -5, -2)):
        acc += a * 7 + b
    for a, b, c in zip(range(2, 40, 3), range(n, 2 * n + 3), range(m)):
        acc += a * b - c
    for i, (a, b) in enumerate(zip(range(n), range(m, 0, -1)), 1):
        acc += i * (a + 3 * b)
    return acc


@cube(launch=True)
def loop_kernel(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    v = x[i]
    m = (v * 7 + 3) % 11
    out[i] = loop_forms(v % 9, m)


def test_enumerate_and_zip_over_runtime_ranges(runtime_client):
    got = run(runtime_client, loop_kernel)
    want = [loop_forms.__wrapped__(int(v) % 9, (int(v) * 7 + 3) % 11) for v in XS]
    np.testing.assert_array_equal(got, want)


@cube(launch=True)
def unrolled_kernel(x: Array[i32], out: Array[i32], n: Comptime[int]):
    i = ABSOLUTE_POS
    acc = x[i]
    for k, v in enumerate(unroll(range(1, n))):
        acc += k * v * x[i]
    for a, b in unroll(zip(range(n), range(20, 0, -3))):
        acc = acc * 2 + a - b
    for a, b in zip(unroll(range(3)), range(n)):
        acc += a * b
    out[i] = acc


def unrolled_reference(x: int, n: int) -> int:
    acc = x
    for k, v in enumerate(range(1, n)):
        acc += k * v * x
    for a, b in zip(range(n), range(20, 0, -3)):
        acc = acc * 2 + a - b
    for a, b in zip(range(3), range(n)):
        acc += a * b
    return acc


def test_enumerate_and_zip_under_unroll(runtime_client):
    got = run(runtime_client, unrolled_kernel, n=5)
    np.testing.assert_array_equal(got, [unrolled_reference(int(v), 5) for v in XS])
    ir = unrolled_kernel.ir(cube_dim=(DIM, 1, 1), n=5)
    assert "for " not in ir and "break" not in ir  # fully expanded


@cube
def search(v: int, limit: int) -> int:
    found = -1
    for k in range(limit):
        if k * k == v:
            found = k
            break
    else:
        found = -100 - limit
    j = 0
    while j < 5:
        j += 1
        if v == j * 3:
            break
    else:
        found += 1000
    for q in range(2):  # no break: the else always runs
        found += q
    else:
        found += 10000
    for a in range(3):  # an inner break leaves only the inner loop
        for b in range(4):
            if b == a + v % 3:
                break
        else:
            found += 100000
        if a == v % 7:
            break
    else:
        found += 1000000
    return found


@cube(launch=True)
def search_kernel(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    out[i] = search(x[i], i32(i % u32(9)))


def test_for_else_and_while_else(runtime_client):
    got = run(runtime_client, search_kernel)
    want = [search.__wrapped__(int(v), k % 9) for k, v in enumerate(XS)]
    np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------- tuples

@cube
def divmod_py(a: int, b: int) -> tuple[int, int]:
    return a // b, a % b


@cube
def min_max(a, b):
    if a < b:
        return (a, b)
    return b, a


@cube
def spread(t, scale: int) -> int:
    lo, hi = t
    return (hi - lo) * scale + t[0] - t[-1]


@cube(launch=True)
def tuple_kernel(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    v = x[i]
    q, r = divmod_py(v, 7)
    t = (q, r)
    q = q + 100  # the tuple keeps the value q had when it was made
    lo, hi = min_max(t[1], t[0])
    pair = min_max(v, 3)
    out[i] = q * 1000000 + lo * 10000 + hi * 100 + spread(pair, 2) + t[0] * 7


def tuple_reference(v: int) -> int:
    q, r = divmod_py.__wrapped__(v, 7)
    t = (q, r)
    q = q + 100
    lo, hi = min_max.__wrapped__(t[1], t[0])
    pair = min_max.__wrapped__(v, 3)
    lo2, hi2 = pair
    spread_py = (hi2 - lo2) * 2 + pair[0] - pair[-1]
    return q * 1000000 + lo * 10000 + hi * 100 + spread_py + t[0] * 7


def test_tuples_as_values_and_results(runtime_client):
    got = run(runtime_client, tuple_kernel)
    np.testing.assert_array_equal(got, [tuple_reference(int(v)) for v in XS])


# ----------------------------------------------------------------------------- and / or

@cube
def count(c: Array[i32], k: u32) -> bool:
    atomic_add(c, k, 1)
    return True


@cube
def mark(c: Array[i32], k: u32, v: i32) -> bool:
    c[k] = c[k] * 10 + v
    return v % 2 == 0


@cube(launch=True)
def shortcircuit_kernel(x: Array[i32], out: Array[i32], ands: Array[i32],
                        ors: Array[i32], trail: Array[i32]):
    i = ABSOLUTE_POS
    v = x[i]
    r = 0
    if v > 0 and count(ands, i):
        r += 1
    if v > 5 or count(ors, i):
        r += 2
    if mark(trail, i, v % 4) and v % 3 == 0 or mark(trail, i, 2) and mark(trail, i, v % 7):
        r += 4
    if v < 0 and atomic_add(ands, i, 100) >= 0:
        r += 8
    out[i] = r


def shortcircuit_reference(v: int):
    ands = ors = trail = r = 0

    def mark_py(k: int) -> bool:
        nonlocal trail
        trail = trail * 10 + k
        return k % 2 == 0
    if v > 0:
        ands += 1
        r += 1
    if v <= 5:
        ors += 1
    r += 2  # count() returns True
    if mark_py(v % 4) and v % 3 == 0 or mark_py(2) and mark_py(v % 7):
        r += 4
    if v < 0:
        ands += 100
        r += 8
    return r, ands, ors, trail


def test_side_effects_inside_and_or_run_only_when_python_would(runtime_client):
    c = runtime_client
    bufs = [c.zeros(DIM, i32) for _ in range(3)]
    got = run(c, shortcircuit_kernel, *bufs)
    want = np.array([shortcircuit_reference(int(v)) for v in XS])
    np.testing.assert_array_equal(got, want[:, 0])
    for k, buf in enumerate(bufs):
        np.testing.assert_array_equal(buf.numpy(), want[:, k + 1])


# ----------------------------------------------------------------------------- annotations

@cube
def is_odd(v: int) -> bool:
    return v % 2 != 0


@cube
def half(v: float) -> float:
    return v * 0.5


@cube(launch=True)
def annotated_kernel(x: Array[i32], out: Array[f32], bias: float, step: int, on: bool):
    i = ABSOLUTE_POS
    total: float = 0
    n: int = x[i]
    flag: bool = is_odd(n)
    if flag and on:
        total = half(f32(n)) + bias
    else:
        total = f32(n * step)
    out[i] = total


def test_python_scalar_annotations(runtime_client):
    got = run(runtime_client, annotated_kernel, 0.25, 3, True, dtype=f32)
    want = [v * 0.5 + 0.25 if v % 2 else float(v * 3) for v in XS.tolist()]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))
    assert [p.elem for p in annotated_kernel.params[2:]] == [f32, i32, cubepy.bool_]
    ir = annotated_kernel.ir(cube_dim=(DIM, 1, 1))
    assert "total: f32" in ir and "n: i32" in ir and "flag: bool" in ir


# ----------------------------------------------------------------------------- closures

def make_scaler(scale, T):
    """A kernel made by a factory: the placeholder T, the constant scale, the device
    function and OFFSET (assigned after the kernel is defined) come from the closure."""
    @cube
    def apply(v: T) -> T:
        return v * T(scale) + T(OFFSET)

    @cube(launch=True)
    def kernel(x: Array[T], out: Array[T]):
        i = ABSOLUTE_POS
        out[i] = apply(x[i])
    OFFSET = scale + 1
    return kernel


def test_closure_names_are_read_like_python(runtime_client):
    c = runtime_client
    for scale in (2, 5):
        kernel = make_scaler(scale, Int)
        out = c.zeros(DIM, i32)
        kernel.launch(c, CubeCount(1), CubeDim(DIM), c.tensor(XS), out)
        np.testing.assert_array_equal(out.numpy(), XS * scale + scale + 1)
    kernel = make_scaler(3, Float)
    out = c.zeros(DIM, f32)
    kernel.launch(c, CubeCount(1), CubeDim(DIM), c.tensor(XS.astype(np.float32)), out)
    np.testing.assert_array_equal(out.numpy(), XS.astype(np.float32) * 3 + 4)


# ----------------------------------------------------------------------------- IR shape

def build(kernel, cube_dim=(1, 1, 1), **spec):
    parsed = kernel._parse()
    generics = {k: v for k, v in spec.items() if k in parsed.generics}
    comptime = {k: v for k, v in spec.items() if k not in generics}
    return build_kernel(parsed, Specialization.make(generics, comptime, cube_dim))


def test_a_runtime_match_is_an_elif_chain():
    @cube(launch=True)
    def k(x: Array[i32]):
        match x[0]:
            case 1:
                x[1] = 1
            case 2 | 3:
                x[1] = 2
            case _:
                x[1] = 3
    ifs = [s for s in build(k).body.stmts if isinstance(s, n.If)]
    assert len(ifs) == 1 and isinstance(ifs[0].orelse.stmts[-1], n.If)
    assert isinstance(ifs[0].orelse.stmts[-1].cond, n.Logical)  # 2 | 3


def test_for_else_without_break_needs_no_flag():
    @cube(launch=True)
    def k(x: Array[i32]):
        for j in range(3):
            x[j] = 1
        else:
            x[3] = 2
    body = build(k).body.stmts
    assert isinstance(body[-1], n.Store) and not any(isinstance(s, n.If) for s in body)


# ----------------------------------------------------------------------------- errors

def error_of(kernel, **spec) -> CompileError:
    with pytest.raises(CompileError) as info:
        build(kernel, **spec)
    return info.value


def at_line(err: CompileError, fn, marker: str, *words: str) -> None:
    assert err.lineno == line_of(fn, marker), str(err)
    assert "^" in str(err)
    for w in words:
        assert w in err.msg, err.msg


def test_match_pattern_kinds_that_are_errors():
    def k_class(x: Array[i32]):
        match x[0]:
            case int():  # class
                x[1] = 1
    def k_seq(x: Array[i32]):
        match x[0]:
            case [a, b]:  # seq
                x[1] = 1
    def k_map(x: Array[i32]):
        match x[0]:
            case {1: a}:  # map
                x[1] = 1
    for fn, marker, words in ((k_class, "# class", "class patterns"),
                              (k_seq, "# seq", "sequence patterns"),
                              (k_map, "# map", "mapping patterns")):
        with pytest.raises(CompileError) as info:
            cube(launch=True)(fn)
        at_line(info.value, fn, marker, words)


def test_match_errors_at_build():
    @cube(launch=True)
    def float_subject(x: Array[f32]):
        match x[0]:  # subject
            case 1:
                x[1] = 1.0
    at_line(error_of(float_subject), float_subject.fn, "# subject", "takes an integer",
            "f32")

    @cube(launch=True)
    def none_on_runtime(x: Array[i32]):
        match x[0]:
            case None:  # none
                x[1] = 1
    at_line(error_of(none_on_runtime), none_on_runtime.fn, "# none",
            "None/True/False patterns take a compile-time subject")

    @cube(launch=True)
    def string_on_runtime(x: Array[i32]):
        match x[0]:
            case "a":  # str
                x[1] = 1
    at_line(error_of(string_on_runtime), string_on_runtime.fn, "# str", "string")

    @cube(launch=True)
    def guard_store(x: Array[i32]):
        match x[0]:
            case 1 if count(x, u32(0)):  # guard
                x[1] = 1
    # the error is at the side effect, inside the device function
    at_line(error_of(guard_store), count.fn, "atomic_add(", "atomic_add()", "a case guard")


def test_tuple_errors():
    @cube(launch=True)
    def arity(x: Array[i32]):
        a, b, c = divmod_py(x[0], 3)  # arity
        x[1] = a + b + c
    at_line(error_of(arity), arity.fn, "# arity", "cannot unpack 2 values into 3 names")

    @cube
    def uneven(v: int):
        if v > 0:
            return v, v
        return v  # uneven

    @cube(launch=True)
    def calls_uneven(x: Array[i32]):
        a, b = uneven(x[0])
        x[1] = a + b
    at_line(error_of(calls_uneven), uneven.fn, "# uneven", "returns 2 values elsewhere")

    @cube
    def declared_two(v: int) -> tuple[int, int]:
        return v, v, v  # three

    @cube(launch=True)
    def calls_declared(x: Array[i32]):
        a, b = declared_two(x[0])
        x[1] = a + b
    at_line(error_of(calls_declared), declared_two.fn, "# three",
            "annotated to return 2 values, this returns 3")

    @cube(launch=True)
    def runtime_index(x: Array[i32]):
        t = (x[0], x[1])
        x[2] = t[x[3]]  # runtime
    at_line(error_of(runtime_index), runtime_index.fn, "# runtime", "known at compile time")

    @cube(launch=True)
    def out_of_range(x: Array[i32]):
        t = (x[0], x[1])
        x[2] = t[2]  # range
    at_line(error_of(out_of_range), out_of_range.fn, "# range", "index 2 is out of range")

    @cube(launch=True)
    def as_value(x: Array[i32]):
        x[2] = divmod_py(x[0], 2)  # value
    at_line(error_of(as_value), as_value.fn, "# value", "a tuple of 2 values cannot be used")

    @cube(launch=True)
    def to_typed(x: Array[i32]):
        x[2] = is_odd((x[0], x[1]))  # typed
    at_line(error_of(to_typed), to_typed.fn, "# typed", "a tuple of 2 values was passed")


def test_loop_form_errors():
    @cube(launch=True)
    def wrong_names(x: Array[i32]):
        for a, b, c in enumerate(range(3)):  # names
            x[a] = b + c
    at_line(error_of(wrong_names), wrong_names.fn, "# names", "needs 2 loop variable names")

    @cube(launch=True)
    def zip_of_buffer(x: Array[i32]):
        for a, b in zip(range(3), x):  # buffer
            x[a] = b
    at_line(error_of(zip_of_buffer), zip_of_buffer.fn, "# buffer", "range(...)")

    @cube(launch=True)
    def unrolled_runtime(x: Array[i32]):
        for a, b in unroll(zip(range(3), range(x[0]))):  # unroll
            x[a] = b
    at_line(error_of(unrolled_runtime), unrolled_runtime.fn, "# unroll",
            "compile-time bounds")

    @cube(launch=True)
    def assigns_counter(x: Array[i32]):
        for a, b in enumerate(range(3)):
            a = 2  # assign
            x[a] = b
    at_line(error_of(assigns_counter), assigns_counter.fn, "# assign",
            "cannot assign to the loop variable 'a'")

    @cube(launch=True)
    def flat_names(x: Array[i32]):
        for a, b, c in enumerate(zip(range(3), range(4))):  # flat
            x[a] = b + c
    at_line(error_of(flat_names), flat_names.fn, "# flat", "needs the names i, (a, b)")


@cube
def plane_in_function(v: bool) -> bool:
    return cubepy.plane_any(v)


def test_plane_operations_stay_errors_inside_and_or():
    @cube(launch=True)
    def k(x: Array[i32]):
        if x[0] > 0 or plane_in_function(x[1] > 0):  # plane
            x[2] = 1
    at_line(error_of(k), plane_in_function.fn, "plane_any(", "plane_any()", "inside 'or'")

    @cube(launch=True)
    def w(x: Array[i32]):
        while x[0] > 0 and count(x, u32(1)):  # while
            x[0] = x[0] - 1
    at_line(error_of(w), count.fn, "atomic_add(", "inside a while condition")


def test_bad_return_annotation():
    def k(v: int) -> tuple[int, str]:  # ann
        return v, v
    with pytest.raises(CompileError) as info:
        cube(k)
    at_line(info.value, k, "# ann", "invalid return annotation")


# ----------------------------------------------------------------------------- sources

@cube(launch=True)
def every_form(x: Array[i32], out: Array[i32], counts: Array[i32], n: int,
               mode: Comptime[int]):
    i = ABSOLUTE_POS
    v = x[i]
    acc: int = 0
    match v % 4:
        case 0 | -1:
            acc = 1
        case 2 if n > 1:
            acc = 2
        case _:
            acc = 3
    match mode:
        case 1:
            acc += 10
        case _:
            acc += u32(1)  # never compiled for mode=1
    for k, w in enumerate(range(v % 5, n)):
        acc += k * w
    for a, b in zip(range(n), range(v, -10, -3)):
        acc += a - b
    for a, b in unroll(zip(range(3), range(4, 8))):
        acc += a * b
    for k in range(n):
        if k == v:
            break
    else:
        acc += 100
    q, r = divmod_py(v, 5)
    t = (q, r)
    if v > 0 and count(counts, i) or is_odd(t[1]):
        acc += 1000
    out[i] = acc + t[0]


@pytest.mark.nvcc
def test_every_form_compiles_with_nvcc_naga_and_clang(tmp_path):
    from source_check import validate_sources
    sources = validate_sources(every_form, tmp_path, cube_dim=(64, 1, 1), mode=1)
    assert "atomicAdd" in sources["cuda"] and "atomicAdd" in sources["wgsl"]


def test_every_form_runs(runtime_client):
    c = runtime_client
    counts = c.zeros(DIM, i32)
    got = run(c, every_form, counts, 6, mode=1)

    def reference(v: int, n: int) -> tuple[int, int]:
        m = v % 4  # Python's: never negative, so `case 0 | -1` takes 0 only
        acc = 1 if m in (0, -1) else 2 if m == 2 and n > 1 else 3
        acc += 10
        acc += sum(k * w for k, w in enumerate(range(v % 5, n)))
        acc += sum(a - b for a, b in zip(range(n), range(v, -10, -3)))
        acc += sum(a * b for a, b in zip(range(3), range(4, 8)))
        acc += 0 if 0 <= v < n else 100
        q, r = v // 5, v % 5
        counted = v > 0
        if counted or r % 2 != 0:
            acc += 1000
        return acc + q, int(counted)
    want = np.array([reference(int(v), 6) for v in XS])
    np.testing.assert_array_equal(got, want[:, 0])
    np.testing.assert_array_equal(counts.numpy(), want[:, 1])


def test_a_long_match_runs_like_python(runtime_client, tmp_path):
    """100 cases: past the elif-chain limit the chain is flattened (docs/LANGUAGE.md,
    Limits), with the same result."""
    import importlib.util
    cases = "".join(f"        case {k} | {-k - 1}:\n            r = {k * 3 + 1}\n"
                    for k in range(100))
    src = ("from cubepy import *\n\n@cube\ndef pick(v: int) -> int:\n    r = 0\n"
           f"    match v:\n{cases}        case _:\n            r = -7\n    return r\n\n"
           "@cube(launch=True)\ndef k(x: Array[i32], out: Array[i32]):\n"
           "    out[ABSOLUTE_POS] = pick(x[ABSOLUTE_POS] * 3)\n")
    path = tmp_path / "long_match.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("long_match", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = run(runtime_client, module.k)
    np.testing.assert_array_equal(got, [module.pick.__wrapped__(int(v) * 3) for v in XS])


# -- divmod ------------------------------------------------------------------------------

@cube(launch=True)
def divmod_kernel(a: Array[i32], d: i32, q: Array[i32], r: Array[i32], fq: Array[f32],
                  fr: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(a):
        q[i], r[i] = divmod(a[i], d)
        fq[i], fr[i] = divmod(f32(a[i]) + 0.5, f32(d))


def test_divmod_is_pythons_on_every_runtime(runtime_client):
    c = runtime_client
    a = np.arange(-20, 21, dtype=np.int32)
    for d in (7, -3):
        q, r, fq, fr = (c.zeros((len(a),), t) for t in (i32, i32, f32, f32))
        divmod_kernel.launch(c, CubeCount(1), CubeDim(64), c.tensor(a), d, q, r, fq, fr)
        want = [divmod(int(v), d) for v in a]
        assert q.numpy().tolist() == [w[0] for w in want]
        assert r.numpy().tolist() == [w[1] for w in want]
        fwant = [divmod(float(v) + 0.5, float(d)) for v in a]
        assert fq.numpy().tolist() == [w[0] for w in fwant]
        assert fr.numpy().tolist() == [w[1] for w in fwant]


def test_divmod_evaluates_each_operand_once():
    @cube
    def bump(counter: Array[u32]) -> u32:
        cubepy.atomic_add(counter, 0, u32(1))
        return u32(17)

    @cube(launch=True)
    def once(counter: Array[u32], out: Array[u32]):
        q, r = divmod(bump(counter), u32(5))
        out[0] = q
        out[1] = r

    c = cubepy.client("cpu")
    counter, out = c.zeros((1,), u32), c.zeros((2,), u32)
    once.launch(c, CubeCount(1), CubeDim(1), counter, out)
    assert counter.numpy().tolist() == [1] and out.numpy().tolist() == [3, 2]
