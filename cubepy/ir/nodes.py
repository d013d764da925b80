"""The cubepy IR: typed expression trees inside structured statements.

Design (see docs/ARCHITECTURE.md):
- Every node is a frozen dataclass; passes build new trees, never mutate.
- Every expression has a concrete `ty` (a DType, bool_ for conditions) and every node a
  `loc` (the user's file and line). The IR after the frontend is fully specialised: no
  generic placeholders, no comptime values, no device-function calls (they are inlined).
- Expressions are pure except that reads of buffers see memory: side effects (stores,
  atomics, barriers) are statements, so an expression can be evaluated in any order.
- Locals are named mutable variables (`Var`), unique by name inside one kernel. A variable
  is declared (zero-initialised) by `Declare`, or by the first `Assign` with declare=True.
- Buffers (tensor/array parameters, shared memory and local arrays) are named by
  `BufferRef`.
"""
from __future__ import annotations

from dataclasses import field
from typing import Optional, Union

from .batched_dataclass import dataclass

from .ops import (OPS, AtomicOp, BinaryOp, BitOp, CompareOp, LogicalOp, MathFn, PlaneOp, SyncOp,
                  UnaryOp)
from .types import DType, bool_, u32


from .loc import NO_LOC, Loc  # noqa: F401  (defined apart: errors need no nodes)

# Names the IR uses for operators: the values of the op enums of ir/ops.py, whose table
# (OPS) says how each op types, folds and is spelled per target.
BINARY_OPS = tuple(op.value for op in BinaryOp)
COMPARE_OPS = tuple(op.value for op in CompareOp)
UNARY_OPS = tuple(op.value for op in UnaryOp)
LOGICAL_OPS = tuple(op.value for op in LogicalOp)  # short-circuit
# Position builtins (all u32). CUBE_DIM* and PLANE_DIM are folded to constants by the
# specialisation pass when the cube dim is known.
BUILTINS = ("absolute_pos", "absolute_pos_x", "absolute_pos_y", "absolute_pos_z",
            "unit_pos", "unit_pos_x", "unit_pos_y", "unit_pos_z",
            "cube_pos", "cube_pos_x", "cube_pos_y", "cube_pos_z",
            "cube_dim", "cube_dim_x", "cube_dim_y", "cube_dim_z",
            "cube_count", "cube_count_x", "cube_count_y", "cube_count_z",
            "plane_dim", "unit_pos_plane")
# Tensor/array metadata queries (all u32). `dim` is set for shape and stride.
META_KINDS = ("shape", "stride", "rank", "len", "buffer_len")
# Math intrinsics: name -> number of arguments. Result type = type of the first float arg
# (isnan/isinf give bool).
MATH_FUNCS = {op.value: OPS[op].arity for op in MathFn}
ATOMIC_OPS = tuple(op.value for op in AtomicOp)
# Integer and bit functions: name -> number of operands (`Bits` nodes).
BIT_OPS = {op.value: OPS[op].arity for op in BitOp}


# ----------------------------------------------------------------------------- values

@dataclass(frozen=True)
class Var:
    """A named mutable local of one type."""

    name: str
    ty: DType


@dataclass(frozen=True)
class BufferRef:
    """A buffer: a tensor/array parameter ("global"), a SharedMemory ("shared", one per
    cube) or a LocalArray ("local", one per unit)."""

    name: str
    elem: DType
    space: str  # "global", "shared" or "local"


# ----------------------------------------------------------------------------- expressions

@dataclass(frozen=True, kw_only=True)
class Expr:
    ty: DType
    loc: Loc = field(default=NO_LOC, compare=False)


@dataclass(frozen=True, kw_only=True)
class Const(Expr):
    """A literal. `value` is a Python bool, int or float already fitting `ty`."""

    value: Union[bool, int, float] = 0


@dataclass(frozen=True, kw_only=True)
class Load(Expr):
    """Reads a local variable."""

    var: Var


@dataclass(frozen=True, kw_only=True)
class Builtin(Expr):
    """A position builtin, one of BUILTINS."""

    name: str = ""


@dataclass(frozen=True, kw_only=True)
class Meta(Expr):
    """A metadata query on a global buffer, one of META_KINDS; `dim` for shape/stride."""

    kind: str = ""
    buffer: BufferRef
    dim: Optional[Expr] = None


@dataclass(frozen=True, kw_only=True)
class Index(Expr):
    """`buffer[index]`: a flat element read (out of range reads 0 in a checked launch)."""

    buffer: BufferRef
    index: Expr


@dataclass(frozen=True, kw_only=True)
class Unary(Expr):
    op: str = ""  # one of UNARY_OPS
    operand: Expr


@dataclass(frozen=True, kw_only=True)
class Binary(Expr):
    """Arithmetic with both operands of type `ty` (shifts: rhs may be any integer type)."""

    op: str = ""  # one of BINARY_OPS
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, kw_only=True)
class Compare(Expr):
    """A comparison of two operands of one type; `ty` is bool."""

    op: str = ""  # one of COMPARE_OPS
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, kw_only=True)
class Logical(Expr):
    """Short-circuit `and` / `or` of two bools."""

    op: str = ""  # one of LOGICAL_OPS
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, kw_only=True)
class Select(Expr):
    """`a if cond else b` / select(cond, a, b). Both sides are pure, so eager is fine."""

    cond: Expr
    if_true: Expr
    if_false: Expr


@dataclass(frozen=True, kw_only=True)
class Cast(Expr):
    """Converts `operand` to `ty` (float->int truncates toward zero, as C)."""

    operand: Expr


@dataclass(frozen=True, kw_only=True)
class Call(Expr):
    """A math intrinsic, one of MATH_FUNCS."""

    func: str = ""
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Bits(Expr):
    """An integer or bit function, one of BIT_OPS, on integer operands of one type:
    popcount/clz/ctz/ffs give u32, reverse_bits/mul_hi/saturating_* the operand type;
    `bitcast` reinterprets its operand's bits as `ty`, a type of the same size."""

    op: str = ""
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Extract(Expr):
    """Element `index` (an integer) of a line value; `ty` is the line's element type.
    An index out of range gives 0. Only before scalarize_lines, which replaces it by
    that element's scalar (a select over the elements when the index is not constant)."""

    value: Expr
    index: Expr


@dataclass(frozen=True, kw_only=True)
class MakeLine(Expr):
    """A line (`ty` a LineType) built from one scalar per element. Only before
    scalarize_lines, which uses each element's scalar where that element is read."""

    elems: tuple[Expr, ...] = ()


# ----------------------------------------------------------------------------- statements

@dataclass(frozen=True, kw_only=True)
class Stmt:
    loc: Loc = field(default=NO_LOC, compare=False)


@dataclass(frozen=True)
class Block:
    """A region: a sequence of statements."""

    stmts: tuple[Stmt, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Declare(Stmt):
    """Declares a local, zero-initialised."""

    var: Var


@dataclass(frozen=True, kw_only=True)
class Assign(Stmt):
    """`var = value`; with declare=True this also declares the variable."""

    var: Var
    value: Expr
    declare: bool = False


@dataclass(frozen=True, kw_only=True)
class Store(Stmt):
    """`buffer[index] = value` (dropped when out of range in a checked launch)."""

    buffer: BufferRef
    index: Expr
    value: Expr


@dataclass(frozen=True, kw_only=True)
class AtomicOp(Stmt):
    """An atomic read-modify-write of `buffer[index]`; the old value goes to `result`
    (None when unused). `compare` is set for compare_exchange only; `value` is None for
    load only (inc/dec: the wrap limit); store has no result."""

    op: str = ""  # one of ATOMIC_OPS
    buffer: BufferRef
    index: Expr
    value: Optional[Expr] = None
    compare: Optional[Expr] = None
    result: Optional[Var] = None


@dataclass(frozen=True, kw_only=True)
class LoadLine(Stmt):
    """`parts = buffer[line]`: elements `line * n .. line * n + n - 1` (n = len(parts)) read
    as one access, element k into `parts[k]`. scalarize_lines makes it for a line read of
    a parameter aligned to its line (Param.aligned) or of shared memory (which code
    generators declare aligned to 16 bytes); a target without vector accesses
    gets the n element reads back (lower_line_access). In a checked launch each element
    past the end of the buffer reads 0."""

    buffer: BufferRef
    line: Expr
    parts: tuple[Var, ...] = ()


@dataclass(frozen=True, kw_only=True)
class StoreLine(Stmt):
    """`buffer[line] = values`: element k of line `line` (element index `line * n + k`,
    n = len(values)) gets `values[k]`, as one access (see LoadLine). In a checked launch
    the elements past the end of the buffer are dropped."""

    buffer: BufferRef
    line: Expr
    values: tuple[Expr, ...] = ()


@dataclass(frozen=True, kw_only=True)
class If(Stmt):
    cond: Expr
    then: Block = Block()
    orelse: Block = Block()


@dataclass(frozen=True, kw_only=True)
class For(Stmt):
    """`for var in range(start, stop, step)`; the loop variable is read-only in the body.

    `step` is a nonzero constant or a runtime value (then its sign picks the direction).
    `unroll` asks the unroll pass to expand the loop (bounds must then be constants).
    """

    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: Block = Block()
    unroll: bool = False


@dataclass(frozen=True, kw_only=True)
class While(Stmt):
    cond: Expr
    body: Block = Block()


@dataclass(frozen=True, kw_only=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, kw_only=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True, kw_only=True)
class Terminate(Stmt):
    """Ends this unit (terminate() or a bare return in a kernel)."""


@dataclass(frozen=True, kw_only=True)
class Barrier(Stmt):
    """A barrier or memory fence, `op` one of ops.SyncOp: sync_cube() (a workgroup
    barrier, reached in uniform control flow), sync_plane(), fence_cube(),
    fence_device(). Which must be uniform is the target's `uniform_syncs`."""

    op: str = "sync_cube"


@dataclass(frozen=True, kw_only=True)
class AsyncCopy(Stmt):
    """pipeline.memcpy_async: elements `src_line * size .. + size - 1` of `src` (a global
    buffer) copied to elements `dst_line * size ..` of `dst` (shared memory), started
    asynchronously; `size * elem bytes` is 4, 8 or 16. The data is there for this unit
    after an AsyncWait covering the copy's group, for the others after that and a
    sync_cube. In a checked launch elements past the end of `src` arrive as 0 and a line
    past the end of `dst` is dropped. Targets without asynchronous copies get the plain
    copy (passes/async_copy.py)."""

    dst: BufferRef
    dst_line: Expr
    src: BufferRef
    src_line: Expr
    size: int = 1


@dataclass(frozen=True, kw_only=True)
class AsyncCommit(Stmt):
    """pipeline.commit(): closes this unit's group of asynchronous copies."""


@dataclass(frozen=True, kw_only=True)
class AsyncWait(Stmt):
    """pipeline.wait(pending): waits until at most `pending` of this unit's committed
    groups of copies are in flight."""

    pending: int = 0


ASYNC_STMTS = (AsyncCopy, AsyncCommit, AsyncWait)


@dataclass(frozen=True, kw_only=True)
class Comment(Stmt):
    """A comment carried into generated source (e.g. where an inlined call came from)."""

    text: str = ""


# ----------------------------------------------------------------------------- kernel

@dataclass(frozen=True)
class Param:
    """A launch parameter. kind: "tensor", "array" or "scalar" (comptime parameters are
    gone after specialisation). For tensors and arrays `dtype` is the element type.
    `rank` is set when the kernel indexes the tensor with a tuple (`t[i, j]` sets 2):
    a launch then requires a tensor of exactly that rank. `aligned` (line buffers): the
    buffer's address is a multiple of its line's bytes (16 at most), so a line may be
    read and written as one vector access; False keeps element accesses."""

    name: str
    kind: str
    dtype: DType
    line_size: int = 1
    rank: Optional[int] = None
    aligned: bool = True

    @property
    def buffer(self) -> BufferRef:
        return BufferRef(self.name, self.dtype, "global")


@dataclass(frozen=True)
class SharedDecl:
    """A SharedMemory(elem, size) array, one per cube."""

    buffer: BufferRef
    size: int
    loc: Loc = field(default=NO_LOC, compare=False)


@dataclass(frozen=True)
class LocalDecl:
    """A LocalArray(elem, size): an array of each unit (registers or private memory),
    zero-filled when the kernel starts."""

    buffer: BufferRef
    size: int
    loc: Loc = field(default=NO_LOC, compare=False)


@dataclass(frozen=True)
class Kernel:
    """A specialised kernel, ready for passes and code generation.

    Scalar parameters are read into locals of the same name at entry: the body may
    assign to them. `cube_dim` is (x, y, z).
    """

    name: str
    params: tuple[Param, ...]
    shared: tuple[SharedDecl, ...]
    body: Block
    cube_dim: tuple[int, int, int]
    loc: Loc = field(default=NO_LOC, compare=False)
    local_arrays: tuple[LocalDecl, ...] = ()
    matrices: tuple["MatrixDecl", ...] = ()
    # Built for a bounds-checked launch. An unchecked one promises every index in range,
    # so passes may drop what only keeps an out-of-range index harmless.
    checked: bool = True

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def units_per_cube(self) -> int:
        x, y, z = self.cube_dim
        return x * y * z


BOOL, U32 = bool_, u32  # re-exported for convenience in passes


# ----------------------------------------------------------------------------- planes

# Plane (warp / subgroup) operations: op -> whether it takes a lane/mask/delta argument.
PLANE_OPS = {op.value: OPS[op].takes_lane for op in PlaneOp}
SYNC_OPS = tuple(op.value for op in SyncOp)  # the ops of a Barrier


def plane_type(op: str, value_ty):
    """The result type of plane op `op` on a value of `value_ty` (a ballot word is a
    u32, elect a bool, the others the value's type)."""
    return OPS[PlaneOp(op)].typing([value_ty])


@dataclass(frozen=True, kw_only=True)
class Plane(Expr):
    """A plane operation over the units of this plane that execute it (`op` one of
    PLANE_OPS); `arg` is the u32 lane, mask or delta of broadcast/shuffle*. Its value
    depends on which units are active, so it is only ever the whole value of an
    `Assign` (the verifier checks it) and passes never move it between regions."""

    op: str = ""
    value: Expr  # elect: the constant true (it takes no value)
    arg: Optional[Expr] = None  # ballot: which u32 word (0..3) of the lane mask


# ----------------------------------------------------------------------------- matrix units

# cmma fragments (docs/LANGUAGE.md, "Matrix units"): which operand a fragment is, and the
# memory layouts of loads and stores.
MATRIX_IDENTS = ("a", "b", "accumulator", "warpgroup")
MATRIX_LAYOUTS = ("row_major", "col_major")
# Element types a fragment may have: "tf32" is stored as f32 (A/B fragments only).
MATRIX_ELEMS = ("f16", "bf16", "f32", "tf32")


@dataclass(frozen=True)
class MatrixDecl:
    """A cmma fragment (`cmma.Matrix`) or an array of `count` of them (`cmma.Matrices`):
    an m x n x k operand of a plane's matrix multiply, held collectively by the plane.
    `elem` is the element type's name (MATRIX_ELEMS); `layout` the memory layout of an A
    or B fragment (None for an accumulator, whose loads and stores name theirs)."""

    name: str
    ident: str  # one of MATRIX_IDENTS
    m: int
    n: int
    k: int
    elem: str  # one of MATRIX_ELEMS
    layout: Optional[str] = None  # one of MATRIX_LAYOUTS (A and B only)
    count: Optional[int] = None  # an array of fragments (cmma.Matrices); None: one
    loc: Loc = field(default=NO_LOC, compare=False)

    @property
    def storage(self) -> DType:
        """The element type of the buffers it loads from and stores to (f32 for tf32)."""
        from .types import dtype_from_name
        return dtype_from_name("f32" if self.elem == "tf32" else self.elem)

    @property
    def warpgroup(self) -> bool:
        """A warpgroup accumulator (cmma.WarpgroupAccumulator): a 64 x n f32 tile held by
        the 128 units of a warpgroup, the D of wgmma (k is the multiply's 16)."""
        return self.ident == "warpgroup"

    @property
    def rows(self) -> int:
        """Rows of the tile it holds: m for A and the accumulator, k for B."""
        return self.k if self.ident == "b" else self.m

    @property
    def cols(self) -> int:
        """Columns of its tile: k for A, n for B and the accumulator."""
        return self.k if self.ident == "a" else self.n

    @property
    def shape_text(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"


@dataclass(frozen=True, kw_only=True)
class Frag(Expr):
    """A fragment named by a cmma statement: `matrix`, or element `index` (a u32) of an
    array of them. Not a value: only cmma statements hold it. `ty` is the storage type."""

    matrix: MatrixDecl
    index: Optional[Expr] = None


@dataclass(frozen=True, kw_only=True)
class MatrixFill(Stmt):
    """cmma.fill(frag, value): every element of the fragment set to `value` (of its
    storage type)."""

    frag: Frag
    value: Expr


@dataclass(frozen=True, kw_only=True)
class MatrixScale(Stmt):
    """cmma.scale(acc, factor): every element of the accumulator multiplied by `value`
    (of its storage type), rounded to that type."""

    frag: Frag
    value: Expr


@dataclass(frozen=True, kw_only=True)
class MatrixScaleBy(Stmt):
    """cmma.scale_rows / cmma.scale_cols: row r (`axis` "rows") or column c ("cols") of a
    warpgroup accumulator multiplied by buffer[offset + r] (or c), of its storage type."""

    frag: Frag
    buffer: BufferRef
    offset: Expr
    axis: str


MATRIX_SCALE_AXES = ("rows", "cols")


@dataclass(frozen=True, kw_only=True)
class MatrixLoad(Stmt):
    """cmma.load(frag, buffer, offset, stride): the fragment's tile read from `buffer`
    from element `offset`, `stride` elements between rows (row major) or columns (col
    major). `layout` is the accumulator's (load_with_layout); A and B use their own."""

    frag: Frag
    buffer: BufferRef
    offset: Expr
    stride: Expr
    layout: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class MatrixStore(Stmt):
    """cmma.store(buffer, offset, frag, stride, layout): an accumulator written to memory."""

    buffer: BufferRef
    offset: Expr
    frag: Frag
    stride: Expr
    layout: str = "row_major"


@dataclass(frozen=True, kw_only=True)
class MatrixExecute(Stmt):
    """cmma.execute(a, b, c, d): d = a @ b + c (d may be c)."""

    a: Frag
    b: Frag
    c: Frag
    d: Frag


@dataclass(frozen=True, kw_only=True)
class MatrixCast(Stmt):
    """cmma.cast: `dst`, an accumulator of another element type, gets `src`'s elements
    converted (same shape)."""

    src: Frag
    dst: Frag


# Warpgroup matrix multiply (Hopper's wgmma, docs/LANGUAGE.md "Warpgroup matrix
# multiply"): A and B read from shared memory in the core-matrix layout of
# cmma.wg_offset, the 64 x n f32 accumulator in the registers of a warpgroup.
WARPGROUP_M, WARPGROUP_K = 64, 16  # the m and k of one wgmma.mma_async (16-bit A and B)
WARPGROUP_N = tuple(range(8, 257, 8))  # the n it takes
WARPGROUP_ELEMS = ("f16", "bf16")  # its 16-bit A and B elements (one type for both)
WARPGROUP_FP8 = ("e4m3", "e5m2")  # its 8-bit ones (any pair; k 32, both K-major)
WARPGROUP_SYNC_OPS = ("fence", "commit", "wait")
WARPGROUP_SWIZZLES = (0, 128)  # wg_mma's shared layouts: core matrices, 128-byte swizzle


@dataclass(frozen=True, kw_only=True)
class WarpgroupMma(Stmt):
    """cmma.wg_mma: acc += A @ B, A (64 x k) and B (k x acc's n; k 16 for f16/bf16, 32 for
    e4m3/e5m2, whose B must be col_major) read from shared memory at element offsets
    `a_offset` and `b_offset` of tiles stored as core matrices
    (cmma.wg_offset) with `a_rows` and `b_rows` rows. `b_layout` row_major: B's tile is
    k x n (element (k, j) at wg_offset(k, j, b_rows)); col_major: it is n x k. `swizzle`
    0 (the core-matrix layout) or 128 (both tiles in the 128-byte swizzled layout of
    wg_offset(..., 128), 1024-byte aligned). Issued asynchronously: its results are
    there after wg_commit and wg_wait."""

    acc: Frag
    a: BufferRef
    a_offset: Expr
    a_rows: int
    b: BufferRef
    b_offset: Expr
    b_rows: int
    b_layout: str = "row_major"
    swizzle: int = 0


@dataclass(frozen=True, kw_only=True)
class WarpgroupSync(Stmt):
    """cmma.wg_fence / wg_commit / wg_wait(pending): `op` one of WARPGROUP_SYNC_OPS;
    `pending` (wait only) is how many committed groups may still run."""

    op: str
    pending: int = 0


MATRIX_STMTS = (MatrixFill, MatrixScale, MatrixScaleBy, MatrixLoad, MatrixStore,
                MatrixExecute, MatrixCast, WarpgroupMma, WarpgroupSync)
