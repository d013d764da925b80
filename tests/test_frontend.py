"""Frontend: the kernels of tests/corpus.py and focused kernels build to well-formed,
fully typed IR, checked structurally by walking it."""
from __future__ import annotations

import math as pymath
import time

import pytest

import corpus
import cubepy
from cubepy import (ABSOLUTE_POS, Array, Comptime, Float, SharedMemory, cube, f16, f32, f64,
                    i32, select, u32, unroll)
from cubepy.frontend import build_kernel, parse_function
from cubepy.ir import nodes as n
from cubepy.ir.types import DType, LineType, bool_
from cubepy.ir.verify import verify
from cubepy.ir.visit import walk_all_exprs, walk_stmts
from cubepy.spec import Specialization


def build(kernel, cube_dim=(1, 1, 1), **spec) -> n.Kernel:
    parsed = kernel._parse()
    line_sizes = spec.pop("line_sizes", None)
    generics = {k: v for k, v in spec.items() if k in parsed.generics}
    comptime = {k: v for k, v in spec.items() if k not in generics}
    return build_kernel(parsed, Specialization.make(generics, comptime, cube_dim,
                                                    line_sizes))


def var_types(kernel: n.Kernel) -> dict[str, DType]:
    """name -> type of every variable assigned, declared or looped over."""
    out = {}
    for s in walk_stmts(kernel.body):
        for attr in ("var", "result"):
            v = getattr(s, attr, None)
            if isinstance(v, n.Var):
                out[v.name] = v.ty
    return out


def check_declarations(kernel: n.Kernel) -> None:
    """Every variable is declared exactly once, before any use, in an enclosing block."""
    declared_once: set[str] = set()
    scalars = {p.name for p in kernel.params if p.kind == "scalar"}

    def uses(expr):
        return [e.var.name for e in _walk(expr) if isinstance(e, n.Load)]

    def block(b: n.Block, visible: set[str]) -> None:
        visible = set(visible)
        for s in b.stmts:
            for e in _stmt_exprs(s):
                for name in uses(e):
                    assert name in visible, f"{name} used before its declaration"
            if isinstance(s, n.Declare) or (isinstance(s, n.Assign) and s.declare):
                assert s.var.name not in declared_once, f"{s.var.name} declared twice"
                declared_once.add(s.var.name)
                visible.add(s.var.name)
            elif isinstance(s, n.Assign):
                assert s.var.name in visible, f"{s.var.name} assigned before declaration"
            if isinstance(s, n.AtomicOp) and s.result is not None:
                assert s.result.name in visible
            if isinstance(s, n.For):
                assert s.var.name not in visible
                block(s.body, visible | {s.var.name})
            else:
                for f in ("then", "orelse", "body"):
                    if isinstance(getattr(s, f, None), n.Block):
                        block(getattr(s, f), visible)

    block(kernel.body, scalars)


def _walk(expr):
    from cubepy.ir.visit import walk_exprs
    return walk_exprs(expr)


def _stmt_exprs(s):
    from cubepy.ir.visit import child_exprs
    return list(child_exprs(s))


def all_concrete(kernel: n.Kernel) -> bool:
    concrete = (DType, LineType)  # lines before scalarize_lines
    return all(isinstance(e.ty, concrete) for e in walk_all_exprs(kernel.body)) and \
        all(isinstance(t, concrete) for t in var_types(kernel).values())


# ----------------------------------------------------------------------------- seed

@pytest.mark.parametrize("float_t", [f32, f16, f64])
def test_seed_kernel_types(float_t):
    k = build(corpus.fused_matmul_add_relu_kernel, cube_dim=(16, 16, 1), Float=float_t)
    verify(k)
    assert [p.dtype for p in k.params] == [float_t] * 4
    assert [p.kind for p in k.params] == ["tensor"] * 4
    types = var_types(k)
    for name in ("row", "col", "batch", "n_rows", "n_cols", "dim_k", "offset_output",
                 "offset_lhs", "offset_rhs", "batch_dims", "index", "dim", "k"):
        assert types[name] is u32, name
    assert types["sum"] is float_t
    assert all_concrete(k)
    check_declarations(k)
    store = [s for s in walk_stmts(k.body) if isinstance(s, n.Store)]
    assert len(store) == 1 and store[0].value.ty is float_t
    assert isinstance(store[0].value, n.Binary) and store[0].value.op == "max"
    # the zero literal became a Float constant, no cast was inserted
    assert not any(isinstance(e, n.Cast) for e in walk_all_exprs(k.body))


def test_seed_locations_point_at_user_lines():
    import inspect
    fn = corpus.fused_matmul_add_relu_kernel.fn
    lines, first = inspect.getsourcelines(fn)
    k = build(corpus.fused_matmul_add_relu_kernel, Float=f32)
    for s in walk_stmts(k.body):
        assert s.loc.filename == inspect.getsourcefile(fn)
        assert first <= s.loc.lineno < first + len(lines)
        text = lines[s.loc.lineno - first]
        assert s.loc.col >= len(text) - len(text.lstrip())
    offset = [s for s in k.body.stmts if isinstance(s, n.Assign) and s.var.name == "offset_lhs"]
    assert "offset_lhs = 0" in lines[offset[0].loc.lineno - first]


@pytest.mark.parametrize("case", corpus.SOURCE_CASES, ids=[c[0] for c in corpus.SOURCE_CASES])
def test_corpus_builds_and_verifies(case):
    _, kernel, cube_dim, spec, _ = case
    k = build(kernel, cube_dim=cube_dim, **spec)
    verify(k)
    assert all_concrete(k)
    check_declarations(k)


def test_seed_build_is_fast():
    parsed = corpus.fused_matmul_add_relu_kernel._parse()
    spec = Specialization.make({"Float": f32}, {}, (16, 16, 1))
    build_kernel(parsed, spec)
    t0 = time.perf_counter()
    for _ in range(10):
        build_kernel(parsed, spec)
    per_build = (time.perf_counter() - t0) / 10
    t0 = time.perf_counter()
    parse_function(corpus.fused_matmul_add_relu_kernel.fn, True)
    per_parse = time.perf_counter() - t0
    assert per_build < 0.010 and per_parse < 0.020, (per_build, per_parse)


# ----------------------------------------------------------------------------- literals

@cube(launch=True)
def literal_kernel(a: Array[f32], b: Array[u32], c: Array[i32]):
    lone_int = 7
    lone_int += 1
    lone_float = 0.5
    lone_float *= 2.0
    const = 3  # assigned once at the top level: a compile-time constant, no variable
    scaled = a[0] * 2
    offset = 0
    for i in range(b[0]):
        offset += b[i]
    mixed = 1
    mixed = mixed + 2.5
    c[0] = lone_int + c[1] + const
    b[1] = b[2] + const
    a[1] = lone_float + scaled + f32(offset) + mixed


def test_literal_typing():
    k = build(literal_kernel)
    t = var_types(k)
    assert t["lone_int"] is i32
    assert t["lone_float"] is f32
    assert t["scaled"] is f32
    assert t["offset"] is u32 and t["i"] is u32
    assert t["mixed"] is f32  # an int literal may become a float type
    assert "const" not in t
    scaled = [s for s in k.body.stmts if isinstance(s, n.Assign) and s.var.name == "scaled"]
    two = scaled[0].value.rhs
    assert isinstance(two, n.Const) and two.ty is f32 and isinstance(two.value, float)
    const_uses = [e for e in walk_all_exprs(k.body) if isinstance(e, n.Const) and e.value == 3]
    assert sorted(e.ty.name for e in const_uses) == ["i32", "u32"]


@cube(launch=True)
def swap_kernel(a: Array[f32]):
    x = a[0]
    y = a[1]
    x, y = y, x
    a[0] = x
    a[1] = y


def test_tuple_swap_uses_temporaries():
    k = build(swap_kernel)
    check_declarations(k)
    assigns = [s for s in k.body.stmts if isinstance(s, n.Assign)]
    names = [s.var.name for s in assigns]
    # both right sides are saved before either target is written
    tmp_first = names.index("x", 1) if names.count("x") > 1 else None
    assert tmp_first is not None
    before = names[:tmp_first]
    assert sum(1 for nm in before if nm.startswith("tmp")) == 2


# ----------------------------------------------------------------------------- comptime

@cube(launch=True)
def comptime_kernel(a: Array[f32], mode: Comptime[str], n: Comptime[int],
                    flag: Comptime[bool]):
    if mode == "fill":
        for i in range(n):
            a[i] = 1.0
    elif mode == "unroll":
        for i in unroll(range(n)):
            a[i] = f32(i)
    else:
        a[0] = u32(1) + i32(1)  # ill-typed, but never built unless selected
    if flag and n > 2:
        a[0] = 2.0


def test_comptime_if_builds_only_the_taken_branch():
    k = build(comptime_kernel, mode="fill", n=3, flag=False)
    fors = [s for s in walk_stmts(k.body) if isinstance(s, n.For)]
    assert len(fors) == 1 and not fors[0].unroll
    assert isinstance(fors[0].stop, n.Const) and fors[0].stop.value == 3
    assert not any(isinstance(s, n.If) for s in walk_stmts(k.body))
    k2 = build(comptime_kernel, mode="unroll", n=4, flag=True)
    fors = [s for s in walk_stmts(k2.body) if isinstance(s, n.For)]
    assert len(fors) == 1 and fors[0].unroll and fors[0].stop.value == 4
    stores = [s for s in k2.body.stmts if isinstance(s, n.Store)]
    assert len(stores) == 1 and stores[0].value.value == 2.0
    with pytest.raises(cubepy.CompileError):
        build(comptime_kernel, mode="other", n=1, flag=False)


def test_comptime_params_are_not_kernel_params():
    k = build(comptime_kernel, mode="fill", n=3, flag=False)
    assert [p.name for p in k.params] == ["a"]


# ----------------------------------------------------------------------------- inlining

@cube
def clamp01(v: Float) -> Float:
    if v < Float(0.0):
        return Float(0.0)
    if v > Float(1.0):
        return Float(1.0)
    return v


@cube
def twice_clamped(v: Float) -> Float:
    return clamp01(v) * Float(2.0)


@cube
def store_one(t: Array[Float], i: u32):
    t[i] = Float(1.0)


@cube(launch=True)
def inline_kernel(a: Array[Float], b: Array[f16]):
    i = ABSOLUTE_POS
    a[i] = twice_clamped(a[i])
    b[i] = clamp01(b[i])  # the device function's Float binds to f16 here
    store_one(a, i + 1)
    k = 0
    while clamp01(a[k]) > Float(0.5):
        k += 1


def test_inlining():
    k = build(inline_kernel, Float=f32)
    verify(k)
    check_declarations(k)
    comments = [s.text for s in walk_stmts(k.body) if isinstance(s, n.Comment)]
    assert sum("inlined clamp01()" in c for c in comments) == 3
    assert sum("inlined twice_clamped()" in c for c in comments) == 1
    assert any("inlined store_one()" in c for c in comments)
    types = var_types(k)
    results = {name: t for name, t in types.items() if name.startswith("clamp01_result")}
    assert sorted(t.name for t in results.values()) == ["f16", "f32", "f32"]
    # every inlined local has a unique name
    names = [s.var.name for s in walk_stmts(k.body) if isinstance(s, n.Declare)]
    assert len(names) == len(set(names))
    # the flag of an early return is reset on each call (the call may be in a loop)
    loops = [s for s in walk_stmts(k.body) if isinstance(s, n.While)]
    assert len(loops) == 1
    resets = [s for s in walk_stmts(loops[0].body) if isinstance(s, n.Assign)
              and s.var.name.startswith("clamp01_done") and s.value.value is False]
    assert len(resets) == 1


def test_inlined_store_hits_the_callers_buffer():
    k = build(inline_kernel, Float=f32)
    stores = [s for s in walk_stmts(k.body) if isinstance(s, n.Store)]
    assert {s.buffer.name for s in stores} == {"a", "b"}
    last = [s for s in stores if isinstance(s.value, n.Const)]
    assert last and last[0].buffer.name == "a" and last[0].value.value == 1.0


# ----------------------------------------------------------------------------- expressions

@cube(launch=True)
def expr_kernel(a: Array[f32], b: Array[u32], c: Array[i32]):
    x = a[0]
    a[1] = x ** 3
    a[2] = x ** 0.5
    a[3] = pymath.pi * cubepy.math.sqrt(x) + pymath.exp(x)
    a[4] = 1.0 if 0.0 < x < 1.0 else 2.0
    b[0] = b[1] << 3
    b[2] = max(b[3], 4)
    c[0] = abs(c[1]) - ~c[2]
    old = cubepy.atomic_add(b, 5, u32(1))
    b[6] = old
    cubepy.atomic_compare_exchange(c, 3, 0, 1)
    a[5] = select(cubepy.math.isnan(x), 0.0, x)


def test_expression_lowering():
    k = build(expr_kernel)
    verify(k)
    exprs = list(walk_all_exprs(k.body))
    stores = {s.index.value: s.value for s in walk_stmts(k.body)
              if isinstance(s, n.Store) and s.buffer.name == "a"}
    cube3 = stores[1]
    assert isinstance(cube3, n.Binary) and cube3.op == "mul" and cube3.lhs.op == "mul"
    assert stores[2].op == "pow" and stores[2].rhs.ty is f32
    assert any(isinstance(e, n.Call) and e.func == "exp" for e in exprs)
    assert any(isinstance(e, n.Const) and e.value == pytest.approx(pymath.pi) for e in exprs)
    sel = stores[4]
    assert isinstance(sel, n.Select) and isinstance(sel.cond, n.Logical)
    assert sel.cond.op == "and"
    assert any(isinstance(e, n.Unary) and e.op == "bitnot" and e.ty is i32 for e in exprs)
    assert any(isinstance(e, n.Binary) and e.op == "max" and e.ty is u32 for e in exprs)
    atomics = [s for s in walk_stmts(k.body) if isinstance(s, n.AtomicOp)]
    assert atomics[0].op == "add" and atomics[0].result is not None
    assert atomics[0].result.ty is u32
    assert atomics[1].op == "compare_exchange" and atomics[1].result is None
    assert atomics[1].compare.value == 0 and atomics[1].value.value == 1
    assert stores[5].ty is f32 and stores[5].cond.ty is bool_
    check_declarations(k)


@cube(launch=True)
def shared_kernel(a: Array[f32]):
    size = 32
    buf = SharedMemory(f32, size)
    buf[ABSOLUTE_POS] = a[ABSOLUTE_POS]
    cubepy.sync_cube()
    if ABSOLUTE_POS == 0:
        return
    a[ABSOLUTE_POS] = buf[len(buf) - 1 - ABSOLUTE_POS]


def test_shared_memory_barrier_terminate():
    k = build(shared_kernel)
    verify(k)
    assert len(k.shared) == 1 and k.shared[0].size == 32 and k.shared[0].buffer.space == "shared"
    kinds = [type(s).__name__ for s in walk_stmts(k.body)]
    assert "Barrier" in kinds and "Terminate" in kinds
    idx = [s for s in walk_stmts(k.body) if isinstance(s, n.Store)][-1].value.index
    assert any(isinstance(e, n.Const) and e.value == 32 and e.ty is u32 for e in _walk(idx))


@cube(launch=True)
def for_kernel(a: Array[i32]):
    total = 0
    for i in range(10, 0, -2):
        total += i
    for i in range(3):
        total += i
    a[0] = total


def test_loop_variables_get_unique_names_and_types():
    k = build(for_kernel)
    fors = [s for s in walk_stmts(k.body) if isinstance(s, n.For)]
    assert len({f.var.name for f in fors}) == 2
    assert fors[0].step.value == -2 and fors[0].var.ty is i32
    check_declarations(k)
