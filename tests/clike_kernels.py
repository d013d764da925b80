"""Hand-built IR kernels for the CUDA and Metal code generator tests.

They reach corners the corpus kernels may not (every math function, every atomic, all
casts, every builtin, loop shapes) without depending on the frontend. Each builder returns
a specialised `ir.Kernel` as the passes would hand it to a code generator.
"""
from __future__ import annotations

from cubepy.ir import nodes as n
from cubepy.ir.types import (DType, bf16, bool_, f16, f32, f64, i32, i64, u32, u64)

HERE = __file__


def marker_line(text: str) -> int:
    """The line of this file that contains `text` (for source-line comments)."""
    with open(HERE) as fh:
        for i, line in enumerate(fh, 1):
            if text in line and "marker_line(" not in line:
                return i
    raise LookupError(text)


def L(line: int) -> n.Loc:
    return n.Loc(HERE, line)


def C(v, ty: DType) -> n.Const:
    return n.Const(ty=ty, value=v)


def ld(v: n.Var) -> n.Load:
    return n.Load(ty=v.ty, var=v)


def B(op: str, a: n.Expr, b: n.Expr) -> n.Binary:
    return n.Binary(ty=a.ty, op=op, lhs=a, rhs=b)


def cmp(op: str, a: n.Expr, b: n.Expr) -> n.Compare:
    return n.Compare(ty=bool_, op=op, lhs=a, rhs=b)


def pos() -> n.Builtin:
    return n.Builtin(ty=u32, name="absolute_pos")


def idx(buf: n.BufferRef, i: n.Expr) -> n.Index:
    return n.Index(ty=buf.elem, buffer=buf, index=i)


def kernel(name, params, body, cube_dim=(64, 1, 1), shared=()) -> n.Kernel:
    return n.Kernel(name, tuple(params), tuple(shared), n.Block(tuple(body)), cube_dim)


def seed(F: DType) -> n.Kernel:
    """The seed matmul + add + relu, as the frontend builds it."""
    bufs = {nm: n.BufferRef(nm, F, "global") for nm in ("lhs", "rhs", "bias", "output")}
    V = lambda nm, ty=u32: n.Var(nm, ty)  # noqa: E731
    row, col, batch, n_rows, n_cols, dim_k = map(V, ("row", "col", "batch", "n_rows",
                                                       "n_cols", "dim_k"))
    ol, orr, oo, bd, dim, k, index = map(V, ("offset_lhs", "offset_rhs", "offset_output",
                                             "batch_dims", "dim", "k", "index"))
    s = V("sum", F)

    def meta(kind, b, d=None):
        return n.Meta(ty=u32, kind=kind, buffer=bufs[b], dim=d)

    def rank_minus(b, v):
        return meta("shape", b, B("sub", meta("rank", b), C(v, u32)))

    def offset(var, other):
        q = B("mod", B("floordiv", ld(oo), meta("stride", "output", ld(dim))),
              meta("shape", other, ld(dim)))
        return n.Assign(var=var, value=B("add", ld(var), B("mul", q, meta("stride", other,
                                                                          ld(dim)))))
    # sum += lhs[offset_lhs + row * dim_k + k] * rhs[offset_rhs + k * n_cols + col]
    line = marker_line("# sum += lhs[")
    body = [
        n.Assign(var=row, value=n.Builtin(ty=u32, name="absolute_pos_x"), declare=True),
        n.Assign(var=col, value=n.Builtin(ty=u32, name="absolute_pos_y"), declare=True),
        n.Assign(var=batch, value=n.Builtin(ty=u32, name="absolute_pos_z"), declare=True),
        n.Assign(var=n_rows, value=rank_minus("output", 2), declare=True),
        n.Assign(var=n_cols, value=rank_minus("output", 1), declare=True),
        n.Assign(var=dim_k, value=rank_minus("rhs", 1), declare=True),
        n.If(cond=n.Logical(ty=bool_, op="or", lhs=cmp("ge", ld(row), ld(n_rows)),
                            rhs=cmp("ge", ld(col), ld(n_cols))),
             then=n.Block((n.Terminate(),))),
        n.Assign(var=oo, value=B("mul", B("mul", ld(batch), ld(n_rows)), ld(n_cols)),
                 declare=True),
        n.Assign(var=ol, value=C(0, u32), declare=True),
        n.Assign(var=orr, value=C(0, u32), declare=True),
        n.Assign(var=bd, value=B("sub", meta("rank", "output"), C(2, u32)), declare=True),
        n.For(var=dim, start=C(0, u32), stop=ld(bd), step=C(1, u32),
              body=n.Block((offset(ol, "lhs"), offset(orr, "rhs")))),
        n.Assign(var=s, value=C(0.0, F), declare=True),
        n.For(var=k, start=C(0, u32), stop=ld(dim_k), step=C(1, u32), body=n.Block((
            n.Assign(var=s, loc=L(line), value=B("add", ld(s), B(
                "mul",
                idx(bufs["lhs"], B("add", B("add", ld(ol), B("mul", ld(row), ld(dim_k))),
                                   ld(k))),
                idx(bufs["rhs"], B("add", B("add", ld(orr), B("mul", ld(k), ld(n_cols))),
                                   ld(col)))))),))),
        n.Assign(var=index, value=B("add", B("add", ld(oo), B("mul", ld(row), ld(n_cols))),
                                    ld(col)), declare=True),
        n.Store(buffer=bufs["output"], index=ld(index),
                value=B("max", B("add", ld(s), idx(bufs["bias"], ld(index))), C(0.0, F))),
    ]
    params = [n.Param(nm, "tensor", F) for nm in ("lhs", "rhs", "bias", "output")]
    return kernel("fused_matmul_add_relu_kernel", params, body, cube_dim=(16, 16, 1))


def all_math(F: DType) -> n.Kernel:
    """out[i] = sum of every math intrinsic, max/min/abs/floordiv/mod/pow of x[i]."""
    x, out = n.BufferRef("x", F, "global"), n.BufferRef("out", F, "global")
    flags = n.BufferRef("flags", bool_, "global")
    v, acc = n.Var("v", F), n.Var("acc", F)
    body = [n.Assign(var=v, value=idx(x, pos()), declare=True),
            n.Assign(var=acc, value=C(0.5, F), declare=True)]
    for func, arity in n.MATH_FUNCS.items():
        if func in ("isnan", "isinf", "isfinite", "frexp_exp", "ldexp"):  # not F -> F
            continue
        call = n.Call(ty=F, func=func, args=tuple(ld(v) for _ in range(arity)))
        body.append(n.Assign(var=acc, value=B("add", ld(acc), call)))
    for op in ("max", "min", "floordiv", "mod", "pow", "div"):
        body.append(n.Assign(var=acc, value=B("add", ld(acc), B(op, ld(acc), ld(v)))))
    body.append(n.Assign(var=acc, value=n.Unary(ty=F, op="neg",
                                                operand=n.Unary(ty=F, op="abs",
                                                                operand=ld(acc)))))
    body.append(n.Assign(var=acc, value=B("sub", ld(acc), n.Unary(ty=F, op="neg",
                                                                  operand=ld(v)))))
    body.append(n.Store(buffer=out, index=pos(), value=ld(acc)))
    isn = n.Logical(ty=bool_, op="or", lhs=n.Call(ty=bool_, func="isnan", args=(ld(v),)),
                    rhs=n.Call(ty=bool_, func="isinf", args=(ld(acc),)))
    body.append(n.Store(buffer=flags, index=pos(), value=isn))
    for special in (float("inf"), float("-inf"), float("nan"), -0.0, 1e-5):
        body.append(n.Store(buffer=out, index=C(0, u32), value=C(special, F)))
    params = [n.Param("x", "array", F), n.Param("out", "array", F),
              n.Param("flags", "array", bool_)]
    return kernel(f"all_math_{F.name}", params, body)


def int_ops(T: DType, targets=(f16, bf16, f32, f64, i32, i64, u32, u64, bool_)) -> n.Kernel:
    """Integer arithmetic: floor division/modulo by variables and constants, shifts, bit
    operators, pow, min/max/abs, negation, and casts to every other type."""
    a, b = n.BufferRef("a", T, "global"), n.BufferRef("b", T, "global")
    out = n.BufferRef("out", T, "global")
    x, y, r = n.Var("x", T), n.Var("y", T), n.Var("r", T)
    body = [n.Assign(var=x, value=idx(a, pos()), declare=True),
            n.Assign(var=y, value=idx(b, pos()), declare=True),
            n.Declare(var=r)]
    consts = [3, 7] + ([-2, -1] if T.is_signed else [])
    for op in ("floordiv", "mod"):
        body.append(n.Assign(var=r, value=B("add", ld(r), B(op, ld(x), ld(y)))))
        for c in consts:
            body.append(n.Assign(var=r, value=B("add", ld(r), B(op, ld(x), C(c, T)))))
    for op in ("bitand", "bitor", "bitxor", "shl", "shr", "max", "min", "pow", "mul", "sub"):
        body.append(n.Assign(var=r, value=B(op, ld(r), ld(y))))
    body.append(n.Assign(var=r, value=B("shl", ld(r), C(33, T))))
    body.append(n.Assign(var=r, value=n.Binary(ty=T, op="shr", lhs=ld(r),
                                               rhs=C(3, u32 if T is not u32 else i32))))
    body.append(n.Assign(var=r, value=n.Unary(ty=T, op="bitnot",
                                              operand=n.Unary(ty=T, op="neg", operand=ld(r)))))
    body.append(n.Assign(var=r, value=n.Unary(ty=T, op="abs", operand=ld(r))))
    min_value = -(2 ** (T.bits - 1)) if T.is_signed else 2 ** T.bits - 1
    body.append(n.Assign(var=r, value=B("add", ld(r), C(min_value, T))))
    for other in targets:
        if other is T:
            continue
        there = n.Var(f"as_{other.name}", other)
        body.append(n.Assign(var=there, value=n.Cast(ty=other, operand=ld(r)), declare=True))
        body.append(n.Assign(var=r, value=B("add", ld(r), n.Cast(ty=T, operand=ld(there)))))
    body.append(n.Store(buffer=out, index=ld(x), value=ld(r)))  # a signed index for i32
    params = [n.Param("a", "array", T), n.Param("b", "array", T),
              n.Param("out", "array", T)]
    return kernel(f"int_ops_{T.name}", params, body)


def float_casts(F: DType, targets=(f16, bf16, f32, f64, i32, i64, u32, u64, bool_)) -> n.Kernel:
    x, out = n.BufferRef("x", F, "global"), n.BufferRef("out", F, "global")
    v, r = n.Var("v", F), n.Var("r", F)
    body = [n.Assign(var=v, value=idx(x, pos()), declare=True),
            n.Assign(var=r, value=ld(v), declare=True)]
    for other in targets:
        if other is F:
            continue
        there = n.Var(f"as_{other.name}", other)
        body.append(n.Assign(var=there, value=n.Cast(ty=other, operand=ld(v)), declare=True))
        body.append(n.Assign(var=r, value=B("add", ld(r), n.Cast(ty=F, operand=ld(there)))))
    body.append(n.Store(buffer=out, index=pos(), value=ld(r)))
    return kernel(f"float_casts_{F.name}", [n.Param("x", "array", F),
                                            n.Param("out", "array", F)], body)


def atomics(T: DType, ops=n.ATOMIC_OPS) -> n.Kernel:
    """Every atomic on a global buffer of T (results used), one on shared memory, plain
    reads and writes of the atomically used buffer."""
    buf = n.BufferRef("counts", T, "global")
    sh = n.BufferRef("local_counts", T, "shared")
    acc = n.Var("acc", T)
    body = [n.Declare(var=acc)]
    for op in ops:
        if T is f32 and op in ("and", "or", "xor"):
            continue
        if op in ("inc", "dec") and T is not u32:  # CUDA's wrapping ops: u32 only
            continue
        if op == "store":  # gives no value
            body.append(n.AtomicOp(op=op, buffer=buf, index=C(3, u32), value=ld(acc)))
            continue
        old = n.Var(f"old_{op}", T)
        body.append(n.Declare(var=old))
        body.append(n.AtomicOp(op=op, buffer=buf, index=B("mod", pos(), C(16, u32)),
                               value=None if op == "load" else C(1, T), result=old,
                               compare=C(0, T) if op == "compare_exchange" else None))
        body.append(n.Assign(var=acc, value=B("add", ld(acc), ld(old))))
    body.append(n.AtomicOp(op="add", buffer=buf, index=C(0, u32), value=ld(acc)))
    body.append(n.AtomicOp(op="add", buffer=sh, index=n.Builtin(ty=u32, name="unit_pos"),
                           value=C(1, T)))
    body.append(n.Barrier())
    body.append(n.Store(buffer=buf, index=C(1, u32), value=B("add", idx(buf, C(2, u32)),
                                                            idx(sh, C(3, u32)))))
    shared = [n.SharedDecl(sh, 64)]
    return kernel(f"atomics_{T.name}", [n.Param("counts", "array", T)], body, shared=shared)


def builtins_and_flow() -> n.Kernel:
    """Every position builtin; while/break/continue, for loops with negative, runtime and
    changing bounds, elif chains, select, short-circuit logic, scalar parameters."""
    out = n.BufferRef("out", u32, "global")
    data = n.BufferRef("data", i32, "global")
    step, flag, scale = n.Var("step", i32), n.Var("flag", bool_), n.Var("scale", f32)
    acc, j, k, m, total = (n.Var("acc", u32), n.Var("j", i32), n.Var("k", i32),
                           n.Var("m", i32), n.Var("total", i32))
    body = [n.Declare(var=acc)]
    for name in n.BUILTINS:
        body.append(n.Assign(var=acc, value=B("add", ld(acc), n.Builtin(ty=u32, name=name))))
    body += [
        n.Assign(var=total, value=C(0, i32), declare=True),
        n.Assign(var=j, value=C(0, i32), declare=True),
        n.While(cond=C(True, bool_), body=n.Block((
            n.Assign(var=j, value=B("add", ld(j), C(1, i32))),
            n.If(cond=cmp("gt", ld(j), C(10, i32)), then=n.Block((n.Break(),))),
            n.If(cond=n.Logical(ty=bool_, op="and",
                                lhs=cmp("eq", B("mod", ld(j), C(2, i32)), C(0, i32)),
                                rhs=cmp("gt", idx(data, ld(j)), C(0, i32))),
                 then=n.Block((n.Continue(),))),
            n.Assign(var=total, value=B("add", ld(total), ld(j))),
        ))),
        n.For(var=k, start=C(10, i32), stop=C(0, i32), step=C(-3, i32), body=n.Block((
            n.Assign(var=total, value=B("sub", ld(total), ld(k))),))),
        n.For(var=m, start=C(0, i32), stop=ld(total), step=ld(step), body=n.Block((
            n.Assign(var=total, value=B("sub", ld(total), C(1, i32))),))),
        n.If(cond=ld(flag), then=n.Block((n.Assign(var=total, value=C(1, i32)),)),
             orelse=n.Block((n.If(cond=cmp("lt", ld(scale), C(0.0, f32)),
                                  then=n.Block((n.Assign(var=total, value=C(2, i32)),)),
                                  orelse=n.Block((n.Assign(var=total, value=C(3, i32)),))),))),
        n.Assign(var=step, value=B("add", ld(step), C(1, i32))),
        n.Store(buffer=out, index=pos(), value=n.Select(
            ty=u32, cond=n.Logical(ty=bool_, op="or", lhs=cmp("gt", ld(total), C(0, i32)),
                                   rhs=n.Logical(ty=bool_, op="and", lhs=ld(flag),
                                                 rhs=n.Unary(ty=bool_, op="not",
                                                             operand=ld(flag)))),
            if_true=ld(acc), if_false=n.Cast(ty=u32, operand=ld(total)))),
    ]
    params = [n.Param("out", "array", u32), n.Param("data", "array", i32),
              n.Param("step", "scalar", i32), n.Param("flag", "scalar", bool_),
              n.Param("scale", "scalar", f32)]
    return kernel("builtins_and_flow", params, body, cube_dim=(8, 4, 2))


def user_names() -> n.Kernel:
    """Locals named like C/MSL keywords and library functions."""
    out = n.BufferRef("kernel", f32, "global")
    names = ["float", "expf", "exp", "threadIdx", "device", "half", "__x", "ulong",
             "info", "fmaxf", "sum", "cube_info_t"]
    vs = [n.Var(nm, f32) for nm in names]
    body = [n.Assign(var=v, value=C(float(i), f32), declare=True) for i, v in enumerate(vs)]
    total = ld(vs[0])
    for v in vs[1:]:
        total = B("add", total, ld(v))
    body.append(n.Store(buffer=out, index=pos(),
                        value=B("max", n.Call(ty=f32, func="exp", args=(total,)), total)))
    return kernel("kernel", [n.Param("kernel", "array", f32)], body)


def cuda_cases() -> dict[str, n.Kernel]:
    cases = {f"seed_{F.name}": seed(F) for F in (f32, f16, bf16, f64)}
    cases.update({f"math_{F.name}": all_math(F) for F in (f32, f16, bf16, f64)})
    cases.update({f"int_{T.name}": int_ops(T) for T in (i32, u32, i64, u64)})
    cases.update({f"casts_{F.name}": float_casts(F) for F in (f32, f16, bf16, f64)})
    cases.update({f"atomics_{T.name}": atomics(T) for T in (i32, u32, f32, i64, u64)})
    cases["flow"] = builtins_and_flow()
    cases["names"] = user_names()
    return cases


def metal_cases() -> dict[str, n.Kernel]:
    no64 = (f16, bf16, f32, i32, i64, u32, u64, bool_)
    cases = {f"seed_{F.name}": seed(F) for F in (f32, f16, bf16)}
    cases.update({f"math_{F.name}": all_math(F) for F in (f32, f16, bf16)})
    cases.update({f"casts_{F.name}": float_casts(F, no64) for F in (f32, f16, bf16)})
    cases.update({f"int_{T.name}": int_ops(T, no64) for T in (i32, u32, i64, u64)})
    cases.update({f"atomics_{T.name}": atomics(T) for T in (i32, u32, f32)})
    cases["flow"] = builtins_and_flow()
    cases["names"] = user_names()
    return cases


def compile_all(sources: dict[str, str], suffix: str, command, workdir: str,
                header_lines: tuple[str, ...] = (), rename=None,
                chunks: int = 2) -> dict[str, tuple[int, str]]:
    """Compiles every source; returns id -> (return code, compiler output).

    Compiler start-up dominates, so sources are bundled into `chunks` translation units
    (each source in its own namespace; lines starting with one of `header_lines` hoisted
    to the top; `rename(text, i)` makes extern "C" names unique). A bundle that fails or
    warns is compiled source by source, so every failure is reported against its case.
    """
    import concurrent.futures
    import os
    import re
    import subprocess

    def run(name: str, text: str) -> tuple[int, str]:
        path = os.path.join(workdir, re.sub(r"[^\w.-]", "_", name) + suffix)
        with open(path, "w") as fh:
            fh.write(text)
        r = subprocess.run(command(path), capture_output=True, text=True, timeout=300)
        return r.returncode, r.stdout + r.stderr

    def bundle(keys: list[str]) -> str:
        head, parts = [], []
        for i, key in enumerate(keys):
            body = []
            for line in sources[key].splitlines():
                if line.startswith(header_lines):
                    if line not in head:
                        head.append(line)
                else:
                    body.append(line)
            text = "\n".join(body)
            if rename is not None:
                text = rename(text, i)
            parts.append(f"namespace cube_case_{i} {{\n{text}\n}}")
        return "\n".join(head + parts) + "\n"

    keys = list(sources)
    groups = [keys[i::chunks] for i in range(chunks) if keys[i::chunks]]
    results: dict[str, tuple[int, str]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=chunks) as pool:
        bundled = list(pool.map(lambda g: run(f"bundle_{groups.index(g)}", bundle(g)),
                                groups))
        retry = []
        for group, (rc, output) in zip(groups, bundled):
            if rc == 0 and "warning" not in output.lower():
                results.update({key: (rc, output) for key in group})
            else:
                retry.extend(group)
        for key, result in zip(retry, pool.map(lambda k: run(k, sources[k]), retry)):
            results[key] = result
    return results


def corpus_sources(target: str) -> dict[str, str]:
    """Generated source of every corpus kernel listing `target`, keyed by case id."""
    import corpus
    out = {}
    for cid, k, dim, spec, targets in corpus.SOURCE_CASES:
        if target in targets:
            out[cid] = k.source(target, cube_dim=dim, **spec)
    return out
