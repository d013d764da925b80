"""The shared memory layout cmma.wg_mma reads, shared by the CUDA code generator (which
writes it into wgmma's matrix descriptors) and the cpu runtime's emulation (which reads
shared memory through the same descriptor rules), so a layout mistake shows on both.

A tile of `rows` x `cols` 16-bit elements is stored as core matrices of 8 rows x 8
elements, each 128 contiguous bytes (its 8 rows of 16 bytes, in order); the cores lie
column of cores after column of cores: core (r // 8, c // 8) starts at element
((c // 8) * (rows // 8) + r // 8) * 64 (`offset`). So the next 8 rows are 128 bytes on
and the next 8 columns rows * 16 bytes on.

wgmma's no-swizzle ("interleaved") descriptor names two such steps (PTX ISA, "Matrix
Descriptor Format" and "Strides"): for a K-major operand (A, and a col-major B stored n x
k) the leading byte offset (LBO) is the step between the two 8-element halves of k and
the stride byte offset (SBO) the step between groups of 8 rows of M (or N); for an
MN-major operand (a row-major B stored k x n: lines of 8 N elements) LBO is the step
between groups of 8 k and SBO between groups of 8 N.
"""
from __future__ import annotations

CORE_BYTES = 128  # one core matrix: 8 rows of 16 bytes
ELEMENT_BYTES = 2  # f16 / bf16
TILE_ALIGN = 128  # CUDA aligns every shared array wg_mma reads to this many bytes


def offset(row, col, rows: int):
    """The element offset of (row, col) in a tile of `rows` rows (ints or numpy arrays);
    cmma.wg_offset in a kernel."""
    return ((col // 8) * (rows // 8) + row // 8) * 64 + (row % 8) * 8 + col % 8


def descriptor_strides(operand: str, rows: int, layout: str = "row_major"
                       ) -> tuple[int, int, bool]:
    """(LBO bytes, SBO bytes, transposed) of the descriptor of operand "a" or "b" read
    from a tile of `rows` rows. A is K-major (its tile is m x k); B row major is stored k
    x n, MN-major (wgmma's imm-trans-b = 1); B col major is stored n x k, K-major."""
    row_step, col_step = CORE_BYTES, rows * 16
    if operand == "a" or layout == "col_major":  # K-major: rows are M (or N), cols K
        return col_step, row_step, False
    return row_step, col_step, True  # MN-major: rows are K, cols N


def element_offsets(operand: str, rows: int, layout: str, outer: int, inner: int):
    """(outer x inner) element offsets, from the operand's first element, of the matrix
    wgmma reads through the descriptor of `descriptor_strides`: A is 64 x 16 (outer m,
    inner k), B is 16 x n (outer k, inner n). The descriptor's rules, not `offset`'s: the
    K-major canonical layout ((8, m), (8, 2)) : ((16 B, SBO), (2 B, LBO)), the MN-major
    ((8, n), (8, 2)) : ((2 B, SBO), (16 B, LBO)) (PTX ISA "Canonical Layouts", no
    swizzle)."""
    import numpy as np
    lbo, sbo, transposed = descriptor_strides(operand, rows, layout)
    o = np.arange(outer)[:, None]
    i = np.arange(inner)[None, :]
    if operand == "a":
        m, k = o, i
        nbytes = (m // 8) * sbo + (m % 8) * 16 + (k // 8) * lbo + (k % 8) * ELEMENT_BYTES
    elif transposed:  # MN-major B: n along 16-byte lines, k across them
        k, n_ = o, i
        nbytes = (n_ // 8) * sbo + (n_ % 8) * ELEMENT_BYTES + (k // 8) * lbo + (k % 8) * 16
    else:  # K-major B: k along 16-byte lines
        k, n_ = o, i
        nbytes = (n_ // 8) * sbo + (n_ % 8) * 16 + (k // 8) * lbo + (k % 8) * ELEMENT_BYTES
    return nbytes // ELEMENT_BYTES
