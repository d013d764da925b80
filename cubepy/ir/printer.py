"""A readable text form of the IR, parsed back by cubepy/ir/parser.py.

    kernel axpy(%a: f32, @x: array<f32>, @y: array<f32>) cube_dim(64, 1, 1) {  # line 3 "k.py"
      let %i: u32 = absolute_pos  # line 4
      if lt(%i, len(@y)) {  # line 5
        @y[%i] = add(mul(%a, @x[%i]), @y[%i])  # line 6
      }
    }

Sigils keep user names apart from the syntax: `%name` is a local variable (scalar
parameters included), `@name` a buffer. Expressions are prefix calls named after the IR
operator (`add`, `lt`, `and`, `neg`, `select`, `shape`), casts are calls of a type
(`f32(%x)`), math intrinsics are `math.exp(...)`, bit functions `bits.popcount(...)`.
Constants carry their type (`1:u32`, `0.5:f32`; `+inf`, `-inf`, `+nan` for the special
floats); `true`/`false` are bools.
A result type is printed (`add:f32(...)`) only where it differs from the one the
operands imply, so the text stays short and the round trip stays exact.
`# line N` after a statement (after the `{` of a compound one) keeps its source line.
A kernel built for an unchecked launch says `unchecked` after its cube_dim.
"""
from __future__ import annotations

import math
import re

from . import nodes as ir
from .types import DType, LineType, bool_, i32, u32


def _quoted(text: str) -> str:
    """`text` as a JSON string, as the IR text's quoted names and comments are. (json is
    imported here, not with the module: a compile's verifier imports this module and
    seldom prints.)"""
    import json
    return json.dumps(text)


# Words of the text syntax; a kernel called like one of them is printed quoted.
# Kernel names the grammar's NAME token takes as they are; any other name is quoted.
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEYWORDS = frozenset({"kernel", "cube_dim", "shared", "var", "let", "if", "else", "for", "in",
                      "range", "unroll", "while", "break", "continue", "terminate",
                      "barrier", "comment", "atomic", "math", "true", "false", "plane",
                      "local", "bits", "matrix", "cmma", "unchecked"})


def implied_type(expr: ir.Expr) -> DType | None:
    """The result type an expression's operator and operands imply (None when the text
    must say it). Shared with the parser, which rebuilds `ty` from it."""
    if isinstance(expr, (ir.Compare, ir.Logical)):
        return bool_
    if isinstance(expr, ir.Unary):
        return bool_ if expr.op == "not" else expr.operand.ty
    if isinstance(expr, ir.Binary):
        return expr.lhs.ty
    if isinstance(expr, ir.Select):
        return expr.if_true.ty
    if isinstance(expr, ir.Index):
        return expr.buffer.elem
    if isinstance(expr, (ir.Builtin, ir.Meta)):
        return u32
    if isinstance(expr, ir.Load):
        return expr.var.ty
    if isinstance(expr, ir.Call):
        return call_type(expr.func, [a.ty for a in expr.args])
    if isinstance(expr, ir.Extract):
        return getattr(expr.value.ty, "elem", None)
    if isinstance(expr, ir.MakeLine):
        return LineType(expr.elems[0].ty, len(expr.elems)) if len(expr.elems) > 1 else None
    if isinstance(expr, ir.Plane):
        return ir.plane_type(expr.op, expr.value.ty)
    if isinstance(expr, ir.Bits):
        return bits_type(expr.op, [a.ty for a in expr.args])
    return None


def bits_type(op: str, arg_types: list) -> DType | LineType | None:
    """A bit function's result type from its operands' (None for bitcast, whose type
    the text always states)."""
    from .ops import OPS, BitOp
    if op == "bitcast" or op not in ir.BIT_OPS or not arg_types:
        return None
    return OPS[BitOp(op)].typing(arg_types)


def call_type(func: str, arg_types: list[DType]) -> DType | None:
    """A math intrinsic's result type: the first float argument's (bool for isnan, isinf
    and isfinite, i32 for frexp_exp)."""
    from .ops import BOOL_MATH, INT_MATH
    if func in BOOL_MATH or func in INT_MATH:  # of a line: a line of bools (i32s)
        out = bool_ if func in BOOL_MATH else i32
        t = arg_types[0] if arg_types else None
        return LineType(out, t.size) if isinstance(t, LineType) else out
    for t in arg_types:
        if t.is_float:
            return t
    return arg_types[0] if arg_types else None


def format_const(value, ty: DType) -> str:
    """A constant as text: exact for every float (repr round-trips)."""
    if ty is bool_ and isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bool):
        text = str(int(value))
    elif isinstance(value, float):
        if math.isnan(value):
            text = "+nan"
        elif math.isinf(value):
            text = "+inf" if value > 0 else "-inf"
        else:
            text = repr(value)
    else:
        text = str(int(value))
    return f"{text}:{ty.name}"


class _Printer:
    def __init__(self, kernel: ir.Kernel):
        self.kernel = kernel
        self.lines: list[str] = []
        self.known: dict[str, DType] = {}  # variables already declared in text order

    # -- locations ---------------------------------------------------------------------
    def loc(self, loc: ir.Loc, with_file: bool = False) -> str:
        if loc.lineno <= 0 and not with_file:
            return ""
        text = f"  # line {loc.lineno}"
        if with_file or loc.filename != self.kernel.loc.filename:
            text += " " + _quoted(loc.filename)
        return text

    # -- expressions -------------------------------------------------------------------
    def expr(self, e: ir.Expr) -> str:
        if isinstance(e, ir.Const):
            return format_const(e.value, e.ty)
        suffix = "" if implied_type(e) is e.ty else f":{e.ty.name}"
        if isinstance(e, ir.Load):
            known = self.known.get(e.var.name)
            if known is not e.var.ty:  # read of an undeclared variable: say its type
                suffix = f":{e.var.ty.name}"
            return f"%{e.var.name}{suffix}"
        if isinstance(e, ir.Builtin):
            return f"{e.name}{suffix}"
        if isinstance(e, ir.Index):
            return f"@{e.buffer.name}[{self.expr(e.index)}]{suffix}"
        if isinstance(e, ir.Meta):
            args = [f"@{e.buffer.name}"] + ([self.expr(e.dim)] if e.dim is not None else [])
            return f"{e.kind}{suffix}({', '.join(args)})"
        if isinstance(e, ir.Unary):
            return f"{e.op}{suffix}({self.expr(e.operand)})"
        if isinstance(e, (ir.Binary, ir.Compare, ir.Logical)):
            return f"{e.op}{suffix}({self.expr(e.lhs)}, {self.expr(e.rhs)})"
        if isinstance(e, ir.Select):
            return (f"select{suffix}({self.expr(e.cond)}, {self.expr(e.if_true)}, "
                    f"{self.expr(e.if_false)})")
        if isinstance(e, ir.Cast):
            return f"{e.ty.name}({self.expr(e.operand)})"
        if isinstance(e, ir.Call):
            return f"math.{e.func}{suffix}({', '.join(self.expr(a) for a in e.args)})"
        if isinstance(e, ir.Extract):
            return f"extract{suffix}({self.expr(e.value)}, {self.expr(e.index)})"
        if isinstance(e, ir.MakeLine):
            return f"make_line{suffix}({', '.join(self.expr(a) for a in e.elems)})"
        if isinstance(e, ir.Plane):
            args = [e.value] + ([e.arg] if e.arg is not None else [])
            return f"plane.{e.op}{suffix}({', '.join(self.expr(a) for a in args)})"
        if isinstance(e, ir.Bits):
            return f"bits.{e.op}{suffix}({', '.join(self.expr(a) for a in e.args)})"
        if isinstance(e, ir.Frag):
            index = f"[{self.expr(e.index)}]" if e.index is not None else ""
            return f"${e.matrix.name}{index}"
        raise TypeError(f"cannot print expression {e!r}")

    # -- statements --------------------------------------------------------------------
    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def block(self, block: ir.Block, depth: int) -> None:
        for s in block.stmts:
            self.stmt(s, depth)

    def declare(self, var: ir.Var) -> str:
        self.known[var.name] = var.ty
        return f"%{var.name}: {var.ty.name}"

    def stmt(self, s: ir.Stmt, depth: int) -> None:
        loc = self.loc(s.loc)
        if isinstance(s, ir.Declare):
            self.emit(depth, f"var {self.declare(s.var)}{loc}")
        elif isinstance(s, ir.Assign):
            value = self.expr(s.value)
            if s.declare:
                self.emit(depth, f"let {self.declare(s.var)} = {value}{loc}")
            else:
                self.emit(depth, f"{self.var_ref(s.var)} = {value}{loc}")
        elif isinstance(s, ir.Store):
            self.emit(depth, f"@{s.buffer.name}[{self.expr(s.index)}] = "
                             f"{self.expr(s.value)}{loc}")
        elif isinstance(s, ir.AtomicOp):
            args = [f"@{s.buffer.name}[{self.expr(s.index)}]"]
            if s.value is not None:
                args.append(self.expr(s.value))
            if s.compare is not None:
                args.append(self.expr(s.compare))
            head = "" if s.result is None else f"{self.var_ref(s.result)} = "
            self.emit(depth, f"{head}atomic {s.op}({', '.join(args)}){loc}")
        elif isinstance(s, ir.LoadLine):
            parts = ", ".join(self.var_ref(v) for v in s.parts)
            self.emit(depth, f"{parts} = load_line @{s.buffer.name}[{self.expr(s.line)}]{loc}")
        elif isinstance(s, ir.StoreLine):
            values = ", ".join(self.expr(v) for v in s.values)
            self.emit(depth, f"store_line @{s.buffer.name}[{self.expr(s.line)}] = "
                             f"({values}){loc}")
        elif isinstance(s, ir.If):
            self.emit(depth, f"if {self.expr(s.cond)} {{{loc}")
            self.block(s.then, depth + 1)
            if s.orelse.stmts:
                self.emit(depth, "} else {")
                self.block(s.orelse, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, ir.For):
            bounds = ", ".join(self.expr(e) for e in (s.start, s.stop, s.step))
            var = self.declare(s.var)
            unroll = " unroll" if s.unroll else ""
            self.emit(depth, f"for {var} in range({bounds}){unroll} {{{loc}")
            self.block(s.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, ir.While):
            self.emit(depth, f"while {self.expr(s.cond)} {{{loc}")
            self.block(s.body, depth + 1)
            self.emit(depth, "}")
        elif isinstance(s, ir.Barrier) and s.op != "sync_cube":
            self.emit(depth, f"barrier.{s.op}{loc}")
        elif isinstance(s, (ir.Break, ir.Continue, ir.Terminate, ir.Barrier)):
            self.emit(depth, type(s).__name__.lower() + loc)
        elif isinstance(s, ir.Comment):
            self.emit(depth, f"comment {_quoted(s.text)}{loc}")
        elif isinstance(s, ir.AsyncCopy):
            self.emit(depth, f"async_copy @{s.dst.name}[{self.expr(s.dst_line)}] = "
                             f"@{s.src.name}[{self.expr(s.src_line)}] x {s.size}{loc}")
        elif isinstance(s, ir.AsyncCommit):
            self.emit(depth, f"async_commit{loc}")
        elif isinstance(s, ir.AsyncWait):
            self.emit(depth, f"async_wait {s.pending}{loc}")
        elif isinstance(s, ir.MATRIX_STMTS):
            self.emit(depth, f"{self.matrix_stmt(s)}{loc}")
        else:
            raise TypeError(f"cannot print statement {s!r}")

    def matrix_stmt(self, s: ir.Stmt) -> str:
        """A cmma statement: `cmma.<op>(...)`, its arguments in the order of the call."""
        e = self.expr
        if isinstance(s, (ir.MatrixFill, ir.MatrixScale)):
            args = [e(s.frag), e(s.value)]
        elif isinstance(s, ir.MatrixLoad):
            args = [e(s.frag), f"@{s.buffer.name}", e(s.offset), e(s.stride)]
            args += [s.layout] if s.layout is not None else []
        elif isinstance(s, ir.MatrixStore):
            args = [f"@{s.buffer.name}", e(s.offset), e(s.frag), e(s.stride), s.layout]
        elif isinstance(s, ir.MatrixScaleBy):
            return f"cmma.scale_{s.axis}({e(s.frag)}, @{s.buffer.name}, {e(s.offset)})"
        elif isinstance(s, ir.MatrixExecute):
            args = [e(s.a), e(s.b), e(s.c), e(s.d)]
        elif isinstance(s, ir.WarpgroupMma):
            return (f"cmma.wg_mma({e(s.acc)}, @{s.a.name}, {e(s.a_offset)}, {s.a_rows}, "
                    f"@{s.b.name}, {e(s.b_offset)}, {s.b_rows}, {s.b_layout}"
                    f"{f', {s.swizzle}' if s.swizzle else ''})")
        elif isinstance(s, ir.WarpgroupSync):
            return f"cmma.wg_{s.op}({s.pending if s.op == 'wait' else ''})"
        else:
            args = [e(s.src), e(s.dst)]
        op = type(s).__name__[len("Matrix"):].lower()
        return f"cmma.{op}({', '.join(args)})"

    def var_ref(self, var: ir.Var) -> str:
        """A variable written by a statement; typed when not declared before."""
        if self.known.get(var.name) is var.ty:
            return f"%{var.name}"
        return f"%{var.name}:{var.ty.name}"

    # -- kernel ------------------------------------------------------------------------
    def kernel_text(self) -> str:
        k = self.kernel
        params = []
        for p in k.params:
            if p.kind == "scalar":
                params.append(self.declare(ir.Var(p.name, p.dtype)))
            else:
                line = f", {p.line_size}" if p.line_size != 1 else ""
                rank = f", rank {p.rank}" if p.rank is not None else ""
                rank += ", misaligned" if not p.aligned else ""
                params.append(f"@{p.name}: {p.kind}<{p.dtype.name}{line}{rank}>")
        name = k.name if _PLAIN_NAME.fullmatch(k.name) and k.name not in KEYWORDS \
            else _quoted(k.name)
        dim = ", ".join(str(d) for d in k.cube_dim)
        head_loc = self.loc(k.loc, with_file=k.loc.lineno > 0 or k.loc != ir.NO_LOC)
        unchecked = "" if k.checked else " unchecked"
        self.emit(0, f"kernel {name}({', '.join(params)}) cube_dim({dim}){unchecked} "
                     f"{{{head_loc}")
        for d in k.shared:
            self.emit(1, f"shared @{d.buffer.name}: {d.buffer.elem.name}[{d.size}]"
                         f"{self.loc(d.loc)}")
        for d in k.local_arrays:
            self.emit(1, f"local @{d.buffer.name}: {d.buffer.elem.name}[{d.size}]"
                         f"{self.loc(d.loc)}")
        for d in k.matrices:
            layout = f", {d.layout}" if d.layout is not None else ""
            count = f"[{d.count}]" if d.count is not None else ""
            self.emit(1, f"matrix ${d.name}: {d.ident}<{d.m}, {d.n}, {d.k}, {d.elem}{layout}>"
                         f"{count}{self.loc(d.loc)}")
        self.block(k.body, 1)
        self.emit(0, "}")
        return "\n".join(self.lines) + "\n"


def print_kernel(kernel: ir.Kernel) -> str:
    """The kernel as text (`cubepy.ir.parser.parse_kernel` reads it back)."""
    return _Printer(kernel).kernel_text()


def print_expr(expr: ir.Expr) -> str:
    """One expression as text (for messages and debugging)."""
    return _Printer(ir.Kernel("k", (), (), ir.Block(), (1, 1, 1))).expr(expr)
