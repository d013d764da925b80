"""The IR verifier: accepts every sample and corpus kernel after every pass, and
catches hand-broken IR."""
from __future__ import annotations

import dataclasses

import pytest

from cubepy.ir import nodes as ir
from cubepy.ir.passes import passes_for
from cubepy.ir.types import bool_, f16, f32, i32, u32
from cubepy.ir.verify import IRVerifyError, verify

from ir_samples import (binop, builtin, c, cmp, every_matrix_kernel, every_node_kernel,
                        every_warpgroup_kernel, kernel, load)

X = ir.Param("x", "array", f32)
I = ir.Var("i", u32)
LET_I = ir.Assign(var=I, value=builtin("absolute_pos"), declare=True)


def run_verified(k: ir.Kernel, target) -> ir.Kernel:
    verify(k)
    for name, fn in passes_for(target):
        k = fn(k)
        verify(k)
    return k


@pytest.mark.parametrize("target", [None, "cuda", "wgsl", "metal", "cpu"])
def test_sample_verifies_after_every_pass(target):
    run_verified(every_node_kernel(), target)


@pytest.mark.parametrize("target", [None, "cuda", "cpu"])
def test_matrix_sample_verifies_after_every_pass(target):
    run_verified(every_matrix_kernel(), target)


@pytest.mark.parametrize("target", [None, "cuda", "cpu"])
def test_warpgroup_sample_verifies_after_every_pass(target):
    run_verified(every_warpgroup_kernel(), target)


def test_warpgroup_nodes_are_checked():
    import dataclasses
    k = every_warpgroup_kernel()
    mma = k.body.stmts[2]
    out = k.params[0]
    bad = [dataclasses.replace(mma, a=ir.BufferRef(out.name, f16, "global")),
           dataclasses.replace(mma, b_rows=12),
           ir.WarpgroupSync(op="wait", pending=-1)]
    for stmt in bad:
        body = ir.Block(k.body.stmts[:2] + (stmt,) + k.body.stmts[3:])
        with pytest.raises(IRVerifyError):
            verify(dataclasses.replace(k, body=body))
    wide = dataclasses.replace(k.matrices[0], n=100)
    with pytest.raises(IRVerifyError, match="warpgroup accumulator"):
        verify(dataclasses.replace(k, matrices=(wide,), body=ir.Block(())))


@pytest.mark.parametrize("target", [None, "cuda", "cpu"])
def test_warpgroup_store_into_a_line_buffer_verifies(target):
    # each unit stores its own elements (offset and stride in elements): a Line tensor
    # is as good as a plain one, where a plane fragment's store must take a plain one
    k = every_warpgroup_kernel()
    lines = dataclasses.replace(k, params=(dataclasses.replace(k.params[0], line_size=8),
                                           *k.params[1:]))
    run_verified(lines, target)
    m = every_matrix_kernel()
    line_params = tuple(dataclasses.replace(p, line_size=4) if p.name == "out" else p
                        for p in m.params)
    with pytest.raises(IRVerifyError, match="with buffer out"):
        verify(dataclasses.replace(m, params=line_params))


def _corpus_cases():
    import corpus
    for case_id, kern, cube_dim, options, targets in corpus.SOURCE_CASES:
        yield pytest.param(kern, cube_dim, options, targets, id=case_id)


@pytest.mark.parametrize("kern,cube_dim,options,targets", list(_corpus_cases()))
def test_corpus_verifies_after_every_pass(kern, cube_dim, options, targets):
    from cubepy.frontend import build_kernel
    k = build_kernel(kern._parse(), kern._specialization(cube_dim, options))
    for target in (None,) + tuple(targets):
        run_verified(k, target)


def store(value, index=None) -> ir.Store:
    return ir.Store(buffer=X.buffer, index=index if index is not None else load(I), value=value)


BROKEN = {
    "binary operand type": [LET_I, store(ir.Binary(ty=f32, op="add", lhs=c(1.0, f32),
                                                   rhs=c(1)))],
    "compare operand types": [LET_I, ir.If(cond=ir.Compare(ty=bool_, op="lt", lhs=load(I),
                                                           rhs=c(1, i32)))],
    "compare result": [LET_I, ir.If(cond=ir.Compare(ty=u32, op="lt", lhs=load(I), rhs=c(1)))],
    "condition not bool": [LET_I, ir.If(cond=load(I))],
    "while condition not bool": [LET_I, ir.While(cond=c(1))],
    "logical operand": [ir.If(cond=ir.Logical(ty=bool_, op="and", lhs=c(1),
                                              rhs=c(True, bool_)))],
    "select condition": [LET_I, store(ir.Select(ty=f32, cond=c(1), if_true=c(1.0, f32),
                                               if_false=c(2.0, f32)))],
    "store value type": [LET_I, store(c(1))],
    "index type": [LET_I, store(c(1.0, f32), index=c(1.0, f32))],
    "read type": [LET_I, store(ir.Index(ty=i32, buffer=X.buffer, index=c(0)))],
    "meta type": [LET_I, store(ir.Cast(ty=f32, operand=ir.Meta(ty=i32, kind="len",
                                                               buffer=X.buffer)))],
    "meta needs dim": [LET_I, store(ir.Cast(ty=f32, operand=ir.Meta(ty=u32, kind="shape",
                                                                    buffer=X.buffer)))],
    "call arity": [LET_I, store(ir.Call(ty=f32, func="exp", args=(c(1.0, f32), c(1.0, f32))))],
    "call unknown": [LET_I, store(ir.Call(ty=f32, func="frob", args=(c(1.0, f32),)))],
    "call result type": [LET_I, store(ir.Call(ty=f32, func="isnan", args=(c(1.0, f32),)))],
    "use before declaration": [store(c(1.0, f32))],
    "declared twice": [LET_I, LET_I],
    "out of scope": [ir.If(cond=c(True, bool_), then=ir.Block((LET_I,))), store(c(1.0, f32))],
    "loop variable assigned": [ir.For(var=I, start=c(0), stop=c(4), step=c(1), body=ir.Block((
        ir.Assign(var=I, value=c(2)),)))],
    "break outside loop": [ir.Break()],
    "continue outside loop": [ir.If(cond=c(True, bool_), then=ir.Block((ir.Continue(),)))],
    "unknown buffer": [LET_I, ir.Store(buffer=ir.BufferRef("nope", f32, "global"),
                                       index=load(I), value=c(1.0, f32))],
    "buffer elem mismatch": [LET_I, ir.Store(buffer=ir.BufferRef("x", i32, "global"),
                                             index=load(I), value=c(1, i32))],
    "assign type": [ir.Assign(var=ir.Var("v", f32), value=c(1), declare=True)],
    "constant range": [ir.Assign(var=ir.Var("v", u32), value=c(-1), declare=True)],
    "unknown builtin": [ir.Assign(var=ir.Var("v", u32), value=builtin("thread_id"),
                                  declare=True)],
    "var type mismatch": [LET_I, store(ir.Cast(ty=f32, operand=ir.Load(ty=i32, var=ir.Var(
        "i", i32))))],
    "atomic compare missing": [ir.AtomicOp(op="compare_exchange", buffer=X.buffer, index=c(0),
                                           value=c(1.0, f32))],
    "atomic result type": [ir.Declare(var=ir.Var("r", u32)), ir.AtomicOp(
        op="add", buffer=X.buffer, index=c(0), value=c(1.0, f32), result=ir.Var("r", u32))],
    "for bound type": [ir.For(var=I, start=c(0, i32), stop=c(4), step=c(1))],
    "shift of floats": [LET_I, store(ir.Binary(ty=f32, op="shl", lhs=c(1.0, f32), rhs=c(1)))],
}


# what each message must say (the defect, not some other complaint)
NEEDLES = {
    "binary operand type": "right operand of add", "compare operand types": "right operand of lt",
    "compare result": "expected bool", "condition not bool": "condition",
    "while condition not bool": "condition", "logical operand": "operand of and",
    "select condition": "select condition", "store value type": "value stored to x",
    "index type": "not an integer", "read type": "read of x", "meta type": "metadata",
    "meta needs dim": "needs dimension", "call arity": "takes 1 arguments",
    "call unknown": "unknown math function", "call result type": "result of isnan",
    "use before declaration": "before its declaration", "declared twice": "declared twice",
    "out of scope": "out of scope", "loop variable assigned": "loop variable",
    "break outside loop": "break outside", "continue outside loop": "continue outside",
    "unknown buffer": "unknown buffer", "buffer elem mismatch": "buffer x used as i32",
    "assign type": "value assigned to v", "constant range": "does not fit",
    "unknown builtin": "unknown builtin", "var type mismatch": "used as i32",
    "atomic compare missing": "compare value missing", "atomic result type": "atomic result",
    "for bound type": "bound of the loop", "shift of floats": "shl needs integers",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_ir_is_caught(case):
    k = kernel(BROKEN[case], params=(X,))
    with pytest.raises(IRVerifyError, match=NEEDLES[case]):
        verify(k)


def test_valid_variants_of_broken_cases_pass():
    """The same shapes, well typed, verify: the failures above come from the defect."""
    ok = kernel([LET_I, ir.If(cond=cmp("lt", load(I), c(4)), then=ir.Block((
        store(ir.Cast(ty=f32, operand=load(I))),))),
        ir.For(var=ir.Var("k", u32), start=c(0), stop=c(4), step=c(1), body=ir.Block((
            ir.Break(),)))], params=(X,))
    verify(ok)


def test_error_names_the_problem_and_line():
    bad = kernel([dataclasses.replace(ir.Break(), loc=ir.Loc("f.py", 42))])
    with pytest.raises(IRVerifyError, match=r"f.py:42.*break outside a loop"):
        verify(bad)


def test_pipeline_verifies_with_env(monkeypatch):
    """CUBEPY_VERIFY=1 makes run_pipeline check its input."""
    from cubepy.ir.passes import run_pipeline
    bad = kernel([ir.Break()])
    monkeypatch.setenv("CUBEPY_VERIFY", "1")
    with pytest.raises(IRVerifyError, match="after the frontend"):
        run_pipeline(bad, None)
