"""scalarize_lines: every line value becomes `size` scalar values.

The frontend types a value read from a `Tensor[Line[T]]` launched with line size n as
`LineType(T, n)`; operations on lines are elementwise and a scalar meets a line through
a broadcast (`Cast` of the scalar to the line type). This pass, the first of the
pipeline, rewrites the kernel so that no LineType remains:

- a line variable `v` becomes n variables `v_0 .. v_{n-1}` (fresh names);
- a line read `x[i]` becomes the element reads `x[i * n + k]`, a line store `x[i] = v`
  the n element stores (the index is computed once, into a temporary); in a checked
  launch a line index is first clamped so that `i * n + k` cannot wrap around into the
  buffer;
- an atomic on a line buffer becomes one atomic per element, its old values going to
  the result's parts;
- every other line expression is rebuilt per element k (a broadcast gives the scalar);
- `v[k]` (an `Extract`) is element k's scalar, element k of a `MakeLine` its k-th
  scalar;
- `x.buffer_len()` of a line buffer counts lines: the element count `// n`. (`x.len()`
  already counts lines: the host packs the tensor's `len`, which is in lines.)

Element accesses keep the usual bounds checks, so in a checked launch each element of a
line out of range reads 0 / is dropped. Code generators and runtimes never see a line.

A whole line read or stored from a parameter aligned to its line (`Param.aligned`) or
from shared memory becomes one `LoadLine` (into n scalars) or `StoreLine` (of n
scalars), which targets with vector accesses emit as one (CUDA's float4, Metal's half4,
...) and the others lower back to the n element accesses (lower_line_access). Only reads
that the statement surely makes are grouped: not those under a select, `and`/`or`, or an
element read `x[i][k]`, nor in a while condition.

An asynchronous copy (`AsyncCopy`) from a parameter not aligned to its line becomes the
plain element copy (passes/async_copy.py): cp.async needs aligned addresses.
"""
from __future__ import annotations

import dataclasses

from .. import nodes as ir
from ..names import NameTable
from ..types import LineType, bool_ as BOOL
from ..visit import reads_memory, walk_all_exprs, walk_exprs, walk_stmts
from .line_access import line_element_index
from .needs import has_line_values


def scalarize_lines(kernel: ir.Kernel) -> ir.Kernel:
    """The kernel with every line value split into scalars. The pipeline runs it only on
    a kernel with lines (passes/needs.py)."""
    return _Scalarizer(kernel).run()


class _Scalarizer:
    def __init__(self, kernel: ir.Kernel):
        self.kernel = kernel
        self.sizes = {p.name: p.line_size for p in kernel.params if p.line_size > 1}
        self.names = NameTable({p.name for p in kernel.params}
                               | {d.buffer.name for d in kernel.shared}
                               | {d.buffer.name for d in kernel.local_arrays})
        for s in walk_stmts(kernel.body):
            for f in dataclasses.fields(s):
                v = getattr(s, f.name)
                if isinstance(v, ir.Var):
                    self.names.reserve(v.name)
        for e in walk_all_exprs(kernel.body):
            if isinstance(e, ir.Load):
                self.names.reserve(e.var.name)
        self.parts: dict[str, tuple[ir.Var, ...]] = {}
        self.temps: list[ir.Var] = []  # declared at the top of the kernel
        # line indices computed once before the statement being rewritten (None where
        # that is not allowed: a while condition runs on every iteration)
        self.pre: list[ir.Stmt] | None = None
        self.hoisted: dict[ir.Expr, ir.Var] = {}
        # buffers whose lines may be accessed whole, the whole-line reads made for the
        # statement being rewritten, and whether the expression at hand is surely read
        self.whole = _whole_line_buffers(kernel)
        self.copied_whole = _whole_line_buffers(kernel, (1, 2, 4, 8))  # by cp.async
        self.line_reads: dict[tuple[str, ir.Expr], tuple[ir.Var, ...]] = {}
        self.sure = False

    def run(self) -> ir.Kernel:
        body = self.block(self.kernel.body)
        if self.temps:
            loc = body.stmts[0].loc if body.stmts else self.kernel.loc
            body = ir.Block(tuple(ir.Declare(var=v, loc=loc) for v in self.temps)
                            + body.stmts)
        params = tuple(dataclasses.replace(p, line_size=1, aligned=True)
                       if p.line_size > 1 else p for p in self.kernel.params)
        out = dataclasses.replace(self.kernel, params=params, body=body)
        if has_line_values(out):  # a compiler bug, never a user's mistake
            raise AssertionError(f"scalarize_lines left a line in {out.name}")
        return out

    # -- names --------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        return self.names.fresh(base)  # base, base_1, base_2, ...

    def split(self, var: ir.Var) -> tuple[ir.Var, ...]:
        """The scalar variables standing for the line variable `var`."""
        parts = self.parts.get(var.name)
        if parts is None:
            line = var.ty
            parts = tuple(ir.Var(self.fresh(f"{var.name}_{k}"), line.elem)
                          for k in range(line.size))
            self.parts[var.name] = parts
        return parts

    # -- expressions --------------------------------------------------------------------
    def scalar(self, e: ir.Expr) -> ir.Expr:
        """A scalar expression: an element taken from a line (`Extract`) becomes that
        element's scalar; `buffer_len` of a line buffer is counted in lines."""
        if isinstance(e, ir.Extract):
            return self.extract(e)
        if isinstance(e, ir.Meta) and e.kind == "buffer_len" \
                and e.buffer.space == "global" and e.buffer.name in self.sizes:
            n = ir.Const(ty=e.ty, value=self.sizes[e.buffer.name], loc=e.loc)
            return ir.Binary(ty=e.ty, op="floordiv", lhs=e, rhs=n, loc=e.loc)
        changes: dict = {}
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, ir.Expr):
                changes[f.name] = self.scalar(v)
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
                changes[f.name] = tuple(self.scalar(x) for x in v)
        return dataclasses.replace(e, **changes) if changes else e

    def element(self, e: ir.Expr, k: int) -> ir.Expr:
        """Element k of `e` (a line expression; a scalar is its own every element)."""
        line = e.ty
        if not isinstance(line, LineType):
            return self.scalar(e)
        elem, loc = line.elem, e.loc
        if isinstance(e, ir.Load):
            return ir.Load(ty=elem, var=self.split(e.var)[k], loc=loc)
        if isinstance(e, ir.Index):
            base = self.hoist(self.clamp(self.scalar(e.index), line.size), e.buffer.name)
            parts = self.whole_read(e.buffer, base, line.size, loc) if self.sure else None
            if parts is not None:
                return ir.Load(ty=elem, var=parts[k], loc=loc)
            return ir.Index(ty=elem, buffer=e.buffer, loc=loc,
                            index=line_element_index(base, line.size, k))
        if isinstance(e, ir.MakeLine):  # a line built from scalars: element k's own
            whole = _shared_line_read(e) if self.sure else None
            if whole is not None:  # the frontend's read of a line of shared memory
                buffer, line_index = whole
                base = self.hoist(self.scalar(line_index), buffer.name)
                parts = self.whole_read(buffer, base, len(e.elems), loc)
                if parts is not None:
                    return ir.Load(ty=elem, var=parts[k], loc=loc)
            return self.scalar(e.elems[k])
        if isinstance(e, ir.Select):  # a branch's reads are not surely made
            sure, self.sure = self.sure, False
            try:
                return dataclasses.replace(
                    e, ty=elem, cond=self.element(e.cond, k),
                    if_true=self.element(e.if_true, k), if_false=self.element(e.if_false, k))
            finally:
                self.sure = sure
        if isinstance(e, ir.Cast):  # a conversion per element, or a broadcast
            src = self.element(e.operand, k)
            return src if src.ty is elem else ir.Cast(ty=elem, operand=src, loc=loc)
        # elementwise operators, math functions, selects, ...: rebuilt per element
        changes: dict = {"ty": elem}
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, ir.Expr):
                changes[f.name] = self.element(v, k)
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
                changes[f.name] = tuple(self.element(x, k) for x in v)
        return dataclasses.replace(e, **changes)

    def whole_read(self, buffer: ir.BufferRef, base: ir.Expr, size: int,
                   loc: ir.Loc) -> tuple[ir.Var, ...] | None:
        """The scalars a `LoadLine` of line `base` reads before the statement (one per
        line and statement), or None where the line is read element by element."""
        if not self.can_access_whole(buffer, base):
            return None
        key = (buffer.name, base)
        parts = self.line_reads.get(key)
        if parts is None:
            parts = tuple(ir.Var(self.fresh(f"{buffer.name}_{k}"), buffer.elem)
                          for k in range(size))
            self.temps.extend(parts)
            self.pre.append(ir.LoadLine(buffer=buffer, line=base, parts=parts, loc=loc))
            self.line_reads[key] = parts
        return parts

    def can_access_whole(self, buffer: ir.BufferRef, base: ir.Expr) -> bool:
        """Whether line `base` of `buffer` may be one access: an aligned parameter or
        shared memory, and a line index known before the statement (a constant or a
        variable: no statement assigns a variable before it has read its operands)."""
        return (self.pre is not None and buffer.space in ("global", "shared")
                and buffer.name in self.whole and isinstance(base, (ir.Const, ir.Load)))

    def extract(self, e: ir.Extract) -> ir.Expr:
        """Element `e.index` of a line: that element's scalar for a constant index,
        else a select over the elements (0 when out of range)."""
        sure, self.sure = self.sure, False  # one element: read element by element
        try:
            return self._extract(e)
        finally:
            self.sure = sure

    def _extract(self, e: ir.Extract) -> ir.Expr:
        index = self.scalar(e.index)
        size = e.value.ty.size
        if isinstance(index, ir.Const):
            k = int(index.value)
            return self.element(e.value, k) if 0 <= k < size else \
                ir.Const(ty=e.ty, value=_zero(e.ty), loc=e.loc)
        out: ir.Expr = ir.Const(ty=e.ty, value=_zero(e.ty), loc=e.loc)
        for k in reversed(range(size)):
            hit = ir.Compare(ty=BOOL, op="eq", lhs=index, loc=e.loc,
                             rhs=ir.Const(ty=index.ty, value=k, loc=e.loc))
            out = ir.Select(ty=e.ty, cond=hit, if_true=self.element(e.value, k),
                            if_false=out, loc=e.loc)
        return out

    def clamp(self, index: ir.Expr, size: int) -> ir.Expr:
        """A global line index clamped (`_clamp`) in a checked launch. An unchecked launch
        promises every index in range, so there the index stays as written: the clamp
        would only cost a `min` per access and keep the C compilers from folding the
        addresses of neighbouring lines into one base and constant offsets."""
        return _clamp(index, size) if self.kernel.checked else index

    # -- statements ---------------------------------------------------------------------
    def hoist(self, index: ir.Expr, buffer: str) -> ir.Expr:
        """`index` computed once, into a temporary assigned before the statement, when it
        is more than a variable or a constant. Never an index that reads memory: the
        read could be one the program guards (`i < n and x[idx[i]][0] > 0`)."""
        if self.pre is None or isinstance(index, (ir.Const, ir.Load)) or reads_memory(index):
            return index
        tmp = self.hoisted.get(index)
        if tmp is None:
            tmp = ir.Var(self.fresh(f"{buffer}_line"), index.ty)
            self.temps.append(tmp)
            self.pre.append(ir.Assign(var=tmp, value=index, loc=index.loc))
            self.hoisted[index] = tmp
        return ir.Load(ty=tmp.ty, var=tmp, loc=index.loc)

    def settle(self, values: list[ir.Expr], base: str,
               loc: ir.Loc) -> tuple[list[ir.Stmt], list[ir.Expr]]:
        """Each element's value computed into a temporary first: needed when element k
        reads another element (`v = Line(v[1], v[0])`) that an earlier assignment or
        store of the same statement would already have changed."""
        out, loads = [], []
        for k, x in enumerate(values):
            tmp = ir.Var(self.fresh(f"{base}_{k}_new"), x.ty)
            self.temps.append(tmp)
            out.append(ir.Assign(var=tmp, value=x, loc=loc))
            loads.append(ir.Load(ty=x.ty, var=tmp, loc=loc))
        return out, loads

    def block(self, block: ir.Block) -> ir.Block:
        out: list[ir.Stmt] = []
        for s in block.stmts:
            out.extend(self.stmt(s))
        return ir.Block(tuple(out))

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        saved = self.pre, self.hoisted, self.line_reads, self.sure
        self.pre, self.hoisted = (None if isinstance(s, ir.While) else []), {}
        self.line_reads, self.sure = {}, False
        try:
            out = self.rewrite(s)
            return (self.pre or []) + out
        finally:
            self.pre, self.hoisted, self.line_reads, self.sure = saved

    def sure_elements(self, e: ir.Expr, size: int) -> list[ir.Expr]:
        """Elements 0..size-1 of `e`, a value the statement surely computes: its whole
        line reads may be single accesses."""
        self.sure = True
        try:
            return [self.element(e, k) for k in range(size)]
        finally:
            self.sure = False

    def rewrite(self, s: ir.Stmt) -> list[ir.Stmt]:
        loc = s.loc
        if isinstance(s, ir.Declare) and isinstance(s.var.ty, LineType):
            return [ir.Declare(var=v, loc=loc) for v in self.split(s.var)]
        if isinstance(s, ir.Assign) and isinstance(s.var.ty, LineType):
            size = s.var.ty.size
            if isinstance(s.value, ir.Index):  # `v = x[i]`: straight into v's parts
                base = self.hoist(self.clamp(self.scalar(s.value.index), size),
                                  s.value.buffer.name)
                if self.can_access_whole(s.value.buffer, base):
                    parts = self.split(s.var)
                    declare = [ir.Declare(var=v, loc=loc) for v in parts] if s.declare \
                        else []
                    return declare + [ir.LoadLine(buffer=s.value.buffer, line=base,
                                                  parts=parts, loc=loc)]
            values = self.sure_elements(s.value, size)
            out = []
            if _crosses(s.value) and any(isinstance(x, ir.Load) and x.var.name == s.var.name
                                         for x in walk_exprs(s.value)):
                out, values = self.settle(values, s.var.name, loc)
            return out + [ir.Assign(var=v, value=x, declare=s.declare, loc=loc)
                          for v, x in zip(self.split(s.var), values)]
        if isinstance(s, ir.Store) and isinstance(s.value.ty, LineType):
            size = s.value.ty.size
            index = self.clamp(self.scalar(s.index), size)
            out: list[ir.Stmt] = []
            index = self.hoist(index, s.buffer.name)
            if not isinstance(index, (ir.Const, ir.Load)):  # it reads memory
                tmp = ir.Var(self.fresh(f"{s.buffer.name}_line"), index.ty)
                self.temps.append(tmp)
                out.append(ir.Assign(var=tmp, value=index, loc=loc))
                index = ir.Load(ty=tmp.ty, var=tmp, loc=loc)
            values = self.sure_elements(s.value, size)
            if _crosses(s.value) and any(isinstance(x, ir.Index) and x.buffer == s.buffer
                                         for x in walk_exprs(s.value)):
                pre, values = self.settle(values, s.buffer.name, loc)
                out += pre
            if self.can_access_whole(s.buffer, index):
                return out + [ir.StoreLine(buffer=s.buffer, line=index, values=tuple(values),
                                           loc=loc)]
            out += [ir.Store(buffer=s.buffer, index=line_element_index(index, size, k),
                             value=values[k], loc=loc) for k in range(size)]
            return out
        if isinstance(s, ir.StoreLine):  # the frontend's store of a line of shared memory
            values = tuple(self.scalar(v) for v in s.values)
            line = self.hoist(self.scalar(s.line), s.buffer.name)
            if s.buffer.name in self.whole:
                return [ir.StoreLine(buffer=s.buffer, line=line, values=values, loc=loc)]
            return [ir.Store(buffer=s.buffer, index=line_element_index(line, len(values), k),
                             value=v, loc=loc) for k, v in enumerate(values)]
        if isinstance(s, ir.AsyncCopy) and s.src.name in self.sizes \
                and s.src.name not in self.copied_whole:  # misaligned: copied plainly
            from .async_copy import plain_copy
            return plain_copy(dataclasses.replace(s, dst_line=self.scalar(s.dst_line),
                                                  src_line=self.scalar(s.src_line)))
        if isinstance(s, ir.AtomicOp) and s.buffer.space == "global" \
                and s.buffer.name in self.sizes:
            return self.atomic(s, self.sizes[s.buffer.name])
        changes = {}
        for f in dataclasses.fields(s):
            v = getattr(s, f.name)
            if isinstance(v, ir.Expr):
                changes[f.name] = self.scalar(v)
            elif isinstance(v, ir.Block):
                changes[f.name] = self.block(v)
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
                changes[f.name] = tuple(self.scalar(x) for x in v)
        return [dataclasses.replace(s, **changes) if changes else s]

    def atomic(self, s: ir.AtomicOp, size: int) -> list[ir.Stmt]:
        """An atomic on a line buffer: one atomic per element, each atomic on its own
        (as CUDA's atomicAdd on __half2 is), the old values into the result's parts.
        Operands are computed before the first element's atomic changes memory."""
        loc, out = s.loc, []
        index = self.hoist(self.clamp(self.scalar(s.index), size), s.buffer.name)
        if not isinstance(index, (ir.Const, ir.Load)):  # it reads memory
            tmp = ir.Var(self.fresh(f"{s.buffer.name}_line"), index.ty)
            self.temps.append(tmp)
            out.append(ir.Assign(var=tmp, value=index, loc=loc))
            index = ir.Load(ty=tmp.ty, var=tmp, loc=loc)
        operands = {}
        for field in ("value", "compare"):
            e = getattr(s, field)
            if e is None:
                continue
            parts = [self.element(e, k) for k in range(size)]
            if _crosses(e) or any(isinstance(x, ir.Index) and x.buffer == s.buffer
                                  for x in walk_exprs(e)):
                pre, parts = self.settle(parts, f"{s.buffer.name}_{field}", loc)
                out += pre
            operands[field] = parts
        results = self.split(s.result) if s.result is not None else (None,) * size
        for k in range(size):
            out.append(ir.AtomicOp(
                op=s.op, buffer=s.buffer, index=line_element_index(index, size, k),
                value=operands["value"][k] if "value" in operands else None,
                compare=operands["compare"][k] if "compare" in operands else None,
                result=results[k], loc=loc))
        return out


def _whole_line_buffers(kernel: ir.Kernel, sizes: tuple[int, ...] = (2, 4, 8)
                        ) -> frozenset[str]:
    """Buffers whose lines may be read and written as one access: parameters aligned to
    their line and shared memory (the code generators align it), of 2, 4 or 8-byte
    elements (bools stay element by element), used by no atomic (Metal types such
    buffers atomic). An asynchronous copy moves bytes, so for it `sizes` adds the 8-bit
    floats' 1."""
    atomic = {s.buffer.name for s in walk_stmts(kernel.body) if isinstance(s, ir.AtomicOp)}
    params = [p.buffer for p in kernel.params
              if p.line_size > 1 and p.aligned and p.kind != "scalar"]
    return frozenset(b.name for b in params + [d.buffer for d in kernel.shared]
                     if not b.elem.is_bool and b.elem.itemsize in sizes
                     and b.name not in atomic)


def _shared_line_read(e: ir.MakeLine) -> tuple[ir.BufferRef, ir.Expr] | None:
    """(array, line index) when `e` is the frontend's read of a line of shared memory:
    element k is `array[line * n + k]` for one line index (exprs.shared_element)."""
    first = e.elems[0] if e.elems else None
    if not (isinstance(first, ir.Index) and first.buffer.space == "shared"
            and isinstance(first.index, ir.Binary) and first.index.op == "mul"
            and first.index.rhs == ir.Const(ty=first.index.ty, value=len(e.elems))):
        return None
    for k, x in enumerate(e.elems[1:], 1):
        if not (isinstance(x, ir.Index) and x.buffer == first.buffer
                and x.index == ir.Binary(ty=x.index.ty, op="add", lhs=first.index,
                                         rhs=ir.Const(ty=x.index.ty, value=k))):
            return None
    return first.buffer, first.index.lhs


def _zero(ty):
    return False if ty.is_bool else 0.0 if ty.is_float else 0


def _clamp(index: ir.Expr, size: int) -> ir.Expr:
    """`min(index, top)` with `top * size + size - 1` still representable: a line index
    too large for its elements' indices then stays out of range (a checked read gives
    0) instead of wrapping around onto the start of the buffer."""
    if isinstance(index, ir.Const) or size == 1:
        return index
    ty = index.ty
    top = ((1 << (ty.bits - 1 if ty.is_signed else ty.bits)) - 1) // size
    return ir.Binary(ty=ty, op="min", lhs=index, rhs=ir.Const(ty=ty, value=top,
                                                              loc=index.loc), loc=index.loc)


def _crosses(e: ir.Expr) -> bool:
    """True when some element of `e` may read another element (element reads, lines
    built from scalars); otherwise element k reads only elements k."""
    return any(isinstance(x, (ir.Extract, ir.MakeLine)) for x in walk_exprs(e))
