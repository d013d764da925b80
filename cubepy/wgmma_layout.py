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


def canonical_offsets(k_major: bool, lbo: int, sbo: int, mn: int, k: int):
    """(mn x k) element offsets of the 16-bit matrix a no-swizzle descriptor with byte
    offsets `lbo` and `sbo` describes (PTX ISA, "Canonical Layouts", T = 8 elements):
    K-major ((8, m), (8, 2k)) : ((8, SBO), (1, LBO)), MN-major ((8, m), (8, k)) :
    ((1, SBO), (8, LBO)), strides in elements (SBO and LBO in bytes / 2)."""
    import numpy as np
    i = np.arange(mn)[:, None]
    j = np.arange(k)[None, :]
    if k_major:  # 16-byte lines along k; 8 lines of mn per core matrix
        nbytes = (i // 8) * sbo + (i % 8) * 16 + (j // 8) * lbo + (j % 8) * ELEMENT_BYTES
    else:  # 16-byte lines along mn; 8 lines of k per core matrix
        nbytes = (i // 8) * sbo + (i % 8) * ELEMENT_BYTES + (j // 8) * lbo + (j % 8) * 16
    return nbytes // ELEMENT_BYTES


def element_offsets(operand: str, rows: int, layout: str, mn: int, k: int):
    """(mn x k) element offsets, from the operand's first element, of what wgmma reads
    through the descriptor of `descriptor_strides`: A's 64 x 16 (m, k), or B's n x 16
    (n, k: the transpose of the k x n operand)."""
    lbo, sbo, transposed = descriptor_strides(operand, rows, layout)
    return canonical_offsets(not transposed, lbo, sbo, mn, k)
