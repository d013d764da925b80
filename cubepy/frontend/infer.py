"""Type inference for the frontend: a union-find over type variables.

While the builder turns the ast into IR, every expression's `ty` is either a concrete
`DType` or a `TVar`. A literal gets a fresh int- or float-literal variable; operators,
assignments, comparisons and `select` unify their operands. At the end every variable
resolves to a concrete DType (free int literals -> i32, float literals -> f32) and the
IR is rebuilt with concrete types only (see finalize.py).

Checks that need the final type (negating an unsigned value, an index that must be an
integer, ...) are recorded as deferred checks and run once everything is resolved.
"""
from __future__ import annotations

from typing import Callable, Union

from ..errors import compile_error
from ..ir.nodes import Loc
from ..ir.types import DType, LineType, f32, i32

FREE, INT_LIT, FLOAT_LIT, FIXED = 0, 1, 2, 3


class TVar:
    """A type variable; only the root of its class carries the knowledge."""

    __slots__ = ("parent", "state", "dtype")

    def __init__(self, state: int = FREE, dtype: DType | None = None):
        self.parent: TVar | None = None
        self.state = state
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"TVar({describe(self)})"


Ty = Union[DType, TVar]


def find(t: Ty) -> Ty:
    """The representative of `t`: a DType when known, else the root TVar."""
    if not isinstance(t, TVar):  # a DType or a LineType
        return t
    root = t
    while root.parent is not None:
        root = root.parent
    while t.parent is not None and t.parent is not root:  # path compression
        t.parent, t = root, t.parent
    return root.dtype if root.state == FIXED else root


def describe(t: Ty) -> str:
    t = find(t)
    if not isinstance(t, TVar):
        return t.name
    return {FREE: "an untyped value", INT_LIT: "an int literal",
            FLOAT_LIT: "a float literal"}[t.state]


def is_known(t: Ty) -> bool:
    return not isinstance(find(t), TVar)


def int_lit() -> TVar:
    return TVar(INT_LIT)


def float_lit() -> TVar:
    return TVar(FLOAT_LIT)


def _fits(dtype: DType, state: int) -> bool:
    if state == FREE:
        return True
    if isinstance(dtype, LineType):  # a literal is a scalar: never a line
        return False
    if state == INT_LIT:
        return dtype.is_int or dtype.is_float
    return dtype.is_float


def _fix(root: TVar, dtype: DType) -> DType:
    root.state, root.dtype = FIXED, dtype
    return dtype


class Unifier:
    """Unifies types and keeps the deferred checks of one kernel build."""

    def __init__(self):
        self.checks: list[tuple[Ty, Callable[[DType], bool], Loc, Callable[[DType], str]]] = []

    def unify(self, a: Ty, b: Ty, loc: Loc, mismatch: Callable[[str, str], str]) -> Ty:
        """Makes `a` and `b` one type; `mismatch(desc_a, desc_b)` words the error."""
        ra, rb = find(a), find(b)
        if ra is rb:
            return ra
        if not isinstance(ra, TVar) and not isinstance(rb, TVar):
            compile_error(loc, mismatch(ra.name, rb.name))
        if not isinstance(ra, TVar):
            ra, rb = rb, ra
        if not isinstance(rb, TVar):  # ra is a root TVar
            if not _fits(rb, ra.state):
                compile_error(loc, mismatch(describe(ra), rb.name))
            return _fix(ra, rb)
        # two roots: the more specific state wins (int literal + float literal -> float)
        if ra.state < rb.state:
            ra, rb = rb, ra
        rb.parent = ra
        return ra

    def require(self, t: Ty, ok: Callable[[DType], bool], loc: Loc,
                message: Callable[[DType], str]) -> None:
        """Checks `ok(final type)` once types are resolved; else `message(type)`."""
        r = find(t)
        if not isinstance(r, TVar):
            if not ok(r):
                compile_error(loc, message(r))
        else:
            self.checks.append((t, ok, loc, message))

    def require_float(self, t: Ty, loc: Loc, message: Callable[[str], str]) -> Ty:
        """Makes `t` a float type now (int literals become float literals)."""
        r = find(t)
        if not isinstance(r, TVar):
            if not r.is_float:
                compile_error(loc, message(r.name))
            return r
        if r.state == FIXED:  # pragma: no cover - find() returns the dtype then
            return r.dtype
        r.state = FLOAT_LIT
        return r

    def run_checks(self) -> None:
        for t, ok, loc, message in self.checks:
            dtype = resolve(t)
            if not ok(dtype):
                compile_error(loc, message(dtype))
        self.checks.clear()


def resolve(t: Ty) -> DType:
    """The final concrete type of `t` (free literals take their default)."""
    r = find(t)
    if not isinstance(r, TVar):
        return r
    dtype = f32 if r.state == FLOAT_LIT else i32
    return _fix(r, dtype)
