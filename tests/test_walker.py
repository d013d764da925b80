"""codegen/walker.py: the statement walker the CUDA, Metal, WGSL and numpy generators
share. A toy walker pins the shared statement forms; the generators' own output is pinned
by the corpus source dump and the codegen tests."""
from __future__ import annotations

import pytest

import clike_kernels as ck
import cubepy
from cubepy.abi import compute_abi
from cubepy.codegen.clike import CEmitter
from cubepy.codegen.cuda import CudaDialect
from cubepy.codegen.numpy_gen import _Gen
from cubepy.codegen.walker import BracedWalker, StatementWalker
from cubepy.codegen.wgsl import _WgslEmitter
from cubepy.ir import nodes as n
from cubepy.ir.types import bool_

HERE = n.Loc(__file__, 1)  # line 1 of this file: the module docstring's first line
FLAG = n.Load(ty=bool_, var=n.Var("flag", bool_))


class _Toy(BracedWalker):
    """Conditions are the variable's name; every other statement a marker line."""

    def condition(self, e: n.Expr) -> str:
        return e.var.name

    def stmt_barrier(self, s: n.Barrier) -> None:
        self.line("barrier;")


def _walk(*stmts: n.Stmt) -> list[str]:
    toy = _Toy()
    toy.walk(n.Block(stmts))
    return toy.lines


def test_if_elif_else_chain_is_flattened():
    inner = n.If(cond=FLAG, then=n.Block((n.Break(),)), orelse=n.Block((n.Continue(),)))
    lines = _walk(n.If(cond=FLAG, then=n.Block((n.Terminate(),)),
                       orelse=n.Block((inner,))))
    assert lines == ["    if (flag) {", "        return;", "    } else if (flag) {",
                     "        break;", "    } else {", "        continue;", "    }"]


def test_if_without_else_and_while_nest_one_level_each():
    loop = n.While(cond=FLAG, body=n.Block((n.If(cond=FLAG, then=n.Block((n.Break(),))),
                                            n.Barrier())))
    assert _walk(loop) == ["    while (flag) {", "        if (flag) {", "            break;",
                           "        }", "        barrier;", "    }"]


def test_source_comment_once_per_python_line_and_ir_comments_escaped():
    lines = _walk(n.Barrier(loc=HERE), n.Barrier(loc=HERE),
                  n.Comment(text="inlined */ here\nsecond", loc=HERE),
                  n.Barrier(loc=n.Loc(__file__, 0)))
    first = open(__file__).readline().strip()
    assert lines[0].startswith("    // 1: ") and first[:20] in lines[0]
    assert lines[1:3] == ["    barrier;", "    barrier;"]
    assert lines[3].startswith("    // inlined") and "*/" not in lines[3]
    assert lines[4:] == ["    // second", "    barrier;"]


def test_a_statement_kind_without_a_hook_is_a_compile_error():
    with pytest.raises(cubepy.CompileError, match="does not support Declare statements"):
        _walk(n.Declare(var=n.Var("x", bool_), loc=HERE))


def test_the_plain_walker_writes_no_comments_of_its_own():
    class Lines(StatementWalker):
        def stmt_barrier(self, s):
            self.line("sync")
    w = Lines(depth=2)
    w.nested(n.Block((n.Barrier(loc=HERE),)))
    assert w.lines == ["            sync"] and w.depth == 2


def test_every_generator_walks_with_the_shared_walker():
    k = ck.kernel("k", [], [])
    abi = compute_abi(k, True)
    assert isinstance(CEmitter(k, abi, True, CudaDialect()), BracedWalker)
    assert isinstance(_WgslEmitter(k, abi, True), BracedWalker)
    assert isinstance(_Gen(k, abi), StatementWalker)


def test_numpy_blocks_of_comments_only_get_a_pass():
    gen = _Gen(ck.kernel("k", [], []), compute_abi(ck.kernel("k", [], []), True))
    gen.walk(n.Block((n.Comment(text="only this"),)))
    assert gen.lines == ["    pass", "    # only this"]
    with pytest.raises(NotImplementedError, match="unsupported statement"):
        gen.stmt(_Unknown())


class _Unknown(n.Stmt):
    """A statement kind no generator knows."""
