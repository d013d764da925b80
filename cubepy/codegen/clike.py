"""The C-like core shared by the CUDA and Metal code generators.

`CEmitter` walks a specialised kernel and writes its body as C statements; a `Dialect`
(cuda.py, metal.py) supplies the few things that differ: type names, literals, casts,
position builtins, math names, atomics, the barrier and how helpers are declared.

Expressions are emitted with C precedence so only the parentheses that are needed (or
that keep `-Wparentheses` quiet) appear. Integer and float semantics that C leaves
undefined (division by zero, signed floor division, float->int saturation, ...) go through
small `cube_*` helpers, added to the prelude only when used (`Prelude`).
"""
from __future__ import annotations

from typing import Optional

from ..abi import MAX_RANK, KernelABI
from ..errors import OptionError, compile_error
from ..ir import nodes as n
from ..ir.ops import info, ops_of
from ..ir.types import DType, bool_, u32, u64
from ..ir.visit import walk_stmts
from ..targets import get_target
from .clike_dialect import Dialect, Prelude  # noqa: F401  (re-exported)
from .names import Namer, field_name
from .walker import BracedWalker

# C operator precedence (higher binds tighter).
PRIMARY, UNARY, MUL, ADD, SHIFT, REL, EQ, BAND, BXOR, BOR, LAND, LOR, COND = (
    16, 15, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3)

# How tightly each C operator binds; the operators themselves are the op table's C spellings.
_PRECEDENCE = {"+": ADD, "-": ADD, "*": MUL, "/": MUL, "&": BAND, "|": BOR, "^": BXOR,
               "==": EQ, "!=": EQ, "<": REL, "<=": REL, ">": REL, ">=": REL}


def _c_operators(kind: str, names: tuple[str, ...] | None = None) -> dict:
    """IR op name -> (C operator, precedence) for the ops of `kind` (those in `names`)."""
    return {op.value: (info(op).spell["c"], _PRECEDENCE[info(op).spell["c"]])
            for op in ops_of(kind) if names is None or op.value in names}


ARITH = _c_operators("binary", ("add", "sub", "mul", "div"))
BITWISE = _c_operators("binary", ("bitand", "bitor", "bitxor"))
COMPARE = _c_operators("compare")

BASIC_BUILTINS = frozenset(f"{kind}_{axis}" for kind in ("unit_pos", "cube_pos", "cube_count")
                           for axis in "xyz")


class CEmitter(BracedWalker):
    """Writes the body of one kernel as C-like statements for a `Dialect`."""

    def __init__(self, kernel: n.Kernel, abi: KernelABI, checked: bool, dialect: Dialect):
        super().__init__()
        self.kernel = kernel
        self.abi = abi
        self.checked = checked
        self.d = dialect
        self.prelude = Prelude()
        self._names = Namer(dialect.name, dialect.reserved)  # (space, ir name) -> C name
        self.shared_size = {s.buffer.name: s.size for s in kernel.shared}
        self.local_size = {d.buffer.name: d.size for d in kernel.local_arrays}
        self.atomic_buffers = {s.buffer.name for s in walk_stmts(kernel.body)
                               if isinstance(s, n.AtomicOp)}
        self.prologue: list[str] = []  # composite builtins, declared once at entry
        self.positions_used: set[str] = set()  # builtins asked of the dialect (position)
        self.prologue_names: dict[str, str] = {}  # builtin (or staging) -> its C name
        for p in kernel.params:
            self._name("param", p.name)
        for s in kernel.shared:
            self._name("shared", s.buffer.name)
        for d in kernel.local_arrays:
            self._name("local", d.buffer.name)
        for m in kernel.matrices:
            self._name("matrix", m.name)

    # ------------------------------------------------------------------ names
    def _name(self, space: str, name: str) -> str:
        return self._names.get((space, name), name)

    def var(self, v: n.Var) -> str:
        """The C name of a local; scalar parameters keep their parameter's name."""
        if ("param", v.name) in self._names:
            return self._name("param", v.name)
        return self._name("var", v.name)

    def buffer(self, b: n.BufferRef) -> str:
        return self._name("param" if b.space == "global" else b.space, b.name)

    def matrix_name(self, d: n.MatrixDecl) -> str:
        """The C name of a cmma fragment (or array of them)."""
        return self._name("matrix", d.name)

    def fresh(self, stem: str) -> str:
        """A new compiler temporary (cube_ names never collide with user names)."""
        return self.temps.counter(f"cube_{stem}")

    def position(self, name: str) -> str:
        """The dialect's spelling of a basic position builtin; the generator remembers
        which it used (Metal declares an entry attribute only for those)."""
        self.positions_used.add(name)
        return self.d.builtin(name)

    def info(self, kind: str, param: str) -> str:
        f = self.abi.field(kind, param)
        if f is None:
            raise ValueError(f"the ABI has no {kind} field for {param!r}")
        return f"info.{field_name(self.abi, self.d.name, kind, param)}"

    # ------------------------------------------------------------------ statements
    # (walking, source comments, comments, if/while/break/continue/terminate: walker.py)
    def condition(self, e: n.Expr) -> str:
        return self.expr(e)

    def unsupported(self, s: n.Stmt) -> None:
        compile_error(s.loc, f"the {self.d.name} code generator does not support "
                             f"{type(s).__name__} statements")

    def stmt_declare(self, s: n.Declare) -> None:
        zero, _ = self.d.literal(False if s.var.ty is bool_ else 0, s.var.ty)
        self.line(f"{self.d.type_name(s.var.ty)} {self.var(s.var)} = {zero};")

    def stmt_assign(self, s: n.Assign) -> None:
        value = self.expr(s.value)
        if s.declare:
            self.line(f"{self.d.type_name(s.var.ty)} {self.var(s.var)} = {value};")
            return
        name = self.var(s.var)
        if value == name:
            return  # e.g. abs() of an unsigned value
        # `x = x + e` reads better as `x += e` (same evaluation: x is a plain local).
        v = s.value
        if isinstance(v, n.Binary) and isinstance(v.lhs, n.Load) and v.lhs.var == s.var \
                and v.op in ("add", "sub", "mul") and not _is_signed_int(v.ty):
            op = ARITH[v.op][0]
            self.line(f"{name} {op}= {self.expr(v.rhs)};")
            return
        self.line(f"{name} = {value};")

    def stmt_store(self, s: n.Store) -> None:
        buf = self.buffer(s.buffer)
        index = self.expr(s.index)
        value = self.expr(s.value)
        ptr = f"{buf}[{index}]"
        if s.buffer.name in self.atomic_buffers and self.d.typed_atomics:
            line = self.d.atomic_store(f"&{ptr}", value) + ";"
        else:
            line = f"{ptr} = {value};"
        cond = self.bounds_check(s.buffer, s.index)
        if cond is None:
            self.line(line)
        else:
            self.branch(cond, lambda: self.line(line))

    def stmt_loadline(self, s: n.LoadLine) -> None:
        from .clike_lines import load_line  # (at a kernel's first whole-line access)
        load_line(self, s)

    def stmt_storeline(self, s: n.StoreLine) -> None:
        from .clike_lines import store_line
        store_line(self, s)

    def stmt_atomicop(self, s: n.AtomicOp) -> None:
        ptr = f"&{self.buffer(s.buffer)}[{self.expr(s.index)}]"
        value = self.expr(s.value) if s.value is not None else None
        compare = self.expr(s.compare) if s.compare is not None else None
        call = self.d.atomic(self, s, ptr, value, compare)
        cond = self.bounds_check(s.buffer, s.index)
        if s.result is None:
            if cond is None:
                self.line(f"{call};")
            else:
                self.branch(cond, lambda: self.line(f"{call};"))
            return
        target = self.var(s.result)
        if cond is None:
            self.line(f"{target} = {call};")
        else:  # the conditional evaluates the atomic only when in range
            zero, _ = self.d.literal(0, s.result.ty)
            self.line(f"{target} = {cond} ? {call} : {zero};")

    def stmt_for(self, s: n.For) -> None:
        ty = s.var.ty
        name = self.var(s.var)
        assigned = _assigned_vars(s.body)
        stop = self._loop_bound(s.stop, assigned, "stop")
        step_const = s.step.value if isinstance(s.step, n.Const) else None
        step = self._loop_bound(s.step, assigned, "step") if step_const is None else None
        start = self.expr(s.start)
        if step_const is not None:
            if step_const > 0:
                cond = f"{name} < {stop}"
            else:
                cond = f"{name} > {stop}"
            mag = abs(step_const)
            if mag == 1:
                incr = f"++{name}" if step_const > 0 else f"--{name}"
            else:
                lit, _ = self.d.literal(mag, ty)
                incr = f"{name} {'+' if step_const > 0 else '-'}= {lit}"
        else:
            if ty.is_signed:
                zero, _ = self.d.literal(0, ty)
                # A zero step runs no iteration, as in WGSL and the cpu runtime.
                cond = (f"({step} > {zero} ? {name} < {stop} : "
                        f"{step} < {zero} && {name} > {stop})")
            else:
                cond = f"{name} < {stop}"
            incr = f"{name} += {step}"
        if s.unroll and _unroll_pragma(self.d.name):
            self.line(_unroll_pragma(self.d.name))
        self.line(f"for ({self.d.type_name(ty)} {name} = {start}; {cond}; {incr}) {{")
        self.nested(s.body)
        self.line("}")

    def _loop_bound(self, e: n.Expr, assigned: set[str], stem: str) -> str:
        """The text of a range bound; hoisted into a constant unless it cannot change
        while the loop runs (Python evaluates range() bounds once)."""
        text = self.expr_prec(e, REL + 1)
        if _invariant(e, assigned):
            return text
        tmp = self.fresh(stem)
        self.line(f"const {self.d.type_name(e.ty)} {tmp} = {self.expr(e)};")
        return tmp

    def stmt_barrier(self, s: n.Barrier) -> None:
        self.line(self.d.sync(s.op))

    # cmma statements: the dialect's MatrixSpelling writes them (clike_cmma.py)
    def _matrix(self, s: n.Stmt) -> None:
        spelling = self.d.matrix
        if spelling is None:
            compile_error(s.loc, f"the {self.d.name} code generator has no matrix units")
        spelling.statement(self, s)

    stmt_matrixfill = stmt_matrixload = stmt_matrixstore = _matrix
    stmt_matrixexecute = stmt_matrixcast = stmt_matrixscale = stmt_matrixscaleby = _matrix
    stmt_warpgroupmma = stmt_warpgroupsync = _matrix

    # asynchronous copies: the dialect's `pipeline` writes them (cuda_async.py)
    def _pipeline(self, s: n.Stmt):
        if self.d.pipeline is None:
            compile_error(s.loc, f"the {self.d.name} code generator has no asynchronous "
                                 f"copies (lower_async_copies makes them plain copies)")
        return self.d.pipeline

    def stmt_asynccopy(self, s: n.AsyncCopy) -> None:
        self._pipeline(s).copy(self, s)

    def stmt_asynccommit(self, s: n.AsyncCommit) -> None:
        self._pipeline(s).commit(self, s)

    def stmt_asyncwait(self, s: n.AsyncWait) -> None:
        self._pipeline(s).wait(self, s)

    # ------------------------------------------------------------------ bounds checks
    def bounds_check(self, buffer: n.BufferRef, index: n.Expr) -> Optional[str]:
        """The C condition `index in range` of a checked access (None when unchecked or
        provably in range)."""
        if not self.checked:
            return None
        if buffer.space in ("shared", "local"):
            sizes = self.shared_size if buffer.space == "shared" else self.local_size
            size = sizes.get(buffer.name)
            if size is None or isinstance(index, n.Const) and 0 <= index.value < size:
                return None
            if isinstance(index, n.Builtin) and index.name == "unit_pos" \
                    and self.kernel.units_per_cube <= size:
                return None  # UNIT_POS < units per cube <= size
            limit = self.d.literal(size, n.U32)[0]
        else:
            limit = self.info("buffer_len", buffer.name)
        if index.ty.is_signed:
            # negative indices wrap to huge unsigned values: one compare covers both ends
            return f"{self.d.unsigned_cast(self, index)} < {limit}"
        return f"{self.expr_prec(index, SHIFT)} < {limit}"

    # ------------------------------------------------------------------ expressions
    def expr(self, e: n.Expr) -> str:
        return self._expr(e)[0]

    def expr_prec(self, e: n.Expr, min_prec: int) -> str:
        text, prec = self._expr(e)
        return text if prec >= min_prec else f"({text})"

    def _expr(self, e: n.Expr) -> tuple[str, int]:
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is None:
            compile_error(e.loc, f"the {self.d.name} code generator does not support "
                                 f"{type(e).__name__} expressions")
        return method(e)

    def _e_Const(self, e: n.Const) -> tuple[str, int]:
        return self.d.literal(e.value, e.ty)

    def _e_Load(self, e: n.Load) -> tuple[str, int]:
        return self.var(e.var), PRIMARY

    def _e_Builtin(self, e: n.Builtin) -> tuple[str, int]:
        name = e.name
        if name.startswith("cube_dim_"):
            return self._dim(name[-1]), PRIMARY
        if name.startswith("unit_pos_") and name[-1] in "xyz" \
                and self.kernel.cube_dim["xyz".index(name[-1])] == 1:
            return self.d.literal(0, n.U32)[0], PRIMARY  # a cube one unit wide on this axis
        if name in BASIC_BUILTINS:
            return self.position(name), PRIMARY
        if name.startswith("absolute_pos_"):
            return self._absolute_axis(name[-1])
        if name == "unit_pos_plane" and not self.d.native_lane:
            return self.composite_builtin(name), PRIMARY
        if name in ("plane_dim", "unit_pos_plane"):
            return self.position(name), PRIMARY
        return self.composite_builtin(name), PRIMARY

    def _absolute_axis(self, axis: str) -> tuple[str, int]:
        """CUBE_POS_a * CUBE_DIM_a + UNIT_POS_a, simplified for a dim of 1."""
        group = self.position(f"cube_pos_{axis}")
        size = self.kernel.cube_dim["xyz".index(axis)]
        if size == 1:
            return group, PRIMARY
        return f"{group} * {self._dim(axis)} + {self.position('unit_pos_' + axis)}", ADD

    def composite_builtin(self, name: str) -> str:
        """Builtins built from the basic ones (docs: position builtins), declared once
        as constants at kernel entry so uses stay short."""
        cname = self.prologue_names.get(name)
        if cname is not None:
            return cname
        b = self._builtin_part
        dx, dy, dz = (self._dim(a) for a in "xyz")
        if name == "absolute_pos":
            ax = self._absolute_axis("x")[0]
            ay, az = (self.expr_prec(n.Builtin(ty=n.U32, name=f"absolute_pos_{a}"), MUL)
                      for a in "yz")
            cx, cy = b("cube_count_x"), b("cube_count_y")
            width = f"{cx} * {dx}"  # units per row of the grid, then per plane
            plane = f"{width} * {cy}" + (f" * {dy}" if self.kernel.cube_dim[1] > 1 else "")
            value = f"{ax} + {ay} * ({width}) + {az} * ({plane})"
        elif name == "unit_pos":
            value = b("unit_pos_x")
            if self.kernel.cube_dim[1] > 1:
                value += f" + {b('unit_pos_y')} * {dx}"
            if self.kernel.cube_dim[2] > 1:
                value += f" + {b('unit_pos_z')} * {self._const_mul(dx, dy)}"
        elif name == "cube_pos":
            cx, cy = b("cube_count_x"), b("cube_count_y")
            value = (f"{b('cube_pos_x')} + {b('cube_pos_y')} * {cx} + "
                     f"{b('cube_pos_z')} * ({cx} * {cy})")
        elif name == "cube_dim":
            value = self._const_mul(self._const_mul(dx, dy), dz)
        elif name == "unit_pos_plane":
            value = f"{self.composite_builtin('unit_pos')} % {self.position('plane_dim')}"
        elif name == "cube_count":
            value = f"{b('cube_count_x')} * {b('cube_count_y')} * {b('cube_count_z')}"
        else:
            compile_error(self.kernel.loc, f"unknown position builtin {name!r}")
        if name == "cube_dim":
            return value  # a constant
        cname = name if name.startswith("cube_") else f"cube_{name}"
        self.prologue_names[name] = cname
        self.prologue.append(f"const {self.d.type_name(n.U32)} {cname} = {value};")
        return cname

    def _builtin_part(self, name: str) -> str:
        return self.position(name)

    def _dim(self, axis: str) -> str:
        """The cube dim along `axis`, a constant (the kernel is specialised on it)."""
        return self.d.literal(self.kernel.cube_dim["xyz".index(axis)], n.U32)[0]

    def _const_mul(self, a: str, b: str) -> str:
        try:
            return self.d.literal(int(a.rstrip("u")) * int(b.rstrip("u")), n.U32)[0]
        except ValueError:
            return f"{a} * {b}"

    def _e_Meta(self, e: n.Meta) -> tuple[str, int]:
        if e.kind in ("shape", "stride"):
            access = f"{self.info(e.kind, e.buffer.name)}[{self.expr(e.dim)}]"
            if not self.checked or isinstance(e.dim, n.Const):
                return access, PRIMARY
            # Checked: a dimension past MAX_RANK reads 0 (entries past the rank are 0).
            limit, _ = self.d.literal(MAX_RANK, e.dim.ty)
            zero, _ = self.d.literal(0, e.ty)
            return f"({self.expr_prec(e.dim, REL)} < {limit} ? {access} : {zero})", PRIMARY
        return self.info(e.kind, e.buffer.name), PRIMARY

    def _e_Index(self, e: n.Index) -> tuple[str, int]:
        ptr = f"{self.buffer(e.buffer)}[{self.expr(e.index)}]"
        if e.buffer.name in self.atomic_buffers and self.d.typed_atomics:
            ptr = self.d.atomic_load(f"&{ptr}")
        cond = self.bounds_check(e.buffer, e.index)
        if cond is None:
            return ptr, PRIMARY
        zero = self.expr_prec(n.Const(ty=e.ty, value=False if e.ty is bool_ else 0), LOR)
        return f"({cond} ? {ptr} : {zero})", PRIMARY

    def _e_Unary(self, e: n.Unary) -> tuple[str, int]:
        if e.op == "abs":
            if e.ty.is_int and not e.ty.is_signed:
                return self._expr(e.operand)
            return self.d.abs(self, self.expr(e.operand), e.ty), PRIMARY
        if e.op == "neg" and _is_signed_int(e.ty):
            zero, _ = self.d.literal(0, _UNSIGNED[e.ty.name])
            operand = self._as_unsigned(e.operand, ADD + 1)
            return f"({self.d.type_name(e.ty)})({zero} - {operand})", UNARY
        sym = info(e.op, "unary").spell["c"]  # -, ~ or !
        text = self.expr_prec(e.operand, UNARY)
        if text.startswith(("-", "+")) and sym == "-":
            text = f"({text})"  # `- -x` must not become the decrement `--x`
        return f"{sym}{text}", UNARY

    def _e_Binary(self, e: n.Binary) -> tuple[str, int]:
        op, ty = e.op, e.ty
        if op in ("add", "sub", "mul") and _is_signed_int(ty):
            text, _ = self._unsigned_arith(e)
            return f"({self.d.type_name(ty)})({text})", UNARY
        if op in ("add", "sub", "mul") or (op == "div" and ty.is_float):
            sym, prec = ARITH[op]
            return f"{self.expr_prec(e.lhs, prec)} {sym} {self.expr_prec(e.rhs, prec + 1)}", prec
        if op in BITWISE:
            sym, prec = BITWISE[op]
            # operands of bit operators are parenthesised unless unary/primary (clarity)
            return f"{self.expr_prec(e.lhs, UNARY)} {sym} {self.expr_prec(e.rhs, UNARY)}", prec
        if op in ("shl", "shr"):
            return self._shift(e), SHIFT
        if op in ("max", "min"):
            return self.d.minmax(self, op, self.expr(e.lhs), self.expr(e.rhs), ty), PRIMARY
        if op in ("floordiv", "div", "mod"):
            return self._divmod(e)
        if op == "pow":
            if ty.is_float:
                return self.d.math(self, "pow", [self.expr(e.lhs), self.expr(e.rhs)],
                                   [ty, ty], ty), PRIMARY
            h = self.helper_int_pow(ty)
            return f"{h}({self.expr(e.lhs)}, {self.expr(e.rhs)})", PRIMARY
        compile_error(e.loc, f"unknown binary operator {op!r}")

    # Signed overflow is undefined in C/C++ (compilers assume it never happens), but the
    # language wraps: signed +, -, * and unary - are computed in the unsigned type of the
    # same width and converted back (two's complement on every target).
    def _unsigned_arith(self, e: n.Binary) -> tuple[str, int]:
        """`e` (signed +, -, *) as unsigned arithmetic text, and its precedence."""
        op, rhs_expr = e.op, e.rhs
        if op in ("add", "sub") and isinstance(rhs_expr, n.Const) and rhs_expr.value < 0:
            # i + -1 reads better as i - 1 than as i + 4294967295u (same bits)
            op = "sub" if op == "add" else "add"
            rhs_expr = n.Const(ty=rhs_expr.ty, value=-rhs_expr.value, loc=rhs_expr.loc)
        sym, prec = ARITH[op]
        lhs = self._as_unsigned(e.lhs, prec)
        rhs = self._as_unsigned(rhs_expr, prec + 1)
        return f"{lhs} {sym} {rhs}", prec

    def _as_unsigned(self, e: n.Expr, min_prec: int) -> str:
        """A signed operand as an unsigned value: nested wrapping arithmetic stays
        unsigned, literals become unsigned literals, anything else gets a cast."""
        unsigned = _UNSIGNED[e.ty.name]
        if isinstance(e, n.Const):
            return self.d.literal(int(e.value) % (1 << e.ty.bits), unsigned)[0]
        if isinstance(e, n.Binary) and e.op in ("add", "sub", "mul"):
            text, prec = self._unsigned_arith(e)
            return f"({text})" if prec < min_prec else text
        return f"({self.d.type_name(unsigned)}){self.expr_prec(e, UNARY)}"

    def _shift(self, e: n.Binary) -> str:
        sym = "<<" if e.op == "shl" else ">>"
        bits = e.ty.bits
        lhs = self.expr_prec(e.lhs, UNARY)
        if isinstance(e.rhs, n.Const):
            amount = int(e.rhs.value) % bits  # shift amounts are taken modulo the width
            rhs = str(amount)
        else:
            mask, _ = self.d.literal(bits - 1, e.rhs.ty)
            rhs = f"({self.expr_prec(e.rhs, UNARY)} & {mask})"
        if sym == "<<" and _is_signed_int(e.ty):  # a negative left operand is undefined in C
            unsigned = self.d.type_name(_UNSIGNED[e.ty.name])
            return f"({self.d.type_name(e.ty)})(({unsigned}){lhs} << {rhs})"
        return f"{lhs} {sym} {rhs}"

    def _divmod(self, e: n.Binary) -> tuple[str, int]:
        ty = e.ty
        kind = "mod" if e.op == "mod" else "floordiv"
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        if ty.is_float:  # exact, numpy's semantics (docs/LANGUAGE.md)
            return f"{self.d.float_divmod_helper(self, kind, ty)}({a}, {b})", PRIMARY
        const = e.rhs.value if isinstance(e.rhs, n.Const) else None
        if const is not None and const not in (0, -1):
            if not ty.is_signed:  # C's unsigned / and % are Python's; no zero check
                sym = "/" if kind == "floordiv" else "%"
                return (f"{self.expr_prec(e.lhs, MUL)} {sym} "
                        f"{self.expr_prec(e.rhs, MUL + 1)}"), MUL
            return f"{self.helper_divmod(kind, ty, nonzero=True)}({a}, {b})", PRIMARY
        return f"{self.helper_divmod(kind, ty, nonzero=False)}({a}, {b})", PRIMARY

    def _e_Compare(self, e: n.Compare) -> tuple[str, int]:
        sym, prec = COMPARE[e.op]
        return f"{self.expr_prec(e.lhs, SHIFT)} {sym} {self.expr_prec(e.rhs, SHIFT)}", prec

    def _e_Logical(self, e: n.Logical) -> tuple[str, int]:
        if e.op == "and":
            return f"{self.expr_prec(e.lhs, LAND)} && {self.expr_prec(e.rhs, LAND + 1)}", LAND
        # `a || b && c` compiles but draws -Wparentheses: parenthesise && under ||
        return f"{self.expr_prec(e.lhs, LAND + 1)} || {self.expr_prec(e.rhs, LAND + 1)}", LOR

    def _e_Select(self, e: n.Select) -> tuple[str, int]:
        return (f"{self.expr_prec(e.cond, REL)} ? {self.expr_prec(e.if_true, LOR)} : "
                f"{self.expr_prec(e.if_false, COND)}"), COND

    def _e_Cast(self, e: n.Cast) -> tuple[str, int]:
        if e.operand.ty is e.ty:
            return self._expr(e.operand)
        return self.d.cast(self, e)

    def _e_Plane(self, e: n.Plane) -> tuple[str, int]:
        return self.d.plane(self, e)

    def _e_Bits(self, e: n.Bits) -> tuple[str, int]:
        return self.d.bits(self, e)

    def _e_Call(self, e: n.Call) -> tuple[str, int]:
        args = [self.expr(a) for a in e.args]
        return self.d.math(self, e.func, args, [a.ty for a in e.args], e.ty), PRIMARY

    # ------------------------------------------------------------------ helpers
    def helper(self, name: str, text: str) -> str:
        """Registers a prelude helper (text may use {fn} for the dialect's qualifiers)."""
        return self.prelude.require(name, text.replace("{fn}", self.d.fn_qual))

    def helper_divmod(self, kind: str, ty: DType, nonzero: bool) -> str:
        """`cube_floordiv_i32` / `cube_mod_u32` ...: Python floor semantics, total."""
        return prelude_helpers.divmod_helper(self, kind, ty, nonzero)

    def helper_int_pow(self, ty: DType) -> str:
        return prelude_helpers.int_pow_helper(self, ty)


from . import clike_helpers as prelude_helpers  # noqa: E402  (helpers need CEmitter's API)
from .clike_helpers import (_assigned_vars, _invariant, float_literal,  # noqa: E402,F401
                            scalar_locals)
from .skeleton import render  # noqa: E402,F401  (re-exported for cuda.py and metal.py)


_UNSIGNED = {"i32": u32, "i64": u64}


def _is_signed_int(ty: DType) -> bool:
    return ty.name in _UNSIGNED


def _unroll_pragma(target: str) -> str:
    """What the target writes before a loop marked unroll ("" for none, and for a
    dialect no registered target names)."""
    try:
        return get_target(target).unroll_pragma
    except OptionError:
        return ""
