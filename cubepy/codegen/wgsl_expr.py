"""WGSL expressions: literals, operator tables, casts and math intrinsics.

WGSL has no implicit conversions, so every literal carries its suffix (`2u`, `1.5f`,
`0.5h`, `-3i`) and every cast is explicit. Operators whose WGSL meaning differs from
the shared semantics (docs/LANGUAGE.md) go through prelude helpers (wgsl_prelude.py).
Compound sub-expressions are parenthesised: WGSL forbids mixing some operators
(`a & b == c`, `a && b || c`) without parentheses.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import compile_error
from ..ir import nodes as n
from ..ir.dtype_facts import SPELLING, int_range
from ..ir.ops import (LOWERED, BinaryOp, CompareOp, Helper, LogicalOp, MathFn,
                      PlaneOp)
from ..ir.types import DType
from ..targets import get_target

_TARGET = get_target("wgsl")
WGSL_TYPES = SPELLING[_TARGET.family]


def _spelled(kind: type, keep: Callable[[object], bool]) -> dict[str, str]:
    """op name -> WGSL spelling (ir/ops.py) of the ops of `kind` whose spelling `keep`s."""
    return {op.value: name for op in kind
            if (name := _TARGET.spelling(op)) is not None and keep(name)}


def _named(name) -> bool:
    return name != LOWERED and not isinstance(name, Helper)


_INFIX = _spelled(BinaryOp, _named)  # the operators WGSL spells as C does
_COMPARE = _spelled(CompareOp, _named)
_LOGICAL = _spelled(LogicalOp, _named)
# Math intrinsics WGSL has under the same or another name, and those computed by a
# prelude helper (wgsl_prelude.py) of the op's name.
_DIRECT = _spelled(MathFn, _named)
_HELPER_CALLS = _spelled(MathFn, lambda name: isinstance(name, Helper))


def wgsl_type(t: DType, loc: n.Loc = n.NO_LOC) -> str:
    """The WGSL spelling of an IR type; a CompileError for types WGSL lacks."""
    name = WGSL_TYPES.get(t.name)
    if name is None:
        compile_error(loc, f"{t.name} is not available in WGSL (no f64, i64, u64 or bf16); "
                           f"use f32, i32 or u32 for the wgsl target")
    return name


def literal(value, t: DType, loc: n.Loc = n.NO_LOC) -> str:
    """A typed WGSL literal for `value` of type `t` (negative ones start with `-`)."""
    ty = wgsl_type(t, loc)
    if ty == "bool":
        return "true" if value else "false"
    if ty in ("i32", "u32"):
        v = int(value)
        lo, hi = int_range(t)
        if not lo <= v <= hi:
            compile_error(loc, f"the literal {v} does not fit in {ty}")
        if ty == "u32":
            return f"{v}u"
        if v == lo:  # 2147483648i itself is out of range
            return "i32(-2147483647i - 1i)"
        return f"{v}i"
    v = float(value)
    if ty == "f16":
        v16 = np.float16(v)
        if math.isfinite(v16):
            return f"{str(v16)}h"
        return f"f16({literal(v, _f32(), loc)})"
    v32 = np.float32(v)
    if math.isnan(v32):
        return "bitcast<f32>(0x7fc00000u)"
    if math.isinf(v32):
        return f"bitcast<f32>(0x{'ff' if v32 < 0 else '7f'}800000u)"
    text = str(v32)
    if "." not in text and "e" not in text:
        text += ".0"
    return text + "f"


def _f32() -> DType:
    from ..ir.types import f32
    return f32


class ExprEmitter:
    """Turns IR expressions into WGSL text.

    `name_of(var)` gives a local's WGSL name, `position(builtin)` the name of a position
    value computed at entry, `meta(expr)` an info field access, `read(index_expr)` a
    buffer read (checked or not); `prelude` collects helper functions.
    """

    def __init__(self, prelude, name_of: Callable[[n.Var], str],
                 position: Callable[[str, n.Loc], str], meta: Callable[[n.Meta], str],
                 read: Callable[[n.Index], str]):
        self.prelude = prelude
        self.name_of = name_of
        self.position = position
        self.meta = meta
        self.read = read
        self.loc = n.NO_LOC  # the statement being emitted: errors point there if need be
        self._runtime_consts: set[n.Const] = set()  # emitted through cube_runtime_<t>

    def _at(self, e: n.Expr) -> n.Loc:
        return e.loc if e.loc.lineno > 0 else self.loc

    def __call__(self, e: n.Expr, bare: bool = False) -> str:
        """WGSL text of `e`; `bare` omits the outer parentheses (statement level)."""
        text, compound = self._emit(e)
        return f"({text})" if compound and not bare else text

    def _emit(self, e: n.Expr) -> tuple[str, bool]:
        """(text, compound): compound text needs parentheses inside another operator."""
        if isinstance(e, n.Const):
            text = literal(e.value, e.ty, self._at(e))
            if e in self._runtime_consts:
                return f"{self.prelude.use('runtime', wgsl_type(e.ty))}({text})", False
            return text, text.startswith("-")  # `a - -1i` reads badly; parenthesise
        self._keep_at_runtime(e)
        if isinstance(e, n.Load):
            return self.name_of(e.var), False
        if isinstance(e, n.Builtin):
            return self.position(e.name, self._at(e)), False
        if isinstance(e, n.Meta):
            return self.meta(e), False
        if isinstance(e, n.Index):
            return self.read(e), False
        if isinstance(e, n.Unary):
            return self._unary(e)
        if isinstance(e, n.Binary):
            return self._binary(e)
        if isinstance(e, n.Compare):
            return self._compare(e)
        if isinstance(e, n.Logical):
            return f"{self(e.lhs)} {_LOGICAL[e.op]} {self(e.rhs)}", True
        if isinstance(e, n.Select):
            return (f"select({self(e.if_false, True)}, {self(e.if_true, True)}, "
                    f"{self(e.cond, True)})"), False
        if isinstance(e, n.Cast):
            return self._cast(e), False
        if isinstance(e, n.Call):
            return self._call(e), False
        if isinstance(e, n.Plane):
            return self._plane(e)
        if isinstance(e, n.Bits):
            from .wgsl_bits import wgsl_bits
            return wgsl_bits(self, e)
        compile_error(self._at(e), f"the wgsl target cannot emit {type(e).__name__} expressions")

    def _keep_at_runtime(self, e: n.Expr) -> None:
        """A float operation on constants only (one the folder leaves to the target, as
        0.0 / 0.0 or sqrt(-1.0)) would be a WGSL const-expression, and a non-finite
        const-expression fails shader creation: one constant operand goes through an
        identity helper so that the operation runs in the shader."""
        if isinstance(e, (n.Unary, n.Binary)):
            operands = (e.operand,) if isinstance(e, n.Unary) else (e.lhs, e.rhs)
        elif isinstance(e, n.Cast):
            operands = (e.operand,)
        elif isinstance(e, n.Call):
            operands = e.args
        else:
            return
        if operands and all(isinstance(x, n.Const) for x in operands):
            floats = [x for x in operands if x.ty.is_float]
            if floats:
                self._runtime_consts.add(floats[0])

    # -- operators --------------------------------------------------------------------
    def _unary(self, e: n.Unary) -> tuple[str, bool]:
        t = wgsl_type(e.ty, self._at(e))
        x = self(e.operand)
        if e.op == "neg":
            return (f"0u - {x}", True) if t == "u32" else (f"-{x}", True)
        if e.op == "bitnot":
            return (f"!{x}", True) if t == "bool" else (f"~{x}", True)
        if e.op == "not":
            return f"!{x}", True
        if e.op == "abs":
            return (x, False) if t in ("u32", "bool") else (f"abs({self(e.operand, True)})",
                                                            False)
        compile_error(self._at(e), f"unknown unary operator {e.op!r}")

    def _binary(self, e: n.Binary) -> tuple[str, bool]:
        t = wgsl_type(e.ty, self._at(e))
        a, b = e.lhs, e.rhs
        op = e.op
        is_float = e.ty.is_float
        if op in ("shl", "shr"):
            return f"{self(a)} {'<<' if op == 'shl' else '>>'} {self._shift_amount(b)}", True
        if t == "bool" and op == "bitxor":
            return f"{self(a)} != {self(b)}", True
        if op in _INFIX and (is_float or op != "div"):
            return f"{self(a)} {_INFIX[op]} {self(b)}", True
        if t == "u32" and op in ("floordiv", "mod") and isinstance(b, n.Const) and b.value:
            # WGSL's u32 / and % agree with the language for a nonzero divisor.
            return f"{self(a)} {'/' if op == 'floordiv' else '%'} {self(b)}", True
        args = f"{self(a, True)}, {self(b, True)}"
        if op in ("max", "min"):
            fn = self.prelude.use(op, t) if is_float else op
            return f"{fn}({args})", False
        if op in ("floordiv", "div", "mod"):
            kind = "mod" if op == "mod" else "floordiv"
            return f"{self.prelude.use(kind, t)}({args})", False
        if op == "pow":
            if not is_float:
                compile_error(self._at(e), "integer ** needs a compile-time non-negative exponent")
            return f"{self.prelude.use('pow', t)}({args})", False
        compile_error(self._at(e), f"operator {op!r} is not defined on {t} in WGSL")

    def _shift_amount(self, b: n.Expr) -> str:
        """WGSL wants a u32 shift amount below the bit width: take it modulo 32."""
        if isinstance(b, n.Const):
            return f"{int(b.value) & 31}u"
        amount = self(b, True) if b.ty.name == "u32" else f"u32({self(b, True)})"
        return f"({amount} & 31u)"

    def _compare(self, e: n.Compare) -> tuple[str, bool]:
        a, b = self(e.lhs), self(e.rhs)
        if e.lhs.ty.is_bool and e.op not in ("eq", "ne"):
            a, b = f"u32({self(e.lhs, True)})", f"u32({self(e.rhs, True)})"
        return f"{a} {_COMPARE[e.op]} {b}", True

    def _cast(self, e: n.Cast) -> str:
        src, dst = wgsl_type(e.operand.ty, self._at(e)), wgsl_type(e.ty, self._at(e))
        x = self(e.operand, True)
        if src == dst:
            return self(e.operand)
        if e.operand.ty.is_float and dst in ("i32", "u32"):
            return f"{self.prelude.float_to_int(src, dst)}({x})"
        return f"{dst}({x})"

    def _call(self, e: n.Call) -> str:
        t = wgsl_type(e.args[0].ty, self._at(e)) if e.args else "f32"
        args = ", ".join(self(a, True) for a in e.args)
        if e.func in ("isnan", "isinf", "isfinite"):
            if not e.args[0].ty.is_float:
                return "true" if e.func == "isfinite" else "false"
            return f"{self.prelude.use(e.func, t)}({args})"
        if e.func in _DIRECT:
            return f"{_DIRECT[e.func]}({args})"
        if e.func == "fmod" and t == "f16":  # the exact fmod exists for f32 only
            fargs = ", ".join(f"f32({self(a, True)})" for a in e.args)
            return f"f16({self.prelude.use('fmod', 'f32')}({fargs}))"
        if e.func in _HELPER_CALLS:
            return f"{self.prelude.use(_HELPER_CALLS[e.func], t)}({args})"
        compile_error(self._at(e), f"the math function {e.func!r} is not available in WGSL")

    def _plane(self, e: n.Plane) -> tuple[str, bool]:
        """A subgroup built-in. WGSL shuffles take no bool: one travels as 0u/1u."""
        v = self(e.value, True)
        if e.op == "elect":  # no subgroupElect in naga: the lowest active lane counts 0
            return "subgroupExclusiveAdd(1u) == 0u", True
        if e.op == "ballot":
            return f"{_PLANE[e.op]}({v}).{'xyzw'[int(e.arg.value)]}", False
        if e.arg is None:
            return f"{_PLANE[e.op]}({v})", False
        arg = self(e.arg, True)
        fn = _PLANE[e.op]
        if e.op == "broadcast" and not (isinstance(e.arg, n.Const) and e.arg.value < 128):
            fn = "subgroupShuffle"  # subgroupBroadcast needs a const-expression lane < 128
        if e.ty.is_bool:
            return f"{fn}(select(0u, 1u, {v}), {arg}) != 0u", True
        return f"{fn}({v}, {arg})", False


# Plane operations -> WGSL subgroup built-ins (naga needs no `enable` for them; the
# device needs the "subgroup" feature).
_PLANE = _spelled(PlaneOp, _named)
