"""What a C-like target supplies to the shared emitter (clike.py): the `Dialect` hooks
(type names, literals, casts, builtins, math, atomics) and the `Prelude` of helpers and
headers a kernel needs."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from ..ir import nodes as n
from ..ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)
from ..ir.types import DType

if TYPE_CHECKING:
    from .clike import CEmitter

XYZW = "xyzw"


@dataclass(frozen=True)
class LinePiece:
    """How a dialect moves `count` elements of one type in one access (`Dialect.line_piece`;
    the accesses themselves: clike_lines.py)."""

    type: str  # the type of one access: float4, uint2, half4, ...
    get: Callable[[str, int], str]  # (access value, element k) -> element k
    make: Callable[[list[str]], str]  # the elements -> an access value


def vector_piece(type_name: str, count: int, make: str) -> LinePiece:
    """A vector type of `count` components named .x .y .z .w, built by `make(...)`."""
    return LinePiece(type_name, lambda v, k: f"{v}.{XYZW[k]}",
                     lambda values: f"{make}({', '.join(values)})")


class Prelude:
    """Helper functions a kernel needs, each defined once, in first-use order.

    `require(name, text)` registers helper `name` with its source `text`; helpers that
    call other helpers require those first, so definitions precede uses.
    """

    def __init__(self) -> None:
        self._helpers: dict[str, str] = {}
        self.includes: list[str] = []

    def require(self, name: str, text: str) -> str:
        if name not in self._helpers:
            self._helpers[name] = text.strip("\n")
        return name

    def include(self, header: str) -> None:
        if header not in self.includes:
            self.includes.append(header)

    def __contains__(self, name: str) -> bool:
        return name in self._helpers

    @property
    def helpers(self) -> list[str]:
        return list(self._helpers.values())


class Dialect:
    """What a C-like target supplies. Subclasses fill the tables and override hooks."""

    name = "c"
    fn_qual = "static inline"  # qualifiers of prelude helper functions
    types: dict[str, str] = {}
    reserved: frozenset[str] = frozenset()  # identifiers the generated code itself uses
    matrix = None  # its cmma fragments' spelling (a clike_cmma.MatrixSpelling), if any
    # its asynchronous copies: a module with copy/commit/wait(em, stmt) (cuda_async.py);
    # None where the target record's async_copies is False (the pass lowers them)
    pipeline = None

    def type_name(self, ty: DType) -> str:
        return self.types[ty.name]

    # -- hooks (each returns C text; `em` is the emitter, for helpers and recursion) --
    def literal(self, value, ty: DType) -> tuple[str, int]:
        raise NotImplementedError

    def cast(self, em: "CEmitter", expr: n.Cast) -> tuple[str, int]:
        raise NotImplementedError

    def builtin(self, name: str) -> str:
        """A basic position builtin: unit_pos_x, cube_pos_x, cube_dim_x, cube_count_x
        (and y, z), plane_dim, unit_pos_plane."""
        raise NotImplementedError

    def math(self, em: "CEmitter", func: str, args: list[str], arg_types: list[DType],
             ty: DType) -> str:
        raise NotImplementedError

    def minmax(self, em: "CEmitter", op: str, a: str, b: str, ty: DType) -> str:
        raise NotImplementedError

    def abs(self, em: "CEmitter", a: str, ty: DType) -> str:
        raise NotImplementedError

    def atomic(self, em: "CEmitter", stmt: n.AtomicOp, ptr: str, value: Optional[str],
               compare: Optional[str]) -> str:
        """The expression of atomic `stmt` on `ptr`; `value` is None for a load."""
        raise NotImplementedError

    def atomic_load(self, ptr: str) -> str:
        raise NotImplementedError

    def atomic_store(self, ptr: str, value: str) -> str:
        raise NotImplementedError

    def sync(self, op: str) -> str:
        """The statement of a barrier or fence (ops.SyncOp): `barrier` for sync_cube,
        else the target's spelling called with no arguments (CUDA's __syncwarp(),
        __threadfence_block(), __threadfence())."""
        if op == "sync_cube":
            return self.barrier
        from ..ir.ops import SyncOp
        from ..targets import get_target
        return f"{get_target(self.name).spelling(SyncOp(op))}();"

    def plane(self, em: "CEmitter", e: n.Plane) -> tuple[str, int]:
        """A plane operation (the whole value of an assignment)."""
        from ..errors import compile_error
        compile_error(e.loc, f"plane operations are not supported by the {self.name} target")

    def bits(self, em: "CEmitter", e: n.Bits) -> tuple[str, int]:
        """An integer or bit function (popcount, clz, ..., bitcast)."""
        from ..errors import compile_error
        compile_error(e.loc, f"{e.op} is not supported by the {self.name} target")

    int_suffixes = {"i32": "", "u32": "u", "i64": "ll", "u64": "ull"}

    def bool_or_int_literal(self, value, ty: DType) -> tuple[str, int]:
        """C's spelling of a bool or integer constant: true/false, a decimal with the
        type's suffix, and a signed minimum as (MIN + 1) - 1 (C has no such literal)."""
        from .clike import PRIMARY, UNARY
        if ty.is_bool:
            return ("true" if value else "false"), PRIMARY
        v, suffix = int(value), self.int_suffixes[ty.name]
        if ty.is_signed and v == -(2 ** (ty.bits - 1)):
            return f"({v + 1}{suffix} - 1)", PRIMARY
        return f"{v}{suffix}", (UNARY if v < 0 else PRIMARY)

    def unsigned_cast(self, em: "CEmitter", index: n.Expr) -> str:
        """A signed index as the unsigned type of its width (for one-compare checks)."""
        raise NotImplementedError

    def float_divmod_helper(self, em: "CEmitter", kind: str, ty: DType) -> str:
        """The name of the exact float `//` (kind "floordiv") or `%` ("mod") helper for
        `ty` (clike_helpers.float_divmod_text). This default is ISO C for float and
        double: fmod is exact, `/` `+` `-` are IEEE, and the algorithm has no product a
        compiler could contract into an FMA. Targets with other spellings override it."""
        from .clike_helpers import float_divmod_text
        name, t = f"cube_{kind}_{ty.name}", self.type_name(ty)
        s = "f" if ty.bits == 32 else ""
        ops = {"sub": "({} - {})", "add": "({} + {})", "div": "({} / {})",
               "fmod": f"fmod{s}", "floor": f"floor{s}", "copysign": f"copysign{s}",
               "zero": f"({t})0", "one": f"({t})1", "half": f"({t})0.5"}
        return em.helper(name, float_divmod_text(kind, name, t, ops))

    def line_piece(self, em: "CEmitter", elem: DType, count: int,
                   space: str) -> LinePiece | None:
        """How `count` elements of `elem` (2 to 16 bytes together) of a buffer in `space`
        ("global" or "shared") move in one vector load or store (clike_lines.py); None:
        element by element."""
        return None

    def vector_pointer(self, ref: str, type_name: str, const: bool) -> str:
        """`&ref` (an element of a parameter buffer or shared memory) as a pointer to
        `type_name`."""
        raise NotImplementedError

    barrier = ""
    native_lane = True  # unit_pos_plane is a builtin (else UNIT_POS % PLANE_DIM)
    typed_atomics = False  # atomically used buffers have atomic element types (Metal)
