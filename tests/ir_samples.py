"""Hand-built IR kernels for the IR text, verifier and pass tests: together they use
every node type, so these tests do not depend on the frontend."""
from __future__ import annotations

from cubepy.ir import nodes as ir
from cubepy.ir.types import LineType, bool_, f16, f32, f64, i32, u32

L = lambda line: ir.Loc("samples.py", line)  # noqa: E731


def c(value, ty=u32) -> ir.Const:
    return ir.Const(ty=ty, value=value)


def load(var: ir.Var) -> ir.Load:
    return ir.Load(ty=var.ty, var=var)


def binop(op: str, a: ir.Expr, b: ir.Expr) -> ir.Binary:
    return ir.Binary(ty=a.ty, op=op, lhs=a, rhs=b)


def cmp(op: str, a: ir.Expr, b: ir.Expr) -> ir.Compare:
    return ir.Compare(ty=bool_, op=op, lhs=a, rhs=b)


def builtin(name: str) -> ir.Builtin:
    return ir.Builtin(ty=u32, name=name)


def kernel(body, params=(), shared=(), cube_dim=(64, 1, 1), name="k") -> ir.Kernel:
    return ir.Kernel(name, tuple(params), tuple(shared), ir.Block(tuple(body)), cube_dim,
                     loc=ir.Loc("samples.py", 1))


def every_node_kernel() -> ir.Kernel:
    """A kernel using every expression and statement type at least once."""
    x = ir.Param("x", "tensor", f32)
    y = ir.Param("y", "array", f32, line_size=4)
    cnt = ir.Param("cnt", "array", u32)
    n = ir.Param("n", "scalar", u32)
    a = ir.Param("a", "scalar", f32)
    buf = ir.SharedDecl(ir.BufferRef("buf", f32, "shared"), 64, loc=L(2))
    nv, av = ir.Var("n", u32), ir.Var("a", f32)
    i, j, k, acc = ir.Var("i", u32), ir.Var("j", i32), ir.Var("k", u32), ir.Var("acc", f32)
    old, flag = ir.Var("old", u32), ir.Var("flag", bool_)
    pa, pb = ir.Var("pa", f32), ir.Var("pb", f32)
    xi = ir.Index(ty=f32, buffer=x.buffer, index=load(i))
    body = [
        ir.Comment(text='entry "quoted" \\ text', loc=L(3)),
        ir.Assign(var=i, value=builtin("absolute_pos"), declare=True, loc=L(4)),
        ir.If(cond=ir.Logical(ty=bool_, op="or",
                              lhs=cmp("ge", load(i), ir.Meta(ty=u32, kind="len",
                                                             buffer=x.buffer)),
                              rhs=cmp("ge", load(i), load(nv))),
              then=ir.Block((ir.Terminate(loc=L(6)),)), loc=L(5)),
        ir.Declare(var=acc, loc=L(7)),
        ir.Declare(var=j, loc=L(8)),
        ir.Assign(var=j, value=ir.Unary(ty=i32, op="neg", operand=c(-7, i32)), loc=L(9)),
        ir.Store(buffer=buf.buffer, index=builtin("unit_pos"), value=xi, loc=L(10)),
        ir.Barrier(loc=L(11)),
        ir.AsyncCopy(dst=buf.buffer, dst_line=builtin("unit_pos"), src=x.buffer,
                     src_line=load(i), loc=L(11)),  # one f32
        ir.AsyncCopy(dst=buf.buffer, dst_line=c(3), src=y.buffer, src_line=load(i), size=4,
                     loc=L(11)),  # a line of 4 f32
        ir.AsyncCommit(loc=L(11)),
        ir.AsyncWait(pending=1, loc=L(11)),
        ir.For(var=k, start=c(0), stop=ir.Meta(ty=u32, kind="shape", buffer=x.buffer,
                                                dim=c(0)),
               step=c(1), body=ir.Block((
                   ir.Assign(var=acc, value=binop("add", load(acc), ir.Call(
                       ty=f32, func="fma", args=(xi, c(0.5, f32), c(-1e-30, f32)))),
                       loc=L(13)),
                   ir.If(cond=cmp("eq", load(k), c(3)), then=ir.Block((ir.Break(loc=L(14)),)),
                         orelse=ir.Block((ir.Continue(loc=L(15)),)), loc=L(14)),
               )), loc=L(12)),
        ir.For(var=ir.Var("u", i32), start=c(4, i32), stop=c(0, i32), step=c(-1, i32),
               body=ir.Block((ir.Comment(text="unrolled"),)), unroll=True, loc=L(16)),
        ir.While(cond=cmp("lt", load(j), c(3, i32)), body=ir.Block((
            ir.Assign(var=j, value=binop("add", load(j), c(1, i32)), loc=L(18)),)), loc=L(17)),
        ir.Assign(var=flag, declare=True, value=ir.Unary(ty=bool_, op="not", operand=ir.Call(
            ty=bool_, func="isnan", args=(load(acc),))), loc=L(19)),
        ir.Assign(var=acc, value=ir.Select(
            ty=f32, cond=load(flag), if_true=ir.Cast(ty=f32, operand=load(j)),
            if_false=binop("max", c(float("inf"), f32), c(float("-inf"), f32))), loc=L(20)),
        ir.Assign(var=acc, value=binop("mul", load(acc), load(av)), loc=L(21)),
        ir.Assign(var=acc, value=binop("add", load(acc), ir.Extract(  # y has lines of 4
            ty=f32, value=ir.Index(ty=LineType(f32, 4), buffer=y.buffer, index=load(i)),
            index=c(2))), loc=L(21)),
        ir.Store(buffer=y.buffer, index=c(1), value=ir.MakeLine(  # a line of 4 scalars
            ty=LineType(f32, 4), elems=(load(acc), c(1.0, f32), load(acc), c(-2.5, f32))),
            loc=L(21)),
        ir.Assign(var=acc, value=ir.Plane(ty=f32, op="shuffle_down", value=load(acc),
                                          arg=c(1)), loc=L(21)),
        ir.Declare(var=old, loc=L(22)),
        ir.AtomicOp(op="add", buffer=cnt.buffer, index=c(0), value=c(1), result=old, loc=L(22)),
        ir.AtomicOp(op="compare_exchange", buffer=cnt.buffer, index=c(1), value=c(5),
                    compare=load(old), loc=L(23)),
        ir.Store(buffer=y.buffer, index=binop("shl", load(i), ir.Cast(ty=u32, operand=load(j))),
                 value=ir.Cast(ty=LineType(f32, 4),  # y has line size 4: a broadcast
                               operand=binop("pow", load(acc), c(2.0, f32))), loc=L(24)),
        ir.Store(buffer=x.buffer, index=binop("bitxor", builtin("cube_pos"), c(0xFFFFFFFF)),
                 value=ir.Cast(ty=f32, operand=ir.Cast(ty=f64, operand=c(0.1, f32))), loc=L(25)),
        ir.Store(buffer=x.buffer, index=c(2), value=ir.Bits(  # a bit function, a bitcast
            ty=f32, op="bitcast", args=(ir.Bits(ty=u32, op="popcount", args=(load(old),)),)),
            loc=L(26)),
        ir.Declare(var=pa, loc=L(27)),
        ir.Declare(var=pb, loc=L(27)),
        ir.LoadLine(buffer=x.buffer, line=load(i), parts=(pa, pb), loc=L(27)),  # a whole line
        ir.StoreLine(buffer=x.buffer, line=c(3), values=(
            load(pb), binop("add", load(pa), c(1.0, f32))), loc=L(28)),
    ]
    return kernel(body, params=(x, y, cnt, n, a), shared=(buf,), cube_dim=(16, 4, 1),
                  name="every_node")


def every_matrix_kernel() -> ir.Kernel:
    """A kernel using every cmma node: fragments (one, an array of two), fill, loads
    (A/B and an accumulator's with a layout), execute, store, cast and scale. 16x16x16 f16 x
    f16 + f32: CUDA and the cpu runtime have it."""
    a = ir.Param("a", "array", f16)
    b = ir.Param("b", "tensor", f16)
    out = ir.Param("out", "array", f32)
    half = ir.Param("half", "array", f16)
    tile = ir.SharedDecl(ir.BufferRef("tile", f16, "shared"), 256, loc=L(2))
    fa = ir.MatrixDecl("fa", "a", 16, 16, 16, "f16", "row_major", loc=L(3))
    fb = ir.MatrixDecl("fb", "b", 16, 16, 16, "f16", "col_major", count=2, loc=L(4))
    acc = ir.MatrixDecl("acc", "accumulator", 16, 16, 16, "f32", loc=L(5))
    acc16 = ir.MatrixDecl("acc16", "accumulator", 16, 16, 16, "f16", loc=L(6))
    j = ir.Var("j", u32)

    def frag(d, index=None):
        return ir.Frag(ty=d.storage, matrix=d, index=index)

    body = [
        ir.MatrixFill(frag=frag(acc), value=c(0.0, f32), loc=L(7)),
        ir.MatrixLoad(frag=frag(fa), buffer=tile.buffer, offset=c(0), stride=c(16), loc=L(8)),
        ir.For(var=j, start=c(0), stop=c(2), step=c(1), body=ir.Block((
            ir.MatrixLoad(frag=frag(fb, load(j)), buffer=b.buffer,
                          offset=binop("mul", load(j), c(256)), stride=c(16), loc=L(10)),
            ir.MatrixExecute(a=frag(fa), b=frag(fb, load(j)), c=frag(acc), d=frag(acc),
                             loc=L(11)),
        )), loc=L(9)),
        ir.MatrixLoad(frag=frag(acc16), buffer=half.buffer, offset=c(0), stride=c(16),
                      layout="col_major", loc=L(12)),
        ir.MatrixCast(src=frag(acc), dst=frag(acc16), loc=L(13)),
        ir.MatrixScale(frag=frag(acc16), value=c(0.5, f16), loc=L(13)),
        ir.MatrixStore(buffer=half.buffer, offset=c(0), frag=frag(acc16), stride=c(16),
                       layout="row_major", loc=L(14)),
        ir.MatrixStore(buffer=out.buffer, offset=builtin("cube_pos"), frag=frag(acc),
                       stride=c(16), layout="col_major", loc=L(15)),
    ]
    return ir.Kernel("every_matrix", (a, b, out, half), (tile,), ir.Block(tuple(body)),
                     (32, 1, 1), loc=L(1), matrices=(fa, fb, acc, acc16))


def every_warpgroup_kernel() -> ir.Kernel:
    """A kernel using every warpgroup node: the accumulator (fill, scale, scale_rows and
    scale_cols, store converting to f16), wg_mma with both B layouts, fence, commit and
    wait. CUDA and the cpu runtime have it."""
    out = ir.Param("out", "array", f16)
    factors = ir.Param("factors", "array", f32)
    a = ir.SharedDecl(ir.BufferRef("a_s", f16, "shared"), 64 * 32, loc=L(2))
    b = ir.SharedDecl(ir.BufferRef("b_s", f16, "shared"), 32 * 64, loc=L(3))
    acc = ir.MatrixDecl("acc", "warpgroup", 64, 64, 16, "f32", loc=L(4))
    frag = ir.Frag(ty=acc.storage, matrix=acc)
    body = [
        ir.MatrixFill(frag=frag, value=c(0.0, f32), loc=L(5)),
        ir.WarpgroupSync(op="fence", loc=L(6)),
        ir.WarpgroupMma(acc=frag, a=a.buffer, a_offset=c(0), a_rows=64, b=b.buffer,
                        b_offset=c(0), b_rows=32, b_layout="row_major", loc=L(7)),
        ir.WarpgroupMma(acc=frag, a=a.buffer, a_offset=c(1024), a_rows=64, b=b.buffer,
                        b_offset=c(512), b_rows=64, b_layout="col_major", loc=L(8)),
        ir.WarpgroupSync(op="commit", loc=L(9)),
        ir.WarpgroupSync(op="wait", pending=0, loc=L(10)),
        ir.MatrixScale(frag=frag, value=c(2.0, f32), loc=L(10)),
        ir.MatrixScaleBy(frag=frag, buffer=factors.buffer, offset=c(0), axis="rows",
                         loc=L(10)),
        ir.MatrixScaleBy(frag=frag, buffer=factors.buffer, offset=c(64), axis="cols",
                         loc=L(10)),
        ir.MatrixStore(buffer=out.buffer, offset=c(0), frag=frag, stride=c(64),
                       layout="row_major", loc=L(11)),
    ]
    return ir.Kernel("every_warpgroup", (out, factors), (a, b), ir.Block(tuple(body)),
                     (128, 1, 1), loc=L(1), matrices=(acc,))
