"""uniform_barriers: after the pipeline every barrier is reached in uniform control flow
(checked by an independent walker), and barriers that cannot be made uniform are
CompileErrors at the user's line."""
from __future__ import annotations

import pytest

import cubepy
from cubepy import Array, SharedMemory, UNIT_POS, cube, f32, sync_cube, terminate, u32
from cubepy.ir import nodes as ir
from cubepy.ir.passes import run_pipeline
from cubepy.ir.types import bool_
from cubepy.ir.visit import child_blocks, walk_exprs, walk_stmts

from ir_samples import binop, builtin, c, cmp, kernel, load

VARYING = {"absolute_pos", "absolute_pos_x", "absolute_pos_y", "absolute_pos_z", "unit_pos",
           "unit_pos_x", "unit_pos_y", "unit_pos_z", "unit_pos_plane"}
TARGETS = ["cuda", "wgsl", "metal", "cpu"]


@pytest.fixture(autouse=True)
def _verify_passes(monkeypatch):
    monkeypatch.setenv("CUBEPY_VERIFY", "1")


def _conds(s: ir.Stmt) -> list[ir.Expr]:
    if isinstance(s, (ir.If, ir.While)):
        return [s.cond]
    if isinstance(s, ir.For):
        return [s.start, s.stop, s.step]
    return []


def assert_barriers_uniform(k: ir.Kernel) -> None:
    """No Terminate in a kernel with barriers; no barrier (nor a break/continue of a loop
    holding one) under a condition that may differ between units."""
    stmts = list(walk_stmts(k.body))
    if not any(isinstance(s, ir.Barrier) for s in stmts):
        return
    assert not any(isinstance(s, ir.Terminate) for s in stmts), "terminate before a barrier"
    varying: set[str] = set()

    def is_varying(e: ir.Expr) -> bool:
        return any((isinstance(x, ir.Builtin) and x.name in VARYING) or isinstance(x, ir.Index)
                   or (isinstance(x, ir.Load) and x.var.name in varying)
                   for x in walk_exprs(e))

    def mark(block: ir.Block, under: bool) -> None:
        for s in block.stmts:
            if isinstance(s, ir.Assign) and (under or is_varying(s.value)):
                varying.add(s.var.name)
            if isinstance(s, ir.AtomicOp) and s.result is not None:
                varying.add(s.result.name)
            if isinstance(s, ir.For) and (under or any(map(is_varying, _conds(s)))):
                varying.add(s.var.name)
            inner = under or any(map(is_varying, _conds(s)))
            for b in child_blocks(s):
                mark(b, inner)

    for _ in range(len(stmts) + 1):
        before = set(varying)
        mark(k.body, False)
        if varying == before:
            break

    def check(block: ir.Block, under: bool, loop: tuple[bool, bool] | None) -> None:
        """`loop`: (the innermost loop holds a barrier, control was varying at its entry)."""
        for s in block.stmts:
            assert not (isinstance(s, ir.Barrier) and under), "barrier under a varying branch"
            if isinstance(s, (ir.Break, ir.Continue)) and loop is not None and loop[0]:
                assert not under or loop[1], "varying exit of a loop with a barrier"
            inner = under or any(map(is_varying, _conds(s)))
            if isinstance(s, (ir.For, ir.While)):
                has_barrier = any(isinstance(x, ir.Barrier) for x in walk_stmts(s.body))
                check(s.body, inner, (has_barrier, inner))
            else:
                for b in child_blocks(s):
                    check(b, inner, loop)
    check(k.body, False, None)


# ----------------------------------------------------------------------------- corpus

def _build(kern, cube_dim, options=None):
    from cubepy.frontend import build_kernel
    return build_kernel(kern._parse(), kern._specialization(cube_dim, options or {}))


@pytest.mark.parametrize("name", ["guarded_neighbour", "shared_reduce"])
@pytest.mark.parametrize("target", TARGETS)
def test_corpus_barriers_are_uniform(name, target):
    import corpus
    k = run_pipeline(_build(getattr(corpus, name), (64, 1, 1)), target)
    assert_barriers_uniform(k)
    barriers = [s for s in walk_stmts(k.body) if isinstance(s, ir.Barrier)]
    assert barriers and all(s in k.body.stmts or name == "shared_reduce" for s in barriers)


def test_guarded_neighbour_guards_memory_not_barrier():
    import corpus
    k = run_pipeline(_build(corpus.guarded_neighbour, (64, 1, 1)), "wgsl")
    top = k.body.stmts
    assert isinstance(top[0], ir.Assign) and top[0].var.name == "cube_active"
    barrier_at = next(i for i, s in enumerate(top) if isinstance(s, ir.Barrier))
    guards = [s for s in top if isinstance(s, ir.If) and isinstance(s.cond, ir.Load)
              and s.cond.var.name == "cube_active"]
    assert len(guards) == 2 and top.index(guards[0]) < barrier_at < top.index(guards[1])
    assert all(any(isinstance(x, ir.Store) for x in walk_stmts(g.then)) for g in guards)


def test_target_none_keeps_terminate():
    import corpus
    k = run_pipeline(_build(corpus.guarded_neighbour, (64, 1, 1)), None)
    assert any(isinstance(s, ir.Terminate) for s in walk_stmts(k.body))


# ----------------------------------------------------------------------------- own kernels

@cube(launch=True)
def terminate_in_barrier_loop(x: Array[f32], out: Array[f32], n: u32):
    buf = SharedMemory(f32, 64)
    u = UNIT_POS
    acc = f32(0.0)
    for step in range(4):
        if x[u] < 0.0:
            terminate()
        buf[u] = x[u] + f32(step)
        sync_cube()
        acc += buf[(u + 1) % 64]
        sync_cube()
    out[u] = acc


@cube(launch=True)
def terminate_in_plain_loop_then_barrier(x: Array[f32], out: Array[f32]):
    buf = SharedMemory(f32, 64)
    u = UNIT_POS
    k = u32(0)
    while True:
        if x[u + k] < 0.0:
            terminate()
        k += u32(1)
        if k > u32(3):
            break
    buf[u] = f32(k)
    sync_cube()
    out[u] = buf[63 - u]


@cube(launch=True)
def uniform_break_in_barrier_loop(out: Array[f32], n: u32):
    buf = SharedMemory(f32, 64)
    u = UNIT_POS
    if u >= n:
        terminate()
    s = u32(32)
    while True:
        buf[u] = f32(s)
        sync_cube()
        s = s // u32(2)
        if s == u32(0):
            break
    out[u] = buf[0]


@pytest.mark.parametrize("kern", [terminate_in_barrier_loop,
                                  terminate_in_plain_loop_then_barrier,
                                  uniform_break_in_barrier_loop])
@pytest.mark.parametrize("target", TARGETS)
def test_own_kernels_become_uniform(kern, target):
    k = run_pipeline(_build(kern, (64, 1, 1)), target)
    assert_barriers_uniform(k)


def test_terminate_in_plain_loop_leaves_the_loop():
    k = run_pipeline(_build(terminate_in_plain_loop_then_barrier, (64, 1, 1)), "wgsl")
    loop = next(s for s in walk_stmts(k.body) if isinstance(s, ir.While))
    inner = list(walk_stmts(loop.body))
    off = next(i for i, s in enumerate(inner) if isinstance(s, ir.Assign)
               and s.var.name == "cube_active")
    assert isinstance(inner[off + 1], ir.Break)


def test_uniform_break_stays_unguarded():
    k = run_pipeline(_build(uniform_break_in_barrier_loop, (64, 1, 1)), "wgsl")
    loop = next(s for s in k.body.stmts if isinstance(s, ir.While))
    assert any(isinstance(s, ir.If) and isinstance(s.then.stmts[0], ir.Break)
               for s in loop.body.stmts)
    assert any(isinstance(s, ir.Assign) and s.var.name == "s" for s in loop.body.stmts)


# ----------------------------------------------------------------------------- errors

@cube(launch=True)
def barrier_in_unit_branch(out: Array[f32]):
    u = UNIT_POS
    if u < u32(32):
        sync_cube()
    out[u] = f32(1.0)


@cube(launch=True)
def barrier_in_memory_loop(x: Array[u32], out: Array[f32]):
    buf = SharedMemory(f32, 64)
    limit = x[0] + u32(UNIT_POS)
    for k in range(limit):
        buf[k % 64] = f32(k)
        sync_cube()
    out[0] = buf[0]


@cube(launch=True)
def barrier_after_varying_while(x: Array[u32], out: Array[f32]):
    u = UNIT_POS
    s = u32(4)
    t = u32(0)
    if x[u] > u32(0):
        t = u32(1)
    s = s + t
    while s > u32(0):
        sync_cube()
        s = s - u32(1)
    out[u] = f32(s)


@cube(launch=True)
def varying_break_in_barrier_loop(x: Array[u32], out: Array[f32]):
    u = UNIT_POS
    for k in range(8):
        sync_cube()
        if x[u] == u32(k):
            break
    out[u] = f32(1.0)


def _line_of(kern, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(kern.fn)
    return start + next(i for i, line in enumerate(lines) if line.strip() == text)


@pytest.mark.parametrize("kern,needle,line_text", [
    (barrier_in_unit_branch, "an if whose condition depends on 'u', which depends on UNIT_POS",
     "sync_cube()"),
    (barrier_in_memory_loop, "a for loop whose bounds depend on", "sync_cube()"),
    (barrier_after_varying_while, "'s'", "sync_cube()"),
    (varying_break_in_barrier_loop, "break under a condition", "break"),
])
@pytest.mark.parametrize("target", ["wgsl", "cuda"])
def test_non_uniform_barriers_are_compile_errors(kern, needle, line_text, target):
    with pytest.raises(cubepy.CompileError, match="must") as err:
        run_pipeline(_build(kern, (64, 1, 1)), target)
    assert needle in err.value.msg
    assert err.value.lineno == _line_of(kern, line_text)


def test_hand_built_barrier_under_shared_read_is_rejected():
    buf = ir.SharedDecl(ir.BufferRef("buf", u32, "shared"), 8)
    k = kernel([ir.If(cond=cmp("gt", ir.Index(ty=u32, buffer=buf.buffer, index=c(0)), c(0)),
                      then=ir.Block((ir.Barrier(loc=ir.Loc("h.py", 4)),)))], shared=(buf,))
    with pytest.raises(cubepy.CompileError, match="shared memory") as err:
        run_pipeline(k, "metal")
    assert err.value.lineno == 4


def test_uniform_builtins_and_params_allow_barriers():
    n = ir.Var("n", u32)
    k = kernel([ir.If(cond=ir.Logical(ty=bool_, op="and", lhs=cmp("lt", builtin("cube_pos_x"),
                                                                  load(n)),
                                      rhs=cmp("gt", builtin("cube_count"), c(1))),
                      then=ir.Block((ir.Barrier(),)))], params=(ir.Param("n", "scalar", u32),))
    assert_barriers_uniform(run_pipeline(k, "wgsl"))
