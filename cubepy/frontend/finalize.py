"""Rebuilds the IR the builder produced with every type variable replaced by its final
concrete DType, checking that literals fit their types."""
from __future__ import annotations

import dataclasses
import math

from ..errors import compile_error
from ..ir import nodes as n
from ..ir.dtype_facts import facts, int_range, wrap
from ..ir.scalar import float_to_int
from ..ir.types import FP8_DTYPES, DType, LineType
from .infer import TVar, resolve

# per node class: the fields to rewrite, computed once
_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, str], ...]:
    spec = _FIELDS.get(cls)
    if spec is None:
        out = []
        for f in dataclasses.fields(cls):
            if f.name == "loc":
                continue
            out.append((f.name, f.name))
        spec = _FIELDS[cls] = tuple(out)
    return spec


def _ty(t) -> DType:
    return resolve(t) if isinstance(t, TVar) else t


class Finalizer:
    def __init__(self):
        self.vars: dict[int, n.Var] = {}
        self.saw_fp8 = False  # some value has an 8-bit float type (frontend/fp8_uses.py)

    def var(self, v: n.Var) -> n.Var:
        out = self.vars.get(id(v))
        if out is None:
            out = self.vars[id(v)] = n.Var(v.name, _ty(v.ty))
        return out

    def value(self, v):
        if isinstance(v, n.Expr):
            return self.expr(v)
        if isinstance(v, n.Block):
            return self.block(v)
        if isinstance(v, n.Var):
            return self.var(v)
        if isinstance(v, tuple):
            return tuple(self.value(x) for x in v)
        return v

    def expr(self, e: n.Expr) -> n.Expr:
        out = self._expr(e)
        if out.ty in FP8_DTYPES or getattr(out.ty, "elem", None) in FP8_DTYPES:
            self.saw_fp8 = True
        return out

    def _expr(self, e: n.Expr) -> n.Expr:
        cls = type(e)
        if cls is n.Const:
            ty = _ty(e.ty)
            return n.Const(ty=ty, value=const_value(e.value, ty, e.loc), loc=e.loc)
        if cls is n.Cast:
            operand = self.expr(e.operand)
            ty = _ty(e.ty)
            if operand.ty is ty:
                return operand
            if isinstance(ty, LineType):  # a broadcast or an elementwise conversion
                if isinstance(operand, n.Const) and operand.ty is not ty.elem:
                    operand = n.Const(ty=ty.elem, loc=operand.loc,
                                      value=cast_value(operand.value, ty.elem, operand.ty))
                return n.Cast(ty=ty, operand=operand, loc=e.loc)
            if isinstance(operand, n.Const):  # a cast of a literal is a literal
                return n.Const(ty=ty, value=cast_value(operand.value, ty, operand.ty),
                               loc=e.loc)
            return n.Cast(ty=ty, operand=operand, loc=e.loc)
        kw = {name: self.value(getattr(e, name)) for name, _ in _fields(cls) if name != "ty"}
        return cls(ty=_ty(e.ty), loc=e.loc, **kw)

    def stmt(self, s: n.Stmt) -> n.Stmt:
        cls = type(s)
        kw = {name: self.value(getattr(s, name)) for name, _ in _fields(cls)}
        return cls(loc=s.loc, **kw)

    def block(self, b: n.Block) -> n.Block:
        return n.Block(tuple(self.stmt(s) for s in b.stmts))


def const_value(value, ty: DType, loc: n.Loc):
    """`value` as a literal of type `ty`; CompileError when it does not fit."""
    if ty.is_bool:
        return bool(value)
    if ty.is_float:
        value = float(value)
        if math.isfinite(value) and abs(value) > facts(ty).float_max:
            compile_error(loc, f"the literal {value!r} does not fit in {ty.name}")
        return value
    if isinstance(value, float):  # pragma: no cover - inference forbids it
        compile_error(loc, f"the float literal {value!r} cannot be {ty.name}")
    lo, hi = int_range(ty)
    if not lo <= int(value) <= hi:
        hint = f" (a negative value cannot be unsigned: cast a signed value, e.g. " \
               f"{ty.name}(i{ty.bits}(...)))" if value < 0 and not ty.is_signed else ""
        compile_error(loc, f"the literal {value} does not fit in {ty.name}{hint}")
    return int(value)


def cast_value(value, ty: DType, src: DType | None = None):
    """A compile-time cast with the language's semantics (wrap, truncate, saturate) of
    `value`, a literal of type `src` (None: a Python number). Float values are rounded
    to their type first, as the target rounds the literal (f32(16777217) is 16777216)."""
    from ..ir.passes.consteval import NOFOLD, to_float
    if src is not None and src.is_float:
        rounded = to_float(value, src)
        value = float(value) if rounded is NOFOLD else rounded
    if ty.is_bool:
        return bool(value)
    if ty.is_float:
        rounded = to_float(value, ty)
        return float(value) if rounded is NOFOLD else rounded
    if isinstance(value, float):  # truncated, saturated, NaN -> 0
        return float_to_int(value, ty)
    return wrap(value, ty)


def finalize_kernel(body: n.Block) -> tuple[n.Block, bool]:
    """`body` with concrete types, and whether some value in it has an fp8 type."""
    finalizer = Finalizer()
    return finalizer.block(body), finalizer.saw_fp8
