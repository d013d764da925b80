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
"""
from __future__ import annotations

from enum import Enum

from .lang import Intrinsic, tf32


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
cast = Intrinsic("cmma.cast", "cmma.cast(acc, elem): a new accumulator holding acc's "
                 "elements converted to elem (f16 or f32).")

# name -> intrinsic, for the frontend's registry (frontend/values.py)
CMMA_INTRINSICS: dict[str, Intrinsic] = {
    obj.name: obj for obj in (Matrix, Matrices, fill, load, load_with_layout, execute,
                              store, cast)}

__all__ = ["MatrixIdent", "MatrixLayout", "A", "B", "ACCUMULATOR", "ROW_MAJOR",
           "COL_MAJOR", "Matrix", "Matrices", "fill", "load", "load_with_layout",
           "execute", "store", "cast", "tf32"]
