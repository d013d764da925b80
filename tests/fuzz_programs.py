"""Random control-flow kernels for tests/test_fuzz_semantics.py.

A `Program` is a list of statements (`Assign`, `Emit`, `Jump`, `IfStmt`, `ForStmt`,
`WhileStmt`) over i32 variables; each statement renders itself as kernel source lines
and runs itself in a Python interpreter of docs/LANGUAGE.md, so one tree gives both the
kernel and its expected per-unit stores.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from fuzz_kernels import _BIN_SYM, HEADER, INT_TYPES, Bin, Ctx, Lit, Node, exprs


SLOTS = 4  # outputs per unit: out[i * SLOTS + slot]


class Break_(Exception):
    pass


class Continue_(Exception):
    pass


class Terminate_(Exception):
    pass


@dataclass(eq=False)
class Assign:
    var: str
    value: Node
    aug: str | None = None  # "add", "mul", "xor": `var op= value`

    def lines(self, ind: str) -> list[str]:
        if self.aug:
            return [f"{ind}{self.var} {_BIN_SYM[self.aug]}= {self.value.src({})}"]
        return [f"{ind}{self.var} = {self.value.src({})}"]

    def run(self, env, out):
        v = self.value.ev(env)
        if self.aug:
            v = Bin(self.aug, Lit(env[self.var], "i32"), Lit(v, "i32"), "i32").ev({})
        env[self.var] = v


@dataclass(eq=False)
class Emit:
    slot: int
    value: Node

    def lines(self, ind: str) -> list[str]:
        return [f"{ind}out[i * {SLOTS} + {self.slot}] = {self.value.src({})}"]

    def run(self, env, out):
        out[self.slot] = self.value.ev(env)


@dataclass(eq=False)
class Jump:
    kind: str  # break, continue, terminate

    def lines(self, ind: str) -> list[str]:
        return [f"{ind}{'terminate()' if self.kind == 'terminate' else self.kind}"]

    def run(self, env, out):
        raise {"break": Break_, "continue": Continue_, "terminate": Terminate_}[self.kind]()


def _block_lines(stmts, ind: str) -> list[str]:
    lines = [x for s in stmts for x in s.lines(ind)]
    return lines or [f"{ind}pass"]


def run_block(stmts, env, out) -> None:
    for s in stmts:
        s.run(env, out)


@dataclass(eq=False)
class IfStmt:
    cond: Node
    then: list
    orelse: list

    def lines(self, ind: str, kw: str = "if") -> list[str]:
        lines = [f"{ind}{kw} {self.cond.src({})}:"] + _block_lines(self.then, ind + "    ")
        if len(self.orelse) == 1 and isinstance(self.orelse[0], IfStmt):
            return lines + self.orelse[0].lines(ind, "elif")
        if self.orelse:
            lines += [f"{ind}else:"] + _block_lines(self.orelse, ind + "    ")
        return lines

    def run(self, env, out):
        run_block(self.then if self.cond.ev(env) else self.orelse, env, out)


@dataclass(eq=False)
class ForStmt:
    var: str
    start: Node
    stop: Node
    step: Node | None
    body: list

    def lines(self, ind: str) -> list[str]:
        args = [self.start.src({}), self.stop.src({})]
        if self.step is not None:
            args.append(self.step.src({}))
        return [f"{ind}for {self.var} in range({', '.join(args)}):"] + \
            _block_lines(self.body, ind + "    ")

    def run(self, env, out):
        start, stop = self.start.ev(env), self.stop.ev(env)
        step = 1 if self.step is None else self.step.ev(env)
        if step == 0:  # a zero step runs no iteration
            return
        for j in range(start, stop, step):
            env[self.var] = j
            try:
                run_block(self.body, env, out)
            except Break_:
                break
            except Continue_:
                continue
        env.pop(self.var, None)


@dataclass(eq=False)
class WhileStmt:
    counter: str
    limit: int
    cond: Node | None
    body: list

    def lines(self, ind: str) -> list[str]:
        cond = f"{self.counter} < {self.limit}"
        if self.cond is not None:
            cond += f" and {self.cond.src({})}"
        return [f"{ind}{self.counter} = 0", f"{ind}while {cond}:",
                f"{ind}    {self.counter} += 1"] + _block_lines(self.body, ind + "    ")

    def run(self, env, out):
        env[self.counter] = 0
        while env[self.counter] < self.limit and (self.cond is None or self.cond.ev(env)):
            env[self.counter] += 1
            try:
                run_block(self.body, env, out)
            except Break_:
                break
            except Continue_:
                continue


@dataclass(eq=False)
class Program:
    inputs: tuple[str, ...]
    variables: tuple[str, ...]
    body: list

    def source(self) -> str:
        params = ", ".join([f"p_{x}: Array[i32]" for x in self.inputs] + ["out: Array[i32]"])
        lines = ["@cube(launch=True)", f"def kernel({params}):", "    i = ABSOLUTE_POS"]
        lines += [f"    {x} = p_{x}[i]" for x in self.inputs]
        lines += [f"    {v} = {self.inputs[k % len(self.inputs)]}"
                  for k, v in enumerate(self.variables)]
        lines += _block_lines(self.body, "    ")
        lines += [f"    out[i * {SLOTS} + {k}] = {v}" for k, v in enumerate(self.variables)]
        return HEADER + "\n".join(lines) + "\n"

    def run(self, inputs: dict, sentinel: int) -> list[int]:
        """The outputs of one unit, [sentinel] * SLOTS where nothing was stored."""
        env = dict(inputs)
        for k, v in enumerate(self.variables):
            env[v] = inputs[self.inputs[k % len(self.inputs)]]
        out = [sentinel] * SLOTS
        try:
            run_block(self.body, env, out)
        except Terminate_:
            return out
        for k, v in enumerate(self.variables):
            out[k] = env[v]
        return out


@dataclass
class FlowCtx:
    """Names in scope, fresh-name counters and the loop nesting of a program."""
    names: list[str]
    counter: list[int] = field(default_factory=lambda: [0])
    loops: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter[0] += 1
        return f"{prefix}{self.counter[0]}"

    def expr_ctx(self) -> Ctx:
        return Ctx({"i32": list(self.names)}, num_types=INT_TYPES)


def _bounded(e: Node, span: int) -> Node:
    """`e % (2 * span + 1) - span`: a value in [-span, span]."""
    return Bin("sub", Bin("mod", e, Lit(2 * span + 1, "i32", bare=True), "i32"),
               Lit(span, "i32", bare=True), "i32")


@st.composite
def statements(draw, fctx: FlowCtx, depth: int, variables: tuple[str, ...]) -> list:
    """A block of 1 to 3 statements (4 at the top)."""
    out = []
    for _ in range(draw(st.integers(1, 3 if depth < 3 else 4))):
        kinds = []  # compound statements first: hypothesis favours early choices
        if depth > 0:
            kinds += (["for", "while"] if fctx.loops < 2 else []) + ["if", "if"]
        kinds += ["assign", "assign", "emit"]
        if fctx.loops:
            kinds += ["break", "continue"]
        kinds.append("terminate")
        kind = draw(st.sampled_from(kinds))
        ectx = fctx.expr_ctx()
        small = lambda: exprs("i32", ectx, draw(st.integers(0, 2)))  # noqa: E731
        if kind == "assign":
            aug = draw(st.sampled_from((None, None, "add", "mul", "xor")))
            out.append(Assign(draw(st.sampled_from(variables)), draw(small()), aug))
        elif kind == "emit":
            out.append(Emit(draw(st.integers(0, SLOTS - 1)), draw(small())))
        elif kind in ("break", "continue", "terminate"):
            out.append(Jump(kind))
        elif kind == "if":
            cond = draw(exprs("bool", ectx, 2))
            then = draw(statements(fctx, depth - 1, variables))
            orelse = draw(statements(fctx, depth - 1, variables)) if draw(st.booleans()) \
                else []
            out.append(IfStmt(cond, then, orelse))
        elif kind == "for":
            var = fctx.fresh("j")
            start, stop = _bounded(draw(small()), 6), _bounded(draw(small()), 6)
            step_kind = draw(st.sampled_from(("none", "const", "runtime")))
            step = None if step_kind == "none" else \
                Lit(draw(st.sampled_from((1, 2, 3, -1, -2, -3))), "i32", bare=True) \
                if step_kind == "const" else _bounded(draw(small()), 2)
            inner = FlowCtx(fctx.names + [var], fctx.counter, fctx.loops + 1)
            out.append(ForStmt(var, start, stop, step,
                               draw(statements(inner, depth - 1, variables))))
        else:
            counter = fctx.fresh("w")
            cond = draw(exprs("bool", ectx, 1)) if draw(st.booleans()) else None
            inner = FlowCtx(fctx.names + [counter], fctx.counter, fctx.loops + 1)
            out.append(WhileStmt(counter, draw(st.integers(1, 6)), cond,
                                 draw(statements(inner, depth - 1, variables))))
        if kind in ("break", "continue", "terminate"):
            break  # the rest of the block would be dead code
    return out


@st.composite
def programs(draw) -> Program:
    inputs = ("x0", "x1")
    variables = ("v0", "v1", "v2")
    fctx = FlowCtx(list(inputs + variables))
    return Program(inputs, variables, draw(statements(fctx, 3, variables)))
