"""The state of building one kernel for one specialisation, in one explicit object.

The statement builder (build.py), the expression builder (exprs.py), the call builder
(calls.py) and the intrinsic handlers (intrinsics.py) all read and write it through
`builder.ctx`; nothing is shared through attributes one visitor sets and another reads.
The two flags that pass information down the tree (the name a SharedMemory is assigned to,
and the construct in which side effects are forbidden) are scoped by context managers, so
they cannot leak past the construct that set them.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import field
from typing import Any, Iterator, Optional

from ..ir.batched_dataclass import dataclass  # (cheap to create)
from ..ir import nodes as n
from ..ir.names import NameTable
from ..spec import Specialization
from .infer import Unifier
from .parse import ParsedFunction


@dataclass(frozen=False)
class Frame:
    """The function being built: the kernel, or a device function being inlined."""

    parsed: ParsedFunction
    env: dict[str, Any]  # generic placeholder name -> DType or TVar
    scope: dict[str, Any] = field(default_factory=dict)  # name -> Var | Buf | Py | Dead
    assigned: set[str] = field(default_factory=set)  # names assigned so far (textually)
    loop_vars: set[str] = field(default_factory=set)  # loop variables in scope
    comptime_names: set[str] = field(default_factory=set)
    loop_depth: int = 0
    base_depth: int = 1  # len(ctx.blocks) in the function's own top-level block
    ret_var: Optional[n.Var] = None
    ret_flag: Optional[n.Var] = None
    ret_type: Any = None  # the declared return type (a tuple of them for `return a, b`)
    ret_items: Optional[tuple[n.Var, ...]] = None  # the results of `return a, b`
    # loop depth of a loop with an `else` -> [its "broke out" flag, whether a break set it]
    else_flags: dict[int, list] = field(default_factory=dict)

    @property
    def is_kernel(self) -> bool:
        return self.parsed.is_kernel and self.base_depth == 1


@dataclass(frozen=False)
class FrontendContext:
    """Everything the builders share while one kernel is built."""

    spec: Specialization
    frame: Frame  # the function whose body is being built (changes while inlining)
    loc: n.Loc  # the location every IR node built now takes (Builder.at sets it)
    unifier: Unifier = field(default_factory=Unifier)
    blocks: list[list[n.Stmt]] = field(default_factory=lambda: [[]])  # open blocks
    declared: set[int] = field(default_factory=set)  # ids of declared Vars
    pending: list[n.Var] = field(default_factory=list)  # to declare before the current
    # top-level statement
    names: NameTable = field(default_factory=NameTable)  # identifiers of vars and buffers
    # (fresh ones: base, base_1, base_2...)
    shared: list[n.SharedDecl] = field(default_factory=list)
    local_arrays: list[n.LocalDecl] = field(default_factory=list)
    matrices: list[n.MatrixDecl] = field(default_factory=list)  # cmma fragments
    dynamic_shared: Any = None  # the kernel's DynamicSharedMemory (a Buf), once made
    inline_stack: list[Any] = field(default_factory=list)  # device functions being inlined
    used_loop_names: set[str] = field(default_factory=set)  # loop variables seen so far
    index_ranks: dict[str, tuple[int, n.Loc]] = field(default_factory=dict)  # tensor ->
    # the number of indices of its t[i, j, ...] and where it was first seen
    checked: bool = True  # a bounds-checked launch: indices are checked per dimension
    side_effect_ban: Optional[str] = None  # set only by banning_side_effects
    divergent: Optional[str] = None  # set only by diverging
    _shared_name: Optional[str] = None  # set only by naming_shared

    @classmethod
    def for_kernel(cls, parsed: ParsedFunction, spec: Specialization) -> FrontendContext:
        return cls(spec=spec, frame=Frame(parsed, {k: v for k, v in spec.generics}),
                   loc=parsed.loc)

    # -- scoped flags -----------------------------------------------------------------
    @contextmanager
    def banning_side_effects(self, where: str) -> Iterator[None]:
        """Inside: stores, atomics, barriers, plane operations and terminate are errors
        "... cannot be used inside {where}" (only some units would run them)."""
        saved, self.side_effect_ban = self.side_effect_ban, where
        try:
            yield
        finally:
            self.side_effect_ban = saved

    @contextmanager
    def diverging(self, where: str) -> Iterator[None]:
        """Inside: code that only some units of a plane run (the right side of `and`/
        `or`); plane operations and barriers are errors "... cannot be used inside
        {where}", stores and atomics are allowed (they run where Python would)."""
        saved, self.divergent = self.divergent, where
        try:
            yield
        finally:
            self.divergent = saved

    @contextmanager
    def naming_shared(self, name: str) -> Iterator[None]:
        """Inside: the outermost call evaluated may be `SharedMemory(...)` assigned to
        `name` (it names the array)."""
        self._shared_name = name
        try:
            yield
        finally:
            self._shared_name = None

    def take_shared_name(self) -> Optional[str]:
        """The name set by naming_shared, once: calls nested in the arguments see None."""
        name, self._shared_name = self._shared_name, None
        return name
