"""Random typed kernels for the property-based tests (tests/test_fuzz_semantics.py).

One tree gives everything a test compares: its kernel source (`@cube(launch=True)`,
written to a file and imported, since cubepy reads kernels with inspect.getsource), the
same kernel with every input turned into a literal (so the constant folder evaluates it)
and a pure-Python reference that implements docs/LANGUAGE.md independently of cubepy's
code (Python ints wrapped to 32 bits, floats rounded to f32 after every operation).

Expressions: `Node` subclasses with `src(env)` (Python source; `env` maps an input name
to the text that stands for it) and `ev(env)` (the reference value; `env` maps input
names to values). Random control flow lives in tests/fuzz_programs.py.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

INT_TYPES = ("i32", "u32")
NUM_TYPES = ("i32", "u32", "f32")
I32_MIN, I32_MAX = -2**31, 2**31 - 1
U32_MAX = 2**32 - 1
FLT_MIN = 1.1754943508222875e-38


# ----------------------------------------------------------------------------- values

def wrap(v: int, ty: str) -> int:
    v &= 0xFFFFFFFF
    if ty == "i32" and v >= 2**31:
        v -= 2**32
    return v


def f32(x: float) -> float:
    """`x` rounded to f32 (round to nearest even; overflow gives inf)."""
    with np.errstate(all="ignore"):
        return float(np.float32(x))


def f2i(x: float, ty: str) -> int:
    """Saturating float -> int cast, NaN -> 0 (docs/LANGUAGE.md)."""
    if math.isnan(x):
        return 0
    lo, hi = (I32_MIN, I32_MAX) if ty == "i32" else (0, U32_MAX)
    if math.isinf(x):
        return hi if x > 0 else lo
    return max(lo, min(hi, math.trunc(x)))


def int_floordiv(a: int, b: int, ty: str) -> int:
    return 0 if b == 0 else wrap(a // b, ty)


def int_mod(a: int, b: int, ty: str) -> int:
    return a if b == 0 else wrap(a % b, ty)


def fmin(a: float, b: float, is_max: bool) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return max(a, b) if is_max else min(a, b)


def round_half_even(x: float) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    r = round(x)  # Python rounds half to even
    return math.copysign(float(r), x) if r == 0 else float(r)


def float_floordiv(a: float, b: float) -> float:
    """Python's a // b in f32, exact (numpy's floor_divide: x // 0 is +-inf or nan)."""
    with np.errstate(all="ignore"):
        return float(np.floor_divide(np.float32(a), np.float32(b)))


def float_div(a: float, b: float) -> float:
    with np.errstate(all="ignore"):
        return f32(np.float64(a) / np.float64(b))


def float_mod(a: float, b: float) -> float:
    """Python's a % b in f32, exact (numpy's remainder: x % 0 is nan)."""
    with np.errstate(all="ignore"):
        return float(np.remainder(np.float32(a), np.float32(b)))


# ----------------------------------------------------------------------------- literals

def lit_src(v, ty: str, bare: bool = False) -> str:
    """Source text of the constant `v` of type `ty` (typed, or a bare literal)."""
    if ty == "bool":
        return "True" if v else "False"
    if ty == "f32":
        if math.isnan(v):
            return "f32(math.nan)"
        if math.isinf(v):
            return "f32(math.inf)" if v > 0 else "f32(-math.inf)"
        text = repr(float(v))
        return text if bare else f"f32({text})"
    return str(v) if bare else f"{ty}({v})"


# ----------------------------------------------------------------------------- expressions

class Node:
    ty: str
    exact: bool = True    # the same bits on every target (no division, no transcendental)
    folds: bool = True    # the constant folder is expected to evaluate it completely

    def children(self) -> tuple["Node", ...]:
        return ()

    def size(self) -> int:
        return 1 + sum(c.size() for c in self.children())


@dataclass(eq=False)
class Leaf(Node):
    """An input (`name`), read from a buffer, or a literal in the folding variant."""
    name: str
    ty: str

    def src(self, env) -> str:
        return env.get(self.name, self.name)

    def ev(self, env):
        return env[self.name]


@dataclass(eq=False)
class Lit(Node):
    value: object
    ty: str
    bare: bool = False

    def src(self, env) -> str:
        return lit_src(self.value, self.ty, self.bare)

    def ev(self, env):
        return self.value


_BIN_SYM = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "div": "/",
            "and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>"}


@dataclass(eq=False)
class Bin(Node):
    op: str
    a: Node
    b: Node
    ty: str

    def __post_init__(self):
        self.exact = self.op != "div" and self.a.exact and self.b.exact
        float_nofold = self.ty == "f32" and self.op in ("div", "floordiv", "mod")
        self.folds = not float_nofold and self.a.folds and self.b.folds

    def children(self):
        return (self.a, self.b)

    def src(self, env) -> str:
        a, b = self.a.src(env), self.b.src(env)
        if self.op in ("min", "max"):
            return f"{self.op}({a}, {b})"
        return f"({a} {_BIN_SYM[self.op]} {b})"

    def ev(self, env):
        a, b, op, ty = self.a.ev(env), self.b.ev(env), self.op, self.ty
        if ty == "f32":
            if op in ("min", "max"):
                return fmin(a, b, op == "max")
            if op == "floordiv":
                return float_floordiv(a, b)
            if op == "mod":
                return float_mod(a, b)
            if op == "div":
                return float_div(a, b)
            x, y = np.float64(a), np.float64(b)
            with np.errstate(all="ignore"):
                return f32({"add": x + y, "sub": x - y, "mul": x * y}[op])
        if op in ("shl", "shr"):
            amount = b % 32
            return wrap(a << amount, ty) if op == "shl" else wrap(a >> amount, ty)
        if op == "floordiv":
            return int_floordiv(a, b, ty)
        if op == "mod":
            return int_mod(a, b, ty)
        return wrap({"add": a + b, "sub": a - b, "mul": a * b, "and": a & b, "or": a | b,
                     "xor": a ^ b, "min": min(a, b), "max": max(a, b)}[op], ty)


@dataclass(eq=False)
class Un(Node):
    """neg, abs, bitnot, pow<k> (ints), floor/ceil/trunc/round and the inexact math
    functions (floats)."""
    op: str
    a: Node
    ty: str

    INEXACT = ("sqrt", "exp", "log", "sin", "cos", "tanh")

    def __post_init__(self):
        self.exact = self.op not in self.INEXACT and self.a.exact
        self.folds = self.op in ("neg", "abs", "bitnot") or self.op.startswith("pow")
        self.folds = self.folds and self.a.folds

    def children(self):
        return (self.a,)

    def src(self, env) -> str:
        a = self.a.src(env)
        op = self.op
        if op == "neg":
            return f"(-{a})"
        if op == "bitnot":
            return f"(~{a})"
        if op == "abs":
            return f"abs({a})"
        if op.startswith("pow"):
            return f"({a} ** {op[3:]})"
        if op == "round":
            return f"round({a})"
        if op == "sqrt":
            return f"math.sqrt(abs({a}))"
        if op == "exp":
            return f"math.exp(min(max({a}, -30.0), 30.0))"
        if op == "log":
            return f"math.log(abs({a}) + 1.0)"
        if op in ("sin", "cos"):
            return f"math.{op}(min(max({a}, -3.0), 3.0))"
        return f"math.{op}({a})"

    def ev(self, env):
        a, op, ty = self.a.ev(env), self.op, self.ty
        if ty != "f32":
            if op.startswith("pow"):
                return wrap(a ** int(op[3:]), ty)
            return wrap({"neg": -a, "abs": abs(a), "bitnot": ~a}[op], ty)
        if op == "neg":
            return -a
        if op == "abs":
            return abs(a)
        if op in ("floor", "ceil", "trunc"):
            if not math.isfinite(a):
                return a
            r = float(getattr(math, op)(a))
            return math.copysign(r, a) if r == 0 else r
        if op == "round":
            return round_half_even(a)
        if op == "sqrt":
            return f32(math.sqrt(abs(a)))
        if op == "exp":
            return f32(math.exp(fmin(fmin(a, -30.0, True), 30.0, False)))
        if op == "log":
            return f32(math.log(f32(abs(a) + 1.0))) if not math.isinf(a) else math.inf
        if op in ("sin", "cos"):
            return f32(getattr(math, op)(fmin(fmin(a, -3.0, True), 3.0, False)))
        if op == "tanh":
            return f32(math.tanh(a)) if not math.isnan(a) else a
        raise AssertionError(op)


@dataclass(eq=False)
class Cast(Node):
    a: Node
    ty: str

    def __post_init__(self):
        self.exact = self.a.exact
        self.folds = self.a.folds

    def children(self):
        return (self.a,)

    def src(self, env) -> str:
        return f"{self.ty}({self.a.src(env)})"

    def ev(self, env):
        a, src_ty, ty = self.a.ev(env), self.a.ty, self.ty
        if src_ty == "bool":
            return float(a) if ty == "f32" else int(a)
        if ty == "f32":
            return f32(a)
        if src_ty == "f32":
            return f2i(a, ty)
        return wrap(a, ty)


_CMP_SYM = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@dataclass(eq=False)
class Cmp(Node):
    op: str
    a: Node
    b: Node
    ty: str = "bool"

    def __post_init__(self):
        self.exact = self.a.exact and self.b.exact
        self.folds = self.a.folds and self.b.folds

    def children(self):
        return (self.a, self.b)

    def src(self, env) -> str:
        return f"({self.a.src(env)} {_CMP_SYM[self.op]} {self.b.src(env)})"

    def ev(self, env):
        a, b = self.a.ev(env), self.b.ev(env)
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
                "ge": a >= b}[self.op]


@dataclass(eq=False)
class Logic(Node):
    op: str  # and, or, not
    a: Node
    b: Node | None = None
    ty: str = "bool"

    def __post_init__(self):
        kids = self.children()
        self.exact = all(c.exact for c in kids)
        self.folds = all(c.folds for c in kids)

    def children(self):
        return (self.a,) if self.b is None else (self.a, self.b)

    def src(self, env) -> str:
        if self.op == "not":
            return f"(not {self.a.src(env)})"
        return f"({self.a.src(env)} {self.op} {self.b.src(env)})"

    def ev(self, env):
        if self.op == "not":
            return not self.a.ev(env)
        if self.op == "and":
            return self.a.ev(env) and self.b.ev(env)
        return self.a.ev(env) or self.b.ev(env)


@dataclass(eq=False)
class Sel(Node):
    c: Node
    a: Node
    b: Node
    ty: str
    ifexp: bool = False

    def __post_init__(self):
        self.exact = self.c.exact and self.a.exact and self.b.exact
        self.folds = self.c.folds and self.a.folds and self.b.folds

    def children(self):
        return (self.c, self.a, self.b)

    def src(self, env) -> str:
        c, a, b = self.c.src(env), self.a.src(env), self.b.src(env)
        return f"({a} if {c} else {b})" if self.ifexp else f"select({c}, {a}, {b})"

    def ev(self, env):
        a, b = self.a.ev(env), self.b.ev(env)  # both sides are evaluated
        return a if self.c.ev(env) else b


def has_signed_zero_choice(node: Node, env) -> bool:
    """Whether min/max meets +0.0 and -0.0 somewhere (the targets may pick either)."""
    if isinstance(node, Bin) and node.ty == "f32" and node.op in ("min", "max"):
        a, b = node.a.ev(env), node.b.ev(env)
        if a == 0 and b == 0 and math.copysign(1, a) != math.copysign(1, b):
            return True
    return any(has_signed_zero_choice(c, env) for c in node.children())


def _finite(v) -> bool:
    return not isinstance(v, float) or math.isfinite(v)


def finite_math_safe(node: Node, env) -> bool:
    """Whether no arithmetic meets an infinity or NaN (as operand or result) for `env`.

    WGSL (and Vulkan without SignedZeroInfNanPreserve) lets a shader compiler assume
    finite floats, so a GPU may fold `0.0 / x` to 0 or `x * 0.0` to 0: only the
    operations whose NaN behaviour docs/LANGUAGE.md fixes (min, max, float -> int
    casts, select) may see a non-finite value there."""
    if not all(finite_math_safe(c, env) for c in node.children()):
        return False
    if isinstance(node, (Leaf, Lit, Sel, Logic)):
        return True
    if isinstance(node, Bin) and node.op in ("min", "max"):
        return True
    if isinstance(node, Cast) and node.a.ty == "f32" and node.ty != "f32":
        return True
    values = [c.ev(env) for c in node.children()] + [node.ev(env)]
    return all(_finite(v) for v in values)


# `//` and `%` are exact on their own, but end in an addition (the sign correction) that a
# driver may reassociate with the arithmetic around them, as any chain
_ARITH = ("add", "sub", "mul", "div", "floordiv", "mod")


def _arith(node: Node) -> bool:
    while isinstance(node, Un) and node.op in ("neg", "abs"):
        node = node.a
    if isinstance(node, Sel):
        return _arith(node.a) or _arith(node.b)
    return isinstance(node, Bin) and node.ty == "f32" and node.op in _ARITH


def float_chain(node: Node) -> bool:
    """Whether float arithmetic feeds float arithmetic somewhere (`(a + b) - a`,
    `a * b + c`): a GPU compiler may reassociate or fuse such chains (WGSL on Vulkan,
    nvcc's multiply-add contraction), so their result is not the same on every target."""
    if _arith(node) and any(_arith(c) for c in node.children()):
        return True
    return any(float_chain(c) for c in node.children())


# ----------------------------------------------------------------------------- strategies

INT_OPS = ("add", "sub", "mul", "floordiv", "mod", "and", "or", "xor", "shl", "shr",
           "min", "max")
FLOAT_OPS = ("add", "sub", "mul", "min", "max", "floordiv", "mod")
FLOAT_EXACT_UN = ("neg", "abs", "floor", "ceil", "trunc", "round")
INEXACT_ROOT = ("div", "sqrt", "exp", "log", "sin", "cos", "tanh")

I32_EDGES = (0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, -32, 255, 65536, 16777217,
             I32_MIN, I32_MAX, I32_MIN + 1, I32_MAX - 1)
U32_EDGES = (0, 1, 2, 3, 7, 31, 32, 33, 255, 16777217, 2**31, 2**31 - 1, 2**31 + 1,
             U32_MAX, U32_MAX - 1)
F32_EDGES = (0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0,
             math.nan, math.inf, -math.inf, 2.0**31, -2.0**31, 2.0**32, 2147483520.0,
             -2147483904.0, 4294967040.0, 3e9, -3e9, 16777216.0, 16777218.0,
             0.49999997, -0.49999997, 1e-3, 1e10, -1e10)
EDGES = {"i32": I32_EDGES, "u32": U32_EDGES, "f32": tuple(f32(v) for v in F32_EDGES)}


def lit_values(ty: str):
    """A strategy for one literal of `ty`, edge values likely."""
    if ty == "bool":
        return st.booleans()
    if ty == "f32":
        wide = st.floats(-1e6, 1e6, allow_nan=False, width=32).map(
            lambda v: v if abs(v) >= 1e-6 or v == 0 else 0.0)
        return st.one_of(st.sampled_from(EDGES["f32"]),
                         st.integers(-20, 20).map(lambda v: v / 2.0), wide)
    lo, hi = (I32_MIN, I32_MAX) if ty == "i32" else (0, U32_MAX)
    return st.one_of(st.sampled_from(EDGES[ty]), st.integers(max(lo, -20), 20),
                     st.integers(lo, hi))


def random_inputs(rng: np.random.Generator, ty: str, n: int) -> list:
    """`n` input values of `ty`: about a third edge values, a third small, a third wide."""
    kind = rng.integers(0, 3, n)
    edges = EDGES[ty]
    pick = rng.integers(0, len(edges), n)
    out = []
    for k, p in zip(kind.tolist(), pick.tolist()):
        if k == 0:
            out.append(edges[p])
        elif ty == "f32":
            if k == 1:
                out.append(float(rng.integers(-40, 41)) / 4.0)
            else:
                mag = 2.0 ** float(rng.uniform(-20, 34))
                out.append(f32(mag * (1 if rng.integers(0, 2) else -1)))
        elif k == 1:
            out.append(int(rng.integers(0 if ty == "u32" else -20, 21)))
        else:
            out.append(wrap(int(rng.integers(0, 2**32)), ty))
    return out


@dataclass
class Ctx:
    """What an expression may refer to: input (or variable) names per type."""
    leaves: dict[str, list[str]] = field(default_factory=dict)
    num_types: tuple[str, ...] = NUM_TYPES  # the types subexpressions may take


@st.composite
def exprs(draw, ty: str, ctx: Ctx, depth: int) -> Node:
    """An exact expression of type `ty` (bool included), at most `depth` levels deep."""
    if ty == "bool":
        choice = draw(st.integers(0, 9)) if depth > 0 else 0
        if choice <= 5 or depth <= 0:
            t = draw(st.sampled_from(ctx.num_types))
            t = t if ctx.leaves.get(t) or depth > 0 else "i32"
            op = draw(st.sampled_from(tuple(_CMP_SYM)))
            a = draw(exprs(t, ctx, depth - 1))
            b = draw(exprs(t, ctx, depth - 1))
            return Cmp(op, a, b)
        if choice <= 7:
            op = draw(st.sampled_from(("and", "or")))
            return Logic(op, draw(exprs("bool", ctx, depth - 1)),
                         draw(exprs("bool", ctx, depth - 1)))
        if choice == 8:
            return Logic("not", draw(exprs("bool", ctx, depth - 1)))
        return Lit(draw(st.booleans()), "bool")
    leaves = ctx.leaves.get(ty, [])
    if depth <= 0 or draw(st.integers(0, 9)) >= 8:
        if leaves and draw(st.integers(0, 3)) > 0:
            return Leaf(draw(st.sampled_from(leaves)), ty)
        return Lit(draw(lit_values(ty)), ty)
    kind = draw(st.sampled_from(("bin", "bin", "bin", "un", "cast", "sel")))
    if kind == "bin":
        op = draw(st.sampled_from(INT_OPS if ty != "f32" else FLOAT_OPS))
        a = draw(exprs(ty, ctx, depth - 1))
        bty = ty
        if op in ("shl", "shr"):
            bty = draw(st.sampled_from(INT_TYPES))
        b = draw(exprs(bty, ctx, depth - 1))
        for side, other in ((b, a), (a, b)):
            if isinstance(side, Lit) and not isinstance(other, Lit) and _bare_ok(side) \
                    and op not in ("shl", "shr") and draw(st.booleans()):
                side.bare = True
                break
        return Bin(op, a, b, ty)
    if kind == "un":
        ops = {"i32": ("neg", "abs", "bitnot", "pow2", "pow3"),
               "u32": ("bitnot", "pow2", "pow3")}.get(ty, FLOAT_EXACT_UN)
        return Un(draw(st.sampled_from(ops)), draw(exprs(ty, ctx, depth - 1)), ty)
    if kind == "cast":
        src = draw(st.sampled_from([t for t in ctx.num_types if t != ty] +
                                   (["bool"] if ty != "f32" else [])))
        return Cast(draw(exprs(src, ctx, depth - 1)), ty)
    c = draw(exprs("bool", ctx, depth - 1))
    return Sel(c, draw(exprs(ty, ctx, depth - 1)), draw(exprs(ty, ctx, depth - 1)), ty,
               ifexp=draw(st.booleans()))


def _bare_ok(lit: Lit) -> bool:
    v = lit.value
    if lit.ty == "f32":
        return math.isfinite(v) and v != 0
    return (0 if lit.ty == "u32" else -100) <= v <= 100


@st.composite
def root_exprs(draw, ty: str, ctx: Ctx, depth: int) -> Node:
    """An expression to store: exact, or (f32) one inexact operation over exact ones."""
    if ty == "f32" and draw(st.integers(0, 3)) == 0:
        op = draw(st.sampled_from(INEXACT_ROOT))
        a = draw(exprs("f32", ctx, depth - 1))
        if op == "div":
            return Bin("div", a, draw(exprs("f32", ctx, depth - 1)), "f32")
        return Un(op, a, "f32")
    return draw(exprs(ty, ctx, depth))


# ----------------------------------------------------------------------------- kernels

_MODULE_DIR = tempfile.mkdtemp(prefix="cubepy_fuzz_")
_MODULES: dict[str, object] = {}

HEADER = ("import math\n"
          "import cubepy\n"
          "from cubepy import (cube, Array, i32, u32, f32, bool_, ABSOLUTE_POS, select,\n"
          "                    terminate)\n\n\n")


def load_kernel(source: str, name: str = "kernel"):
    """Imports `source` (a module text defining `name`) from a file; cached by text."""
    key = hashlib.sha1(source.encode()).hexdigest()[:16]
    mod = _MODULES.get(key)
    if mod is None:
        mod_name = f"cubepy_fuzz_{key}"
        path = os.path.join(_MODULE_DIR, mod_name + ".py")
        with open(path, "w") as fh:
            fh.write(source)
        spec = importlib.util.spec_from_file_location(mod_name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
        _MODULES[key] = mod
    return getattr(mod, name)


def leaves_of(node: Node) -> list[Leaf]:
    if isinstance(node, Leaf):
        return [node]
    return [x for c in node.children() for x in leaves_of(c)]


def input_names(node: Node) -> list[tuple[str, str]]:
    """(name, type) of every input the tree reads, sorted by name."""
    return sorted({(x.name, x.ty) for x in leaves_of(node)})


def expr_kernel_source(root: Node) -> str:
    """The kernel reading each input from its own buffer and storing the result."""
    names = input_names(root)
    params = ", ".join([f"p_{n}: Array[{t}]" for n, t in names] + [f"out: Array[{root.ty}]"])
    lines = ["@cube(launch=True)", f"def kernel({params}):", "    i = ABSOLUTE_POS"]
    lines += [f"    {n} = p_{n}[i]" for n, _ in names]
    lines.append(f"    out[i] = {root.src({})}")
    return HEADER + "\n".join(lines) + "\n"


def literal_kernel_source(root: Node, env: dict) -> str:
    """The same expression with every input replaced by its value as a literal."""
    texts = {n: lit_src(env[n], t) for n, t in input_names(root)}
    lines = ["@cube(launch=True)", f"def kernel(out: Array[{root.ty}]):",
             f"    out[ABSOLUTE_POS] = {root.src(texts)}"]
    return HEADER + "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- comparison

def ulp(x: float) -> float:
    x = abs(x)
    if not math.isfinite(x):
        return 0.0
    return max(float(np.spacing(np.float32(x))), 1.4e-45)


def float_matches(ref: float, got: float, ulps: int = 0, zero_sign_free: bool = False,
                  atol: float = 0.0) -> bool:
    """`got` equals `ref` (NaN matches NaN, +0 matches -0), within `ulps` units in the
    last place (or `atol`) when the operation is inexact. Results below the smallest
    normal f32 also match zero (a GPU may flush subnormals)."""
    if math.isnan(ref) or math.isnan(got):
        return math.isnan(ref) and math.isnan(got)
    if ref == got:
        return True
    if abs(ref) < FLT_MIN and abs(got) < FLT_MIN:
        return True
    if math.isinf(ref) or math.isinf(got):
        return False
    return abs(ref - got) <= max(ulps * ulp(ref), atol)
