"""IR text form: printer + lark parser round trip, on hand-built IR and the corpus."""
from __future__ import annotations

import dataclasses
import math

import pytest

from cubepy.ir import nodes as ir
from cubepy.ir.parser import IRParseError, parse_kernel
from cubepy.ir.passes import run_pipeline
from cubepy.ir.printer import print_kernel
from cubepy.ir.types import bool_, f16, f32, f64, i32, i64, u32, u64
from cubepy.ir.visit import walk_all_exprs, walk_stmts

from ir_samples import (c, every_matrix_kernel, every_node_kernel, every_warpgroup_kernel,
                        kernel, load)


def roundtrip(k: ir.Kernel) -> str:
    """Asserts both round trip properties and that lines survive; returns the text."""
    text = print_kernel(k)
    back = parse_kernel(text)
    assert back == k
    assert print_kernel(back) == text
    assert [s.loc.lineno for s in walk_stmts(back.body)] == \
        [s.loc.lineno for s in walk_stmts(k.body)]
    return text


def test_every_node_round_trips():
    roundtrip(every_node_kernel())


def test_every_matrix_node_round_trips():
    text = roundtrip(every_matrix_kernel())
    assert "matrix $fb: b<16, 16, 16, f16, col_major>[2]  # line 4" in text
    assert "cmma.execute($fa, $fb[%j], $acc, $acc)  # line 11" in text
    assert "cmma.load($acc16, @half, 0:u32, 16:u32, col_major)" in text


@pytest.mark.parametrize("target", [None, "cuda", "cpu"])
def test_every_matrix_node_round_trips_after_pipeline(target):
    roundtrip(run_pipeline(every_matrix_kernel(), target))


@pytest.mark.parametrize("target", [None, "cuda", "cpu"])
def test_every_warpgroup_node_round_trips(target):
    k = every_warpgroup_kernel()
    text = roundtrip(k if target is None else run_pipeline(k, target))
    assert "matrix $acc: warpgroup<64, 64, 16, f32>  # line 4" in text
    assert "cmma.wg_mma($acc, @a_s, 0:u32, 64, @b_s, 0:u32, 32, row_major)  # line 7" in text
    assert "cmma.wg_fence()" in text and "cmma.wg_wait(0)" in text


def test_sample_covers_every_node_type():
    seen = set()
    for k in (every_node_kernel(), every_matrix_kernel(), every_warpgroup_kernel()):
        seen |= {type(s) for s in walk_stmts(k.body)}
        seen |= {type(e) for e in walk_all_exprs(k.body)}
    node_types = {t for t in vars(ir).values() if isinstance(t, type) and t.__module__ ==
                  ir.__name__ and issubclass(t, (ir.Expr, ir.Stmt)) and t not in
                  (ir.Expr, ir.Stmt)}
    assert node_types - seen == set()


@pytest.mark.parametrize("target", [None, "cuda", "metal", "cpu"])
def test_every_node_round_trips_after_pipeline(target):
    text = roundtrip(run_pipeline(every_node_kernel(), target))
    assert "every_node" in text


@pytest.mark.parametrize("value,ty", [
    (0.1, f32), (-0.0, f32), (1e-45, f32), (3.4028234663852886e38, f32), (float("inf"), f64),
    (float("-inf"), f16), (2.5, f16), (1 / 3, f64), (5e-324, f64), (2, f32), (-(2**63), i64),
    (2**64 - 1, u64), (True, bool_), (False, bool_), (-1, i32)])
def test_constants_are_exact(value, ty):
    k = kernel([ir.Assign(var=ir.Var("v", ty), value=c(value, ty), declare=True)])
    back = parse_kernel(roundtrip(k)).body.stmts[0].value.value
    assert back == value and type(back) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_nan_constant_text_is_stable():
    k = kernel([ir.Assign(var=ir.Var("v", f32), value=c(float("nan"), f32), declare=True)])
    text = print_kernel(k)
    back = parse_kernel(text)
    assert math.isnan(back.body.stmts[0].value.value)
    assert print_kernel(back) == text


def test_types_that_differ_from_the_implied_ones_are_printed():
    """Even ill-typed IR (for verifier tests) must survive the round trip."""
    v = ir.Var("zz", f32)
    bad = ir.Binary(ty=i32, op="add", lhs=load(v), rhs=c(1.0, f32))
    k = kernel([ir.Assign(var=v, value=bad)], name="barrier")  # undeclared, keyword name
    text = roundtrip(k)
    assert "add:i32(" in text and "%zz:f32" in text and '"barrier"' in text


def test_text_is_readable():
    text = print_kernel(every_node_kernel())
    assert "let %i: u32 = absolute_pos  # line 4" in text
    assert "if eq(%k, 3:u32) {" in text
    assert "shared @buf: f32[64]" in text


def test_locations_keep_other_files():
    k = every_node_kernel()
    inner = ir.Comment(text="inlined", loc=ir.Loc("other.py", 7))
    k = dataclasses.replace(k, body=ir.Block(k.body.stmts + (inner,)))
    back = parse_kernel(roundtrip(k))
    assert back.body.stmts[-1].loc.filename == "other.py"
    assert back.body.stmts[0].loc.filename == "samples.py"


@pytest.mark.parametrize("text,needle", [
    ("kernel k() cube_dim(1, 1, 1) { @nope[0:u32] = 1:u32 }", "unknown buffer"),
    ("kernel k() cube_dim(1, 1, 1) { let %a: u33 = 1:u32 }", "unknown type"),
    ("kernel k() cube_dim(1, 1, 1) { %a = 1:u32 }", "before its declaration"),
    ("kernel k() cube_dim(1, 1, 1) { let %a: u32 = frob(1:u32) }", "unknown operator"),
    ("kernel k() cube_dim(1, 1, 1) { let %a: u32 = add(1:u32) }", "takes 2"),
    ("kernel k() cube_dim(1, 1, 1) { let %a: u32 = 1:u32", "Unexpected"),
])
def test_malformed_text_raises(text, needle):
    with pytest.raises(IRParseError, match=needle):
        parse_kernel(text)


# ----------------------------------------------------------------------------- corpus

def _corpus_cases():
    import corpus
    for case_id, kern, cube_dim, options, targets in corpus.SOURCE_CASES:
        yield pytest.param(kern, cube_dim, options, targets, id=case_id)


def build(kern, cube_dim, options) -> ir.Kernel:
    from cubepy.frontend import build_kernel
    return build_kernel(kern._parse(), kern._specialization(cube_dim, options))


@pytest.mark.parametrize("kern,cube_dim,options,targets", list(_corpus_cases()))
def test_corpus_round_trips(kern, cube_dim, options, targets):
    k = build(kern, cube_dim, options)
    roundtrip(k)
    for target in (None,) + tuple(targets):
        roundtrip(run_pipeline(k, target))
