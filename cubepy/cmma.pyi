"""cubepy.cmma as a type checker sees it: the calls are Intrinsic objects at run time
(cubepy/cmma.py); here they have signatures. A fragment is a `Matrix`, an array of them
`Matrices` (indexed by an int)."""
from enum import Enum
from typing import Any, SupportsIndex

from .lang import Intrinsic, MatrixElement

tf32: MatrixElement


class MatrixIdent(str, Enum):
    A = "a"
    B = "b"
    ACCUMULATOR = "accumulator"
    Accumulator = "accumulator"


class MatrixLayout(str, Enum):
    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"
    RowMajor = "row_major"
    ColMajor = "col_major"


A: MatrixIdent
B: MatrixIdent
ACCUMULATOR: MatrixIdent
ROW_MAJOR: MatrixLayout
COL_MAJOR: MatrixLayout
CMMA_INTRINSICS: dict[str, Intrinsic]
__all__: list[str]


class Matrix:
    """A fragment of a plane's matrix multiply (not a value: only the cmma calls take it)."""

    def __init__(self, ident: MatrixIdent, m: int, n: int, k: int, elem: Any,
                 layout: MatrixLayout | None = ..., /) -> None: ...


class Matrices:
    """An array of `count` fragments; `frags[i]` is one."""

    def __init__(self, count: int, ident: MatrixIdent, m: int, n: int, k: int, elem: Any,
                 layout: MatrixLayout | None = ..., /) -> None: ...
    def __getitem__(self, i: SupportsIndex, /) -> Matrix: ...


def fill(frag: Matrix | WarpgroupAccumulator, value: float, /) -> None: ...
def load(frag: Matrix, buffer: Any, offset: SupportsIndex, stride: SupportsIndex, /) -> None: ...
def load_with_layout(frag: Matrix, buffer: Any, offset: SupportsIndex, stride: SupportsIndex,
                     layout: MatrixLayout, /) -> None: ...
def execute(a: Matrix, b: Matrix, c: Matrix, d: Matrix, /) -> None: ...
def store(buffer: Any, offset: SupportsIndex, frag: Matrix | WarpgroupAccumulator,
          stride: SupportsIndex, layout: MatrixLayout, /) -> None: ...
def cast(frag: Matrix, elem: Any, /) -> Matrix: ...
def scale(frag: Matrix | WarpgroupAccumulator, factor: float, /) -> None: ...
def scale_rows(frag: WarpgroupAccumulator, buffer: Any, offset: SupportsIndex, /) -> None: ...
def scale_cols(frag: WarpgroupAccumulator, buffer: Any, offset: SupportsIndex, /) -> None: ...


class WarpgroupAccumulator:
    """A warpgroup's 64 x n f32 accumulator (cmma.fill, cmma.scale, cmma.store and wg_mma
    take it)."""

    def __init__(self, n: int, elem: Any, /) -> None: ...


def wg_mma(acc: WarpgroupAccumulator, a: Any, a_offset: SupportsIndex, a_rows: int, b: Any,
           b_offset: SupportsIndex, b_rows: int, b_layout: MatrixLayout,
           swizzle: int = ..., /) -> None: ...
def wg_fence() -> None: ...
def wg_commit() -> None: ...
def wg_wait(pending: int, /) -> None: ...
def wg_offset(row: SupportsIndex, col: SupportsIndex, rows: int, swizzle: int = ...,
              elem: Any = ..., /) -> int: ...
def wg_offset_host(row: Any, col: Any, rows: int, swizzle: int = 0,
                   elem: Any = None) -> Any: ...
