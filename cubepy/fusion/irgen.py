"""Builds the IR of fused kernels directly (no Python text): an element-wise kernel
writing one or more outputs, a reduction with its producers fused into the read and its
consumers into the write, and a tiled matmul with the same fusion on both ends.

Indices are u32 expressions per dimension (`Idx`); shapes and strides are compile-time
constants of the kernel (a kernel is specialised on them, so index arithmetic folds), and
an index that is the kernel's own flat position keeps it (`flat`), so a contiguous read
of the output's shape is `x[i]` without any division.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

from ..ir import nodes as n
from ..ir.types import FP8_DTYPES, DType, bf16, bool_, f16, f32, u32
from .graph import Leaf, Map, MatMul, Node, Reduce, Scalar, View

UNITS = 256  # units per cube of element-wise and reduction kernels
TILE = 16  # matmul tile (cube dim TILE x TILE)


def _c(value: int) -> n.Expr:
    return n.Const(ty=u32, value=int(value))


def _add(a: n.Expr, b: n.Expr) -> n.Expr:
    if isinstance(a, n.Const) and a.value == 0:
        return b
    if isinstance(b, n.Const) and b.value == 0:
        return a
    return n.Binary(ty=u32, op="add", lhs=a, rhs=b)


def _mul(a: n.Expr, k: int) -> n.Expr:
    if k == 0:
        return _c(0)
    if k == 1:
        return a
    if isinstance(a, n.Const):
        return _c(a.value * k)
    return n.Binary(ty=u32, op="mul", lhs=a, rhs=_c(k))


def _div(a: n.Expr, k: int) -> n.Expr:
    return a if k == 1 else n.Binary(ty=u32, op="floordiv", lhs=a, rhs=_c(k))


def _mod(a: n.Expr, k: int) -> n.Expr:
    return _c(0) if k == 1 else n.Binary(ty=u32, op="mod", lhs=a, rhs=_c(k))


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


def linearize(idx: tuple[n.Expr, ...], strides: tuple[int, ...]) -> n.Expr:
    out: n.Expr = _c(0)
    for e, s in zip(idx, strides):
        out = _add(out, _mul(e, s))
    return out


def delinearize(flat: n.Expr, shape: tuple[int, ...]) -> tuple[n.Expr, ...]:
    strides = contiguous_strides(shape)
    idx = []
    for d, (size, stride) in enumerate(zip(shape, strides)):
        if size == 1:
            idx.append(_c(0))
            continue
        e = _div(flat, stride)
        idx.append(e if d == 0 else _mod(e, size))
    return tuple(idx)


@dataclass(frozen=True)
class Idx:
    """A position in a tensor of `shape`: one u32 expression per dim, and the flat
    row-major position when it is known without arithmetic."""

    dims: tuple[n.Expr, ...]
    shape: tuple[int, ...]
    flat: Optional[n.Expr] = None

    @classmethod
    def of_flat(cls, flat: n.Expr, shape: tuple[int, ...]) -> "Idx":
        return cls(delinearize(flat, shape), shape, flat)

    def flat_index(self) -> n.Expr:
        return self.flat if self.flat is not None else \
            linearize(self.dims, contiguous_strides(self.shape))

    def broadcast_to(self, shape: tuple[int, ...]) -> "Idx":
        """The position in an operand of `shape` that numpy broadcasting reads."""
        if shape == self.shape:
            return self
        lead = len(self.shape) - len(shape)
        dims = tuple(_c(0) if size == 1 else self.dims[lead + j]
                     for j, size in enumerate(shape))
        return Idx(dims, shape)


class KernelBuilder:
    """Collects statements, buffers and locals of one kernel."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.params: list[n.Param] = []
        self.shared: list[n.SharedDecl] = []
        self._blocks: list[list[n.Stmt]] = [[]]
        self._memo: list[dict] = [{}]
        self._buffers: dict[int, n.BufferRef] = {}  # id(node) -> its input buffer
        self.inputs: list[tuple[str, Node]] = []  # (param name, node) in param order
        self.bound: dict[int, n.Expr] = {}  # id(node) -> its value in this kernel
        self.fused_ops: list[str] = []
        self._counter = 0

    # -- names, statements ------------------------------------------------------------
    def fresh(self, stem: str, ty: DType) -> n.Var:
        self._counter += 1
        return n.Var(f"{stem}{self._counter}", ty)

    def emit(self, stmt: n.Stmt) -> None:
        self._blocks[-1].append(stmt)

    def let(self, stem: str, value: n.Expr) -> n.Expr:
        """Binds `value` to a new local; returns the read of it."""
        if isinstance(value, (n.Const, n.Load, n.Builtin)):
            return value
        var = self.fresh(stem, value.ty)
        self.emit(n.Assign(var=var, value=value, declare=True))
        return n.Load(ty=var.ty, var=var)

    @contextmanager
    def block(self):
        """A nested region; yields the list its statements go to."""
        self._blocks.append([])
        self._memo.append(dict(self._memo[-1]))
        try:
            yield self._blocks[-1]
        finally:
            self._blocks.pop()
            self._memo.pop()

    def if_(self, cond: n.Expr, then: list[n.Stmt], orelse: list[n.Stmt] = ()) -> None:
        self.emit(n.If(cond=cond, then=n.Block(tuple(then)), orelse=n.Block(tuple(orelse))))

    def add_param(self, name: str, dtype: DType, kind: str = "array") -> n.BufferRef:
        self.params.append(n.Param(name, kind, dtype))
        return n.BufferRef(name, dtype, "global")

    def add_shared(self, dtype: DType, size: int) -> n.BufferRef:
        ref = n.BufferRef(f"tile{len(self.shared)}", dtype, "shared")
        self.shared.append(n.SharedDecl(ref, size))
        return ref

    def build(self, cube_dim: tuple[int, int, int]) -> n.Kernel:
        return n.Kernel(self.name, tuple(self.params), tuple(self.shared),
                        n.Block(tuple(self._blocks[0])), cube_dim)

    # -- values ------------------------------------------------------------------------
    def buffer_of(self, node: Node) -> n.BufferRef:
        ref = self._buffers.get(id(node))
        if ref is None:
            name = f"in{len(self.inputs)}"
            ref = self.add_param(name, node.dtype)
            self._buffers[id(node)] = ref
            self.inputs.append((name, node))
        return ref

    def value(self, node: Node, at: Idx, materialized: dict) -> n.Expr:
        """The IR expression of `node` at position `at` (a tensor of node.shape)."""
        bound = self.bound.get(id(node))
        if bound is not None:
            return bound
        if isinstance(node, Scalar):
            return n.Const(ty=node.dtype, value=node.value)
        tensor = materialized.get(id(node))
        if tensor is not None or isinstance(node, Leaf):
            return self._read(node, tensor if tensor is not None else node.tensor, at)
        key = (id(node), at.dims)
        memo = self._memo[-1]
        if key in memo:
            return memo[key]
        if isinstance(node, View):
            out = self.value(node.src, _view_index(node, at), materialized)
        elif isinstance(node, Map):
            out = self._map(node, at, materialized)
        else:
            raise AssertionError(f"{type(node).__name__} must be computed before it is read")
        if isinstance(node, Map):
            out = self.let("v", out)
        memo[key] = out
        return out

    def _read(self, node: Node, tensor, at: Idx) -> n.Expr:
        buffer = self.buffer_of(node)
        strides = tuple(tensor.strides)
        if at.flat is not None and strides == contiguous_strides(tuple(tensor.shape)) \
                and tuple(tensor.shape) == at.shape:
            offset = at.flat
        else:
            offset = linearize(at.dims, strides)
        return n.Index(ty=node.dtype, buffer=buffer, index=offset)

    def _map(self, node: Map, at: Idx, materialized: dict) -> n.Expr:
        args = [self.value(a, at.broadcast_to(a.shape), materialized) for a in node.args]
        self.fused_ops.append(node.op)
        ty = node.dtype
        fp8 = ty in FP8_DTYPES or any(a.ty in FP8_DTYPES for a in args)
        if fp8 and node.kind in _COMPUTED:
            # 8-bit floats are storage types: compute in f32, round the result once
            wide = [n.Cast(ty=f32, operand=a) if a.ty in FP8_DTYPES else a for a in args]
            out = self._op(node, wide, f32 if ty in FP8_DTYPES else ty)
            return n.Cast(ty=ty, operand=out) if ty in FP8_DTYPES else out
        return self._op(node, args, ty)

    @staticmethod
    def _op(node: Map, args: list[n.Expr], ty: DType) -> n.Expr:
        """The expression of `node` on `args`, of type `ty`."""
        if node.kind == "binary":
            if node.op == "pow":
                return _pow(ty, args[0], args[1], node.args[1])
            return n.Binary(ty=ty, op=node.op, lhs=args[0], rhs=args[1])
        if node.kind == "compare":
            return n.Compare(ty=bool_, op=node.op, lhs=args[0], rhs=args[1])
        if node.kind == "logical":
            return n.Logical(ty=bool_, op=node.op, lhs=args[0], rhs=args[1])
        if node.kind == "unary":
            return n.Unary(ty=ty, op=node.op, operand=args[0])
        if node.kind == "math":
            return n.Call(ty=ty, func=node.op, args=tuple(args))
        if node.kind == "where":
            return n.Select(ty=ty, cond=args[0], if_true=args[1], if_false=args[2])
        if node.kind == "cast":
            return n.Cast(ty=ty, operand=args[0])
        raise AssertionError(node.kind)


_COMPUTED = ("binary", "compare", "unary", "math")  # the kinds that compute on values


def _pow(ty: DType, base: n.Expr, exp: n.Expr, exp_node: Node) -> n.Expr:
    if ty.is_float:
        return n.Call(ty=ty, func="pow", args=(base, exp))
    if isinstance(exp_node, Scalar) and 0 <= exp_node.value <= 64:
        out: n.Expr = n.Const(ty=ty, value=1)
        for _ in range(int(exp_node.value)):
            out = n.Binary(ty=ty, op="mul", lhs=out, rhs=base)
        return out
    raise TypeError("integer ** needs a constant exponent from 0 to 64")


def _view_index(view: View, at: Idx) -> Idx:
    src = view.src
    if view.kind == "permute":
        dims = [None] * len(src.shape)
        for d, a in enumerate(view.axes):
            dims[a] = at.dims[d]
        return Idx(tuple(dims), src.shape)
    if view.kind == "slice":
        dims = tuple(_add(_c(start), _mul(e, step))
                     for e, start, step in zip(at.dims, view.starts, view.steps))
        return Idx(dims, src.shape)
    if view.kind == "broadcast":
        return at.broadcast_to(src.shape)
    if view.kind == "reshape":
        return Idx.of_flat(at.flat_index(), src.shape) if at.flat is None else \
            Idx.of_flat(at.flat, src.shape)
    raise AssertionError(view.kind)


def accumulator_type(dtype: DType) -> DType:
    """Halves accumulate in f32 (as cuBLAS and Triton do)."""
    return f32 if dtype in (f16, bf16) or dtype in FP8_DTYPES else dtype


# ----------------------------------------------------------------------------- kernels

def elementwise_kernel(name: str, outputs: list[Node], materialized: dict,
                       per_unit: int) -> tuple[KernelBuilder, n.Kernel, int]:
    """One unit per `per_unit` consecutive elements of the common output shape; each
    output gets its own buffer. Returns (builder, kernel, number of units)."""
    kb = KernelBuilder(name)
    shape = outputs[0].shape
    total = math.prod(shape)
    out_refs = [kb.add_param(f"out{k}", o.dtype) for k, o in enumerate(outputs)]
    units = -(-total // per_unit)
    base = kb.let("base", _mul(n.Builtin(ty=u32, name="absolute_pos"), per_unit))
    for k in range(per_unit):
        flat = kb.let("i", _add(base, _c(k))) if per_unit > 1 else base
        at = Idx.of_flat(flat, shape)
        guard = total % (per_unit * UNITS) != 0 or units % UNITS != 0
        with kb.block() as body:
            for ref, out in zip(out_refs, outputs):
                kb.emit(n.Store(buffer=ref, index=flat, value=kb.value(out, at, materialized)))
        if guard:
            kb.if_(n.Compare(ty=bool_, op="lt", lhs=flat, rhs=_c(total)), body)
        else:
            for stmt in body:
                kb.emit(stmt)
    return kb, kb.build((UNITS, 1, 1)), units


_INIT = {"sum": lambda t: 0, "prod": lambda t: 1,
         "max": lambda t: -math.inf if t.is_float else _int_limit(t, low=True),
         "min": lambda t: math.inf if t.is_float else _int_limit(t, low=False)}
_COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


def _int_limit(t: DType, low: bool) -> int:
    if t.kind == "uint":
        return 0 if low else 2 ** t.bits - 1
    return -2 ** (t.bits - 1) if low else 2 ** (t.bits - 1) - 1


def reduction_units(length: int) -> int:
    return min(UNITS, max(32, 1 << max(0, length - 1).bit_length()))


def reduce_kernel(name: str, node: Reduce, epilogue: Optional[Node], materialized: dict,
                  split: int = 1, binds: tuple[Node, ...] = ()
                  ) -> tuple[KernelBuilder, n.Kernel, int]:
    """A cube per output element: its units stride over the reduced elements (the
    producer expression evaluated in the read), combine through shared memory, and
    unit 0 writes `epilogue` (the reduction's consumers) at that element.

    With `split` > 1 (few outputs, long reductions) `split` cubes share each output, each
    reducing one chunk, and write their partial results (in the accumulator's type, no
    epilogue) at `output * split + chunk`; a second reduction combines them. `binds`
    are nodes that stand for this reduction's result in the epilogue (the reduction the
    partials came from). Returns (builder, kernel, number of cubes)."""
    kb = KernelBuilder(name)
    src = node.src
    kept = tuple(d for d in range(len(src.shape)) if d not in node.axes)
    kept_shape = tuple(src.shape[d] for d in kept)
    red_shape = tuple(src.shape[d] for d in node.axes)
    length = math.prod(red_shape)
    chunk = -(-length // split)
    units = reduction_units(chunk)
    acc_t = accumulator_type(node.dtype)
    out_ref = kb.add_param("out0", acc_t if split > 1 else epilogue.dtype)
    cube = n.Builtin(ty=u32, name="cube_pos")
    u = n.Builtin(ty=u32, name="unit_pos_x")
    o = kb.let("o", _div(cube, split)) if split > 1 else cube
    acc = kb.fresh("acc", acc_t)
    kb.emit(n.Assign(var=acc, value=n.Const(ty=acc_t, value=_INIT[node.op](acc_t)),
                     declare=True))
    kept_idx = delinearize(o, kept_shape)
    r = kb.fresh("r", u32)
    with kb.block() as body:
        red_idx = delinearize(n.Load(ty=u32, var=r), red_shape)
        dims = [None] * len(src.shape)
        for d, e in zip(kept, kept_idx):
            dims[d] = e
        for d, e in zip(node.axes, red_idx):
            dims[d] = e
        v = kb.value(src, Idx(tuple(dims), src.shape), materialized)
        if v.ty is not acc_t:
            v = n.Cast(ty=acc_t, operand=v)
        kb.emit(n.Assign(var=acc, value=n.Binary(ty=acc_t, op=_COMBINE[node.op],
                                                 lhs=n.Load(ty=acc_t, var=acc), rhs=v)))
    if split > 1:
        start = kb.let("start", _add(_mul(_mod(cube, split), chunk), u))
        stop = kb.let(
            "stop", n.Binary(ty=u32, op="min", lhs=_add(_mul(_mod(cube, split), chunk),
                                                        _c(chunk)), rhs=_c(length)))
        kb.emit(n.For(var=r, start=start, stop=stop, step=_c(units),
                      body=n.Block(tuple(body))))
    else:
        kb.emit(n.For(var=r, start=u, stop=_c(length), step=_c(units),
                      body=n.Block(tuple(body))))
    tile = kb.add_shared(acc_t, units)
    kb.emit(n.Store(buffer=tile, index=u, value=n.Load(ty=acc_t, var=acc)))
    kb.emit(n.Barrier())
    s = units // 2
    while s >= 1:
        other = n.Index(ty=acc_t, buffer=tile, index=_add(u, _c(s)))
        mine = n.Index(ty=acc_t, buffer=tile, index=u)
        kb.if_(n.Compare(ty=bool_, op="lt", lhs=u, rhs=_c(s)),
               [n.Store(buffer=tile, index=u,
                        value=n.Binary(ty=acc_t, op=_COMBINE[node.op], lhs=mine, rhs=other))])
        kb.emit(n.Barrier())
        s //= 2
    kb.fused_ops.append(node.op)
    with kb.block() as tail:
        total = n.Index(ty=acc_t, buffer=tile, index=_c(0))
        if split > 1:
            kb.emit(n.Store(buffer=out_ref, index=cube, value=total))
        else:
            value = kb.let("total", total if acc_t is node.dtype
                           else n.Cast(ty=node.dtype, operand=total))
            for bound in (node,) + tuple(binds):
                kb.bound[id(bound)] = value
            at = Idx.of_flat(o, epilogue.shape)
            kb.emit(n.Store(buffer=out_ref, index=o,
                            value=kb.value(epilogue, at, materialized)))
    kb.if_(n.Compare(ty=bool_, op="eq", lhs=u, rhs=_c(0)), tail)
    return kb, kb.build((units, 1, 1)), math.prod(kept_shape) * split


def matmul_kernel(name: str, node: MatMul, epilogue: Node, materialized: dict
                  ) -> tuple[KernelBuilder, n.Kernel, tuple[int, int, int]]:
    """A TILE x TILE output tile per cube, K in TILE steps through shared memory; the
    operands' producers are evaluated where the tiles are loaded and `epilogue` where
    the result is stored. Returns the cube count."""
    kb = KernelBuilder(name)
    a, b = node.a, node.b
    *batch, m, nn = node.shape
    k = a.shape[-1]
    acc_t = accumulator_type(node.dtype)
    out_ref = kb.add_param("out0", epilogue.dtype)
    tx = n.Builtin(ty=u32, name="unit_pos_x")
    ty_ = n.Builtin(ty=u32, name="unit_pos_y")
    row = kb.let("row", _add(_mul(n.Builtin(ty=u32, name="cube_pos_y"), TILE), ty_))
    col = kb.let("col", _add(_mul(n.Builtin(ty=u32, name="cube_pos_x"), TILE), tx))
    bz = n.Builtin(ty=u32, name="cube_pos_z")
    batch_idx = Idx.of_flat(bz, tuple(batch)) if batch else Idx((), ())
    tile_a = kb.add_shared(acc_t, TILE * TILE)
    tile_b = kb.add_shared(acc_t, TILE * TILE)
    acc = kb.fresh("acc", acc_t)
    kb.emit(n.Assign(var=acc, value=n.Const(ty=acc_t, value=0), declare=True))
    kt = kb.fresh("kt", u32)
    slot = _add(_mul(ty_, TILE), tx)
    zero = n.Const(ty=acc_t, value=0)

    def load(tile, operand: Node, r: n.Expr, c: n.Expr, rows: int, cols: int) -> None:
        bidx = batch_idx.broadcast_to(tuple(operand.shape[:-2])) if batch else Idx((), ())
        with kb.block() as then:
            v = kb.value(operand, Idx(bidx.dims + (r, c), operand.shape), materialized)
            kb.emit(n.Store(buffer=tile, index=slot,
                            value=v if v.ty is acc_t else n.Cast(ty=acc_t, operand=v)))
        inside = n.Logical(ty=bool_, op="and",
                           lhs=n.Compare(ty=bool_, op="lt", lhs=r, rhs=_c(rows)),
                           rhs=n.Compare(ty=bool_, op="lt", lhs=c, rhs=_c(cols)))
        kb.if_(inside, then, [n.Store(buffer=tile, index=slot, value=zero)])

    with kb.block() as body:
        k0 = _mul(n.Load(ty=u32, var=kt), TILE)
        load(tile_a, a, row, _add(k0, tx), m, k)
        load(tile_b, b, _add(k0, ty_), col, k, nn)
        kb.emit(n.Barrier())
        for kk in range(TILE):
            prod = n.Binary(ty=acc_t, op="mul",
                            lhs=n.Index(ty=acc_t, buffer=tile_a, index=_add(_mul(ty_, TILE), _c(kk))),
                            rhs=n.Index(ty=acc_t, buffer=tile_b, index=_add(_c(kk * TILE), tx)))
            kb.emit(n.Assign(var=acc, value=n.Binary(ty=acc_t, op="add",
                                                     lhs=n.Load(ty=acc_t, var=acc), rhs=prod)))
        kb.emit(n.Barrier())
    kb.emit(n.For(var=kt, start=_c(0), stop=_c(-(-k // TILE)), step=_c(1),
                  body=n.Block(tuple(body))))
    kb.fused_ops.append("matmul")
    with kb.block() as tail:
        value = n.Load(ty=acc_t, var=acc)
        kb.bound[id(node)] = value if acc_t is node.dtype else kb.let(
            "total", n.Cast(ty=node.dtype, operand=value))
        at = Idx(batch_idx.dims + (row, col), node.shape)
        flat = kb.let("o", linearize(at.dims, contiguous_strides(node.shape)))
        at = Idx(at.dims, node.shape, flat)
        kb.emit(n.Store(buffer=out_ref, index=flat, value=kb.value(epilogue, at, materialized)))
    inside = n.Logical(ty=bool_, op="and",
                       lhs=n.Compare(ty=bool_, op="lt", lhs=row, rhs=_c(m)),
                       rhs=n.Compare(ty=bool_, op="lt", lhs=col, rhs=_c(nn)))
    kb.if_(inside, tail)
    count = (-(-nn // TILE), -(-m // TILE), max(1, math.prod(batch)))
    return kb, kb.build((TILE, TILE, 1)), count
