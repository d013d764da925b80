"""Passes: constant folding against a Python reference of docs/LANGUAGE.md, cube-dim
specialisation, unrolling, dead code removal, type legalisation, the pipeline."""
from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

import cubepy
from cubepy.ir import nodes as ir
from cubepy.ir.passes import (fold_constants, passes_for, remove_dead_code, run_pipeline,
                              specialize_cube_dim, unroll_loops)
from cubepy.ir.printer import print_kernel
from cubepy.ir.types import bool_, f16, f32, f64, i32, i64, u32, u64
from cubepy.ir.verify import verify
from cubepy.ir.visit import walk_all_exprs, walk_stmts

from ir_samples import binop, builtin, c, cmp, kernel, load

OUT = ir.Param("out", "array", f32)


@pytest.fixture(autouse=True)
def _verify_passes(monkeypatch):
    monkeypatch.setenv("CUBEPY_VERIFY", "1")


def fold_value(e: ir.Expr):
    """Folds `let v = e` and returns the constant (None if it did not fold)."""
    k = kernel([ir.Assign(var=ir.Var("v", e.ty), value=e, declare=True),
                ir.Store(buffer=ir.BufferRef("o", e.ty, "global"), index=c(0),
                         value=load(ir.Var("v", e.ty)))],
               params=(ir.Param("o", "array", e.ty),))
    folded = fold_constants(k)
    verify(folded)
    value = folded.body.stmts[0].value
    return value.value if isinstance(value, ir.Const) else None


# ----------------------------------------------------------------------------- reference

def ref_wrap(v: int, ty) -> int:
    """Two's complement wrap through numpy's fixed-width integers."""
    return int(np.array(v % (1 << ty.bits), dtype=np.uint64 if ty.bits == 64 else np.uint32)
               .astype(ty.numpy))


def ref_div(a: int, b: int, ty) -> tuple[int, int]:
    """LANGUAGE.md: floor division, remainder with the sign of b, x//0 = 0, x%0 = x."""
    if b == 0:
        return 0, a
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
        if q * b != a:
            q -= 1
    return ref_wrap(q, ty), ref_wrap(a - q * b, ty)


def ref_binary(op, ty, a, b):
    bits = ty.bits
    if op == "floordiv":
        return ref_div(a, b, ty)[0]
    if op == "mod":
        return ref_div(a, b, ty)[1]
    if op in ("shl", "shr"):
        n = b & (bits - 1)
        if op == "shl":
            return ref_wrap(a * 2 ** n, ty)
        return a >> n if ty.is_signed else (a % 2 ** bits) // 2 ** n
    ops = {"add": a + b, "sub": a - b, "mul": a * b, "bitand": a & b, "bitor": a | b,
           "bitxor": a ^ b, "max": max(a, b), "min": min(a, b)}
    return ref_wrap(ops[op], ty)


def edge_values(ty):
    lo = -(1 << (ty.bits - 1)) if ty.is_signed else 0
    hi = (1 << (ty.bits - 1 if ty.is_signed else ty.bits)) - 1
    vals = {0, 1, 2, 3, 7, hi, hi - 1, lo, lo + 1, 31, 32, 33, 64, 65}
    if ty.is_signed:
        vals |= {-1, -2, -3, -7, -32, -33}
    rng = random.Random(ty.bits * 7 + ty.is_signed)
    vals |= {rng.randint(lo, hi) for _ in range(4)}
    return sorted(v for v in vals if lo <= v <= hi)


INT_OPS = ("add", "sub", "mul", "floordiv", "mod", "bitand", "bitor", "bitxor", "shl", "shr",
           "max", "min")


@pytest.mark.parametrize("ty", [i32, u32, i64, u64], ids=str)
@pytest.mark.parametrize("op", INT_OPS)
def test_integer_folding_matches_language(op, ty):
    for a, b in itertools.product(edge_values(ty), repeat=2):
        got = fold_value(binop(op, c(a, ty), c(b, ty)))
        assert got == ref_binary(op, ty, a, b), (op, ty, a, b)


def test_integer_edge_cases_spelled_out():
    mn = -2**31
    assert fold_value(binop("floordiv", c(mn, i32), c(-1, i32))) == mn
    assert fold_value(binop("mod", c(mn, i32), c(-1, i32))) == 0
    assert fold_value(binop("floordiv", c(7, i32), c(0, i32))) == 0
    assert fold_value(binop("mod", c(7, i32), c(0, i32))) == 7
    assert fold_value(binop("floordiv", c(-7, i32), c(2, i32))) == -4
    assert fold_value(binop("mod", c(-7, i32), c(2, i32))) == 1
    assert fold_value(binop("mod", c(7, i32), c(-2, i32))) == -1
    assert fold_value(binop("shl", c(1), c(33))) == 2
    assert fold_value(binop("shr", c(-8, i32), c(1, i32))) == -4
    assert fold_value(binop("add", c(2**32 - 1), c(1))) == 0
    assert fold_value(ir.Binary(ty=u32, op="shl", lhs=c(1), rhs=c(-1, i32))) == 2**31


@pytest.mark.parametrize("op", ["neg", "bitnot", "abs"])
@pytest.mark.parametrize("ty", [i32, u32, i64], ids=str)
def test_unary_folding(op, ty):
    for a in edge_values(ty):
        ref = {"neg": -a, "bitnot": -a - 1, "abs": abs(a)}[op]
        assert fold_value(ir.Unary(ty=ty, op=op, operand=c(a, ty))) == ref_wrap(ref, ty)


def ref_f2i(v: float, ty) -> int:
    if math.isnan(v):
        return 0
    lo = -(1 << (ty.bits - 1)) if ty.is_signed else 0
    hi = (1 << (ty.bits - 1 if ty.is_signed else ty.bits)) - 1
    if v >= hi:
        return hi
    if v <= lo:
        return lo
    return int(v)  # truncates toward zero


@pytest.mark.parametrize("ty", [i32, u32, i64, u64], ids=str)
def test_float_to_int_casts_saturate(ty):
    for v in (0.0, -0.0, 0.5, -0.5, 1.9, -1.9, 2.5e9, -2.5e9, 1e30, -1e30, float("inf"),
              float("-inf"), float("nan"), 4294967295.0, 2147483647.0, -2147483648.0):
        v32 = float(np.float32(v))
        got = fold_value(ir.Cast(ty=ty, operand=c(v32, f32)))
        assert got == ref_f2i(v32, ty), (v32, ty)


def test_casts_between_ints_wrap_and_to_floats_round():
    assert fold_value(ir.Cast(ty=u32, operand=c(-1, i32))) == 2**32 - 1
    assert fold_value(ir.Cast(ty=i32, operand=c(2**32 - 1, u64))) == -1
    assert fold_value(ir.Cast(ty=f32, operand=c(16777217, i32))) == 16777216.0
    assert fold_value(ir.Cast(ty=f32, operand=c(0.1, f64))) == float(np.float32(0.1))
    assert fold_value(ir.Cast(ty=u32, operand=c(True, bool_))) == 1
    assert fold_value(ir.Cast(ty=bool_, operand=c(5))) is True
    assert fold_value(ir.Cast(ty=bool_, operand=c(float("nan"), f32))) is None


def test_float_folding_is_ieee_and_conservative():
    assert fold_value(binop("add", c(0.1, f32), c(0.2, f32))) == \
        float(np.float32(0.1) + np.float32(0.2))
    assert fold_value(binop("mul", c(3.0, f16), c(1.0 / 3, f16))) == \
        float(np.float16(3.0) * np.float16(1.0 / 3))
    assert fold_value(binop("div", c(1.0, f32), c(3.0, f32))) is None
    assert fold_value(binop("pow", c(2.0, f32), c(0.5, f32))) is None
    assert fold_value(binop("max", c(float("nan"), f32), c(1.0, f32))) == 1.0
    assert fold_value(binop("min", c(2.0, f32), c(float("nan"), f32))) == 2.0
    assert fold_value(ir.Call(ty=f32, func="exp", args=(c(1.0, f32),))) is None


def test_compare_logical_select_fold():
    assert fold_value(cmp("lt", c(-1, i32), c(0, i32))) is True
    assert fold_value(cmp("ne", c(float("nan"), f32), c(float("nan"), f32))) is True
    x = ir.Var("x", bool_)
    sel = ir.Select(ty=u32, cond=cmp("ge", c(3), c(4)), if_true=c(1), if_false=c(2))
    assert fold_value(sel) == 2
    k = kernel([ir.Assign(var=x, value=cmp("lt", builtin("unit_pos"), c(3)), declare=True),
                ir.If(cond=ir.Logical(ty=bool_, op="or", lhs=load(x), rhs=c(True, bool_)),
                      then=ir.Block((ir.Store(buffer=OUT.buffer, index=c(0),
                                              value=c(1.0, f32)),)))], params=(OUT,))
    body = fold_constants(k).body.stmts
    assert isinstance(body[1], ir.Store)  # `x or true` is true: the if is spliced


def test_identities_on_integers():
    i = ir.Var("i", u32)
    for e in (binop("add", load(i), c(0)), binop("mul", c(1), load(i)),
              binop("shl", load(i), c(0)), binop("floordiv", load(i), c(1))):
        k = kernel([ir.Assign(var=i, value=builtin("unit_pos"), declare=True),
                    ir.Store(buffer=OUT.buffer, index=e, value=c(0.0, f32))], params=(OUT,))
        assert fold_constants(k).body.stmts[1].index == load(i)
    k = kernel([ir.Assign(var=i, value=builtin("unit_pos"), declare=True),
                ir.Store(buffer=OUT.buffer, index=binop("mul", load(i), c(0)),
                         value=c(0.0, f32))], params=(OUT,))
    assert fold_constants(k).body.stmts[1].index == c(0)


def test_constant_control_flow():
    store = ir.Store(buffer=OUT.buffer, index=c(0), value=c(1.0, f32))
    k = kernel([
        ir.If(cond=c(False, bool_), then=ir.Block((ir.Terminate(),)),
              orelse=ir.Block((store,))),
        ir.While(cond=cmp("gt", c(1), c(2)), body=ir.Block((store,))),
        ir.For(var=ir.Var("k", i32), start=c(5, i32), stop=c(5, i32), step=c(1, i32),
               body=ir.Block((store,))),
        ir.For(var=ir.Var("m", i32), start=c(0, i32), stop=c(5, i32), step=c(-1, i32),
               body=ir.Block((store,))),
        ir.For(var=ir.Var("q", i32), start=c(0, i32), stop=c(5, i32), step=c(1, i32),
               body=ir.Block((store,))),
    ], params=(OUT,))
    body = fold_constants(k).body.stmts
    assert body[0] == store
    assert len(body) == 2 and isinstance(body[1], ir.For) and body[1].var.name == "q"


def test_loop_whose_step_folds_to_zero_is_removed():
    """A runtime-looking step that folds to 0 runs no iteration: the loop goes (a
    constant zero step is invalid IR, and C targets would loop forever)."""
    store = ir.Store(buffer=OUT.buffer, index=c(0), value=c(1.0, f32))
    stop = ir.Index(ty=f32, buffer=OUT.buffer, index=c(1))
    k = kernel([ir.For(var=ir.Var("k", i32), start=c(0, i32),
                       stop=ir.Cast(ty=i32, operand=stop),
                       step=binop("sub", c(2, i32), c(2, i32)), body=ir.Block((store,)))],
               params=(OUT,))
    assert fold_constants(k).body.stmts == ()


def test_specialize_cube_dim():
    v = ir.Var("v", u32)
    k = kernel([ir.Assign(var=v, value=binop("add", builtin("cube_dim"), binop(
        "mul", builtin("cube_dim_y"), builtin("cube_dim_z"))), declare=True),
        ir.Store(buffer=OUT.buffer, index=binop("add", load(v), builtin("unit_pos")),
                 value=c(0.0, f32))], params=(OUT,), cube_dim=(8, 4, 2))
    spec = specialize_cube_dim(k)
    assert not any(isinstance(e, ir.Builtin) and e.name.startswith("cube_dim")
                   for e in walk_all_exprs(spec.body))
    assert fold_constants(spec).body.stmts[0].value == c(64 + 8)


def _unroll_kernel(stop=4, body_extra=()):
    k_var, t = ir.Var("k", u32), ir.Var("t", f32)
    body = (ir.Assign(var=t, value=ir.Cast(ty=f32, operand=load(k_var)), declare=True),
            ir.Store(buffer=OUT.buffer, index=binop("mul", load(k_var), c(2)),
                     value=load(t))) + tuple(body_extra)
    return kernel([ir.For(var=k_var, start=c(0), stop=c(stop), step=c(1),
                          body=ir.Block(body), unroll=True, loc=ir.Loc("u.py", 9))],
                  params=(OUT,))


def test_unroll_copies_body_with_constants_and_fresh_locals():
    out = unroll_loops(_unroll_kernel())
    verify(out)
    stores = [s for s in out.body.stmts if isinstance(s, ir.Store)]
    assert [s.index for s in stores] == [c(0), c(2), c(4), c(6)]
    lets = [s.var.name for s in out.body.stmts if isinstance(s, ir.Assign)]
    assert len(set(lets)) == 4 and lets[0] == "t"
    assert not any(isinstance(s, ir.For) for s in walk_stmts(out.body))


def test_nested_unroll_uses_outer_constant():
    inner = ir.For(var=ir.Var("j", u32), start=c(0), stop=load(ir.Var("k", u32)), step=c(1),
                   body=ir.Block((ir.Store(buffer=OUT.buffer, index=load(ir.Var("j", u32)),
                                           value=c(1.0, f32)),)), unroll=True)
    k = kernel([ir.For(var=ir.Var("k", u32), start=c(0), stop=c(4), step=c(1),
                       body=ir.Block((inner,)), unroll=True)], params=(OUT,))
    out = run_pipeline(k, None)
    assert len(out.body.stmts) == 0 + 1 + 2 + 3


def test_unroll_errors_are_compile_errors():
    with pytest.raises(cubepy.CompileError, match="at most 1024"):
        unroll_loops(_unroll_kernel(stop=5000))
    with pytest.raises(cubepy.CompileError, match="break inside an unrolled loop") as err:
        unroll_loops(_unroll_kernel(body_extra=(ir.If(cond=cmp("eq", c(1), c(1)), then=ir.Block(
            (ir.Break(loc=ir.Loc("u.py", 11)),))),)))
    assert err.value.lineno == 11
    n = ir.Var("n", u32)
    k = kernel([ir.For(var=ir.Var("k", u32), start=c(0), stop=load(n), step=c(1),
                       unroll=True, loc=ir.Loc("u.py", 3))],
               params=(ir.Param("n", "scalar", u32),))
    with pytest.raises(cubepy.CompileError, match="compile-time bounds"):
        unroll_loops(k)


def test_dead_code_removal():
    used, unused, chain = ir.Var("used", u32), ir.Var("unused", u32), ir.Var("chain", u32)
    old = ir.Var("old", u32)
    cnt = ir.Param("cnt", "array", u32)
    k = kernel([
        ir.Assign(var=used, value=builtin("unit_pos"), declare=True),
        ir.Assign(var=chain, value=load(used), declare=True),
        ir.Assign(var=unused, value=load(chain), declare=True),  # only unused reads chain
        ir.Declare(var=old),
        ir.AtomicOp(op="add", buffer=cnt.buffer, index=c(0), value=c(1), result=old),
        ir.While(cond=c(True, bool_), body=ir.Block((
            ir.Break(), ir.Store(buffer=cnt.buffer, index=c(9), value=c(9))))),
        ir.Store(buffer=cnt.buffer, index=load(used), value=c(2)),
        ir.Terminate(),
        ir.Store(buffer=cnt.buffer, index=c(3), value=c(3)),
    ], params=(cnt,))
    out = remove_dead_code(k)
    verify(out)
    names = {s.var.name for s in walk_stmts(out.body) if isinstance(s, (ir.Assign, ir.Declare))}
    assert names == {"used"}
    atomic = next(s for s in out.body.stmts if isinstance(s, ir.AtomicOp))
    assert atomic.result is None
    loop = next(s for s in out.body.stmts if isinstance(s, ir.While))
    assert loop.body.stmts == (ir.Break(),)
    assert isinstance(out.body.stmts[-1], ir.Terminate)


@pytest.mark.parametrize("target,ty,ok", [
    ("wgsl", f64, False), ("wgsl", i64, False), ("wgsl", u64, False), ("metal", f64, False),
    ("metal", i64, True), ("cuda", f64, True), ("cpu", f64, True), ("wgsl", f32, True)])
def test_legalize_types(target, ty, ok):
    v = ir.Var("wide", ty)
    k = kernel([ir.Assign(var=v, value=c(1, ty) if not ty.is_float else c(1.0, ty),
                          declare=True, loc=ir.Loc("t.py", 5)),
                ir.Store(buffer=OUT.buffer, index=c(0), value=ir.Cast(ty=f32, operand=load(v)),
                         loc=ir.Loc("t.py", 6))], params=(OUT,))
    if ok:
        run_pipeline(k, target)
        return
    with pytest.raises(cubepy.CompileError, match=f"has no {ty.name}") as err:
        run_pipeline(k, target)
    assert err.value.lineno == 5


def test_legalize_rejects_f64_parameter_on_wgsl():
    k = kernel([ir.Store(buffer=ir.BufferRef("d", f64, "global"), index=c(0),
                         value=c(0.0, f64))], params=(ir.Param("d", "array", f64),))
    with pytest.raises(cubepy.CompileError, match="use f32"):
        run_pipeline(k, "wgsl")


def test_pipeline_lists_named_passes_and_keeps_input():
    names = [n for n, _ in passes_for(None)]
    assert names[:4] == ["scalarize_lines", "specialize_cube_dim", "fold_constants",
                         "unroll_loops"]
    assert "uniform_barriers" not in names
    assert "uniform_barriers" in [n for n, _ in passes_for("wgsl")]
    with pytest.raises(ValueError):
        passes_for("vulkan")
    k = _unroll_kernel()
    before = print_kernel(k)
    run_pipeline(k, "cuda")
    assert print_kernel(k) == before


def test_corpus_unrolled_poly_and_seed_f64():
    import corpus
    text = corpus.unrolled_poly.ir(cube_dim=(64, 1, 1), degree=3)
    assert "for " not in text and text.count("1.0:f32") + text.count("2.0:f32") >= 2
    with pytest.raises(cubepy.CompileError, match="WGSL has no f64"):
        corpus.fused_matmul_add_relu_kernel.source("wgsl", cube_dim=(16, 16, 1), Float=f64)


def test_the_walks_skip_only_fields_that_cannot_hold_a_node():
    """Every field of every IR node class that holds an expression, a tuple of them or a
    block in practice is walked (a `Frag` is an expression); the skipped ones are typed
    as something else. A field whose annotation names an unknown type is walked."""
    import dataclasses
    import typing  # noqa: F401  (named by Odd's annotation)

    from cubepy.ir import nodes as n
    from cubepy.ir.visit import walked_names

    classes = [c for c in vars(n).values() if isinstance(c, type)
               and dataclasses.is_dataclass(c) and issubclass(c, (n.Expr, n.Stmt))]
    assert len(classes) > 40
    for cls in classes:
        walked = walked_names(object.__new__(cls))
        for f in dataclasses.fields(cls):
            if f.name in walked:
                continue
            assert "Expr" not in f.type and "Block" not in f.type and "Frag" not in f.type, \
                (cls.__name__, f.name, f.type)
    assert "frag" in walked_names(object.__new__(n.MatrixFill))
    assert walked_names(object.__new__(n.For)) == ("start", "stop", "step", "body")

    @dataclasses.dataclass(frozen=True)
    class Odd(n.Expr):
        mystery: "typing.Any" = None  # (a dotted name: not read, so walked)
        label: str = ""
    odd = walked_names(object.__new__(Odd))  # (this module has no DType or Loc: walked)
    assert "mystery" in odd and "label" not in odd
