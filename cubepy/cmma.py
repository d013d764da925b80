"""Matrix units (tensor cores) in kernels: CubeCL's `cmma` module.

A fragment is an m x n x k operand of a matrix multiply held collectively by the units
of one plane (a warp): every unit of the plane must reach each call with the same
arguments. Inside a @cube function:

    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)   # ident, m, n, k, elem, layout
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.COL_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)       # no layout
    cmma.fill(acc, 0.0)
    cmma.load(fa, a, 0, 16)                  # (fragment, buffer, offset, stride)
    cmma.load(fb, b, 0, 16)
    cmma.execute(fa, fb, acc, acc)           # d = a @ b + c
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)

Shapes and element types per target, and the semantics: docs/LANGUAGE.md, "Matrix units
(cmma)". Calling these outside a kernel raises a TypeError.

The warpgroup calls (CUDA sm_90's wgmma, and the cpu runtime's emulation) multiply with
the 128 units of a warpgroup (4 consecutive planes) at once, A and B read straight from
shared memory tiles stored with `wg_offset`:

    acc = cmma.WarpgroupAccumulator(128, f32)       # a 64 x 128 f32 tile in registers
    cmma.fill(acc, 0.0)
    ... store tiles: a_s[cmma.wg_offset(r, c, 64)] = ..., b_s[cmma.wg_offset(k, j, 16)]
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 16, cmma.ROW_MAJOR)   # acc += A(64x16) @ B(16x128)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, 0, acc, 128, cmma.ROW_MAJOR)    # converted to out's type

docs/LANGUAGE.md, "Warpgroup matrix multiply (wgmma)".
"""
from __future__ import annotations

from enum import Enum

from .lang import Intrinsic, tf32
from .wgmma_layout import offset as _layout_offset


class MatrixIdent(str, Enum):
    """Which operand of d = a @ b + c a fragment is (CubeCL's MatrixIdent)."""

    A = "a"
    B = "b"
    ACCUMULATOR = "accumulator"
    Accumulator = "accumulator"  # CubeCL's spelling

    __str__ = str.__str__


class MatrixLayout(str, Enum):
    """How a tile lies in memory: rows contiguous (row major) or columns (col major)."""

    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"
    RowMajor = "row_major"  # CubeCL's spellings
    ColMajor = "col_major"

    __str__ = str.__str__


A = MatrixIdent.A
B = MatrixIdent.B
ACCUMULATOR = MatrixIdent.ACCUMULATOR
ROW_MAJOR = MatrixLayout.ROW_MAJOR
COL_MAJOR = MatrixLayout.COL_MAJOR

Matrix = Intrinsic("cmma.Matrix", "cmma.Matrix(ident, m, n, k, elem[, layout]): a fragment "
                   "of the plane; A and B take a layout, an accumulator none. m, n, k are "
                   "compile-time ints.")
Matrices = Intrinsic("cmma.Matrices", "cmma.Matrices(count, ident, m, n, k, elem[, layout]): "
                     "an array of `count` (a compile-time int) fragments; frags[i] is one.")
fill = Intrinsic("cmma.fill", "cmma.fill(frag, value): every element of frag set to value.")
load = Intrinsic("cmma.load", "cmma.load(frag, buffer, offset, stride): an A or B fragment "
                 "read from buffer at element offset, stride elements between its rows "
                 "(row major) or columns (col major).")
load_with_layout = Intrinsic(
    "cmma.load_with_layout", "cmma.load_with_layout(acc, buffer, offset, stride, layout): "
    "an accumulator read from memory laid out as `layout`.")
execute = Intrinsic("cmma.execute", "cmma.execute(a, b, c, d): d = a @ b + c (d may be c).")
store = Intrinsic("cmma.store", "cmma.store(buffer, offset, acc, stride, layout): an "
                  "accumulator written to buffer at element offset.")
scale = Intrinsic("cmma.scale", "cmma.scale(acc, factor): every element of accumulator acc "
                  "(a plane's, or a warpgroup's) multiplied by factor, in acc's element type "
                  "(an epilogue's alpha, an fp8 product's scales).")
scale_rows = Intrinsic(
    "cmma.scale_rows", "cmma.scale_rows(acc, buffer, offset): row r of a warpgroup "
    "accumulator multiplied by buffer[offset + r] (f32; a row-wise dequantization "
    "scale). A plane's fragment keeps its elements in an order its target does not "
    "document: store it and scale the stored rows.")
scale_cols = Intrinsic(
    "cmma.scale_cols", "cmma.scale_cols(acc, buffer, offset): column c of a warpgroup "
    "accumulator multiplied by buffer[offset + c] (f32).")
cast = Intrinsic("cmma.cast", "cmma.cast(acc, elem): a new accumulator holding acc's "
                 "elements converted to elem (f16 or f32).")

WarpgroupAccumulator = Intrinsic(
    "cmma.WarpgroupAccumulator", "cmma.WarpgroupAccumulator(n, f32): the 64 x n f32 "
    "accumulator of a warpgroup's matrix multiply (n a compile-time multiple of 8 up to "
    "256), n / 2 registers per unit; cmma.fill, cmma.scale and cmma.store take it.")
wg_mma = Intrinsic(
    "cmma.wg_mma", "cmma.wg_mma(acc, a, a_offset, a_rows, b, b_offset, b_rows, b_layout): "
    "acc += A @ B, A the 64 x k tile of shared memory `a` whose first element is at "
    "a_offset in a tile of a_rows rows stored with wg_offset, B the k x n tile of `b` "
    "(b_layout ROW_MAJOR: stored k x n with b_rows rows; COL_MAJOR: n x k); k is 16 for "
    "f16/bf16, 32 for e4m3/e5m2 (any pair of them, B COL_MAJOR). Asynchronous: "
    "fence before, commit and wait after. An optional compile-time swizzle (0 or 128) "
    "reads both tiles in the 128-byte swizzled layout of wg_offset(..., 128).")
wg_fence = Intrinsic("cmma.wg_fence", "cmma.wg_fence(): orders the warpgroup's earlier "
                     "register and shared memory writes before the next wg_mma.")
wg_commit = Intrinsic("cmma.wg_commit", "cmma.wg_commit(): the wg_mma calls since the "
                      "last commit become one group.")
wg_wait = Intrinsic("cmma.wg_wait", "cmma.wg_wait(n): waits until at most n (a "
                    "compile-time int) committed groups are still running.")
wg_offset = Intrinsic(
    "cmma.wg_offset", "cmma.wg_offset(row, col, rows): the element offset of (row, col) "
    "in a tile of `rows` rows (a compile-time multiple of 8) of 16-bit elements stored as "
    "wg_mma reads it: 8 x 8 core matrices of 128 bytes, column of cores after column. "
    "cmma.wg_offset(row, col, rows, 128): the 128-byte swizzled layout (rows of 64 "
    "elements, blocks of 64 columns, 16-byte chunk c of row r at chunk c ^ (r % 8)). "
    "cmma.wg_offset(row, col, rows, swizzle, e4m3): the same for 8-bit elements (16 to "
    "a core matrix row, 128 to a swizzled row).")

# name -> intrinsic, for the frontend's registry (frontend/values.py)
CMMA_INTRINSICS: dict[str, Intrinsic] = {
    obj.name: obj for obj in (Matrix, Matrices, fill, load, load_with_layout, execute,
                              store, scale, scale_rows, scale_cols, cast,
                              WarpgroupAccumulator, wg_mma, wg_fence,
                              wg_commit, wg_wait, wg_offset)}


def wg_offset_host(row, col, rows: int, swizzle: int = 0, elem=None):
    """cmma.wg_offset on the host (ints or numpy integer arrays), to lay out tiles;
    `elem` the element type (f16 when None; e4m3 and e5m2 put 16 elements in a core
    matrix row)."""
    return _layout_offset(row, col, rows, swizzle, elem.itemsize if elem is not None else 2)


__all__ = ["MatrixIdent", "MatrixLayout", "A", "B", "ACCUMULATOR", "ROW_MAJOR",
           "COL_MAJOR", "Matrix", "Matrices", "fill", "load", "load_with_layout",
           "execute", "store", "scale", "scale_rows", "scale_cols", "cast", "tf32",
           "WarpgroupAccumulator", "wg_mma", "wg_fence", "wg_commit", "wg_wait", "wg_offset",
           "wg_offset_host"]
