"""The shared memory layout cmma.wg_mma reads, shared by the CUDA code generator (which
writes it into wgmma's matrix descriptors) and the cpu runtime's emulation (which reads
shared memory through the same descriptor rules), so a layout mistake shows on both.

A tile of `rows` x `cols` 16-bit elements is stored as core matrices of 8 rows x 8
elements, each 128 contiguous bytes (its 8 rows of 16 bytes, in order); the cores lie
column of cores after column of cores: core (r // 8, c // 8) starts at element
((c // 8) * (rows // 8) + r // 8) * 64 (`offset`). So the next 8 rows are 128 bytes on
and the next 8 columns rows * 16 bytes on. Everything here is in bytes first: a tile of
8-bit elements (e4m3, e5m2) has the same core matrices of 8 rows x 16 bytes, 16 elements
a row (`elem_bytes` 1), and wgmma reads it K-major only.

wgmma's no-swizzle ("interleaved") descriptor names two such steps (PTX ISA, "Matrix
Descriptor Format" and "Strides"): for a K-major operand (A, and a col-major B stored n x
k) the leading byte offset (LBO) is the step between the two 8-element halves of k and
the stride byte offset (SBO) the step between groups of 8 rows of M (or N); for an
MN-major operand (a row-major B stored k x n: lines of 8 N elements) LBO is the step
between groups of 8 k and SBO between groups of 8 N.

The 128-byte swizzle (`swizzle` 128; descriptor layout type 1 in bits 62-63) stores a
tile as rows of 64 elements (128 bytes): element (row, col) in block col // 64 (blocks
of rows x 64 elements, one after another), at row * 128 bytes in it, its 16-byte chunk
(col % 64) // 8 stored at chunk chunk ^ (row % 8) (`offset`). Eight rows make a swizzle
atom of 1024 bytes, which must start at a multiple of 1024 bytes of shared memory:
wgmma computes an address from the descriptor's canonical layout and then XORs its bits
4-6 with bits 7-9 (CUTLASS's Swizzle<3, 4, 3>), so the chunk a descriptor reads is the
one `offset` stored only when the atoms are 1024-byte aligned (`swizzled_address`).
Canonical layouts (PTX ISA "Shared Memory Matrix Layout", T = 8 elements): K-major
((8, m), (T, 2k)) : ((8T, SBO), (1, T)): SBO the step between groups of 8 rows (1024
bytes here), LBO unused (encoded 1, as CUTLASS does), and a k16 step inside an atom
moves the start address on by 32 bytes; MN-major ((T, 8, m), (8, k)) : ((1, T, LBO),
(8T, SBO)): LBO the step between blocks of 64 MN elements (rows * 128 bytes here), SBO
between groups of 8 k (1024 bytes).
"""
from __future__ import annotations

CORE_BYTES = 128  # one core matrix: 8 rows of 16 bytes
ELEMENT_BYTES = 2  # f16 / bf16
TILE_ALIGN = 128  # CUDA aligns every shared array wg_mma reads to this many bytes
SWIZZLE_ALIGN = 1024  # and those it reads with the 128-byte swizzle to this many
SWIZZLES = (0, 128)  # the swizzle modes: none (interleaved) and 128 bytes
SWIZZLE_ROW = 64  # elements in a row of a 128-byte swizzled tile (128 bytes)
SWIZZLE_LAYOUT_TYPE = {0: 0, 128: 1}  # descriptor bits 62-63 (PTX ISA, CUTLASS's B128)


def line_elems(elem_bytes: int = ELEMENT_BYTES) -> int:
    """Elements in 16 bytes: a core matrix row, a swizzle chunk (8, or 16 for fp8)."""
    return 16 // elem_bytes


def offset(row, col, rows: int, swizzle: int = 0, elem_bytes: int = ELEMENT_BYTES):
    """The element offset of (row, col) in a tile of `rows` rows (ints or numpy arrays)
    of `elem_bytes`-byte elements; cmma.wg_offset in a kernel."""
    e = line_elems(elem_bytes)
    if swizzle == 128:
        width = 8 * e  # a 128-byte row
        chunk = ((col % width) // e) ^ (row % 8)
        return ((col // width) * rows + row) * width + chunk * e + col % e
    return ((col // e) * (rows // 8) + row // 8) * 8 * e + (row % 8) * e + col % e


def swizzled_address(byte):
    """The byte wgmma reads for canonical address `byte` under the 128-byte swizzle:
    bits 4-6 XOR bits 7-9 (ints or numpy arrays)."""
    return byte ^ (((byte >> 7) & 7) << 4)


def descriptor_strides(operand: str, rows: int, layout: str = "row_major",
                       swizzle: int = 0) -> tuple[int, int, bool]:
    """(LBO bytes, SBO bytes, transposed) of the descriptor of operand "a" or "b" read
    from a tile of `rows` rows. A is K-major (its tile is m x k); B row major is stored k
    x n, MN-major (wgmma's imm-trans-b = 1); B col major is stored n x k, K-major."""
    k_major = operand == "a" or layout == "col_major"
    if swizzle == 128:
        atom = 8 * SWIZZLE_ROW * ELEMENT_BYTES  # 8 rows of 128 bytes
        if k_major:  # LBO unused: 16 (the field's 1)
            return 16, atom, False
        return rows * SWIZZLE_ROW * ELEMENT_BYTES, atom, True
    row_step, col_step = CORE_BYTES, rows * 16
    if k_major:  # K-major: rows are M (or N), cols K
        return col_step, row_step, False
    return row_step, col_step, True  # MN-major: rows are K, cols N


def canonical_offsets(k_major: bool, lbo: int, sbo: int, mn: int, k: int,
                      elem_bytes: int = ELEMENT_BYTES):
    """(mn x k) element offsets of the matrix a no-swizzle descriptor with byte offsets
    `lbo` and `sbo` describes (PTX ISA, "Canonical Layouts", T = 16 bytes of elements):
    K-major ((8, m), (T, 2k)) : ((T, SBO), (1, LBO)), MN-major (16-bit only) ((8, m),
    (8, k)) : ((1, SBO), (8, LBO)), strides in elements (SBO and LBO in bytes)."""
    import numpy as np
    e = line_elems(elem_bytes)
    i = np.arange(mn)[:, None]
    j = np.arange(k)[None, :]
    if k_major:  # 16-byte lines along k; 8 lines of mn per core matrix
        nbytes = (i // 8) * sbo + (i % 8) * 16 + (j // e) * lbo + (j % e) * elem_bytes
    else:  # 16-byte lines along mn; 8 lines of k per core matrix
        nbytes = (i // e) * sbo + (i % e) * elem_bytes + (j // 8) * lbo + (j % 8) * 16
    return nbytes // elem_bytes


def swizzled_canonical_bytes(k_major: bool, lbo: int, sbo: int, mn: int, k: int,
                             elem_bytes: int = ELEMENT_BYTES):
    """(mn x k) byte offsets, before the swizzle, of the matrix a 128-byte swizzle
    descriptor describes (PTX ISA, "Canonical Layouts"): K-major ((8, m), (T, 2k)) :
    ((8T, SBO), (1, T)) (LBO unused), MN-major (16-bit only) ((T, 8, m), (8, k)) :
    ((1, T, LBO), (8T, SBO))."""
    import numpy as np
    i = np.arange(mn)[:, None]
    j = np.arange(k)[None, :]
    line = 128  # bytes in a row of the swizzled layout
    if k_major:
        return (i // 8) * sbo + (i % 8) * line + j * elem_bytes
    return ((i // SWIZZLE_ROW) * lbo + (i % SWIZZLE_ROW) * ELEMENT_BYTES
            + (j // 8) * sbo + (j % 8) * line)


def element_offsets(operand: str, rows: int, layout: str, mn: int, k: int,
                    start=0, swizzle: int = 0, elem_bytes: int = ELEMENT_BYTES):
    """(mn x k) element offsets, from the shared array's first element, of what wgmma
    reads through the descriptor of `descriptor_strides` from element `start` (an int
    or a numpy array, giving (len, mn, k)): A's 64 x k (m, k), or B's n x k (n, k: the
    transpose of the k x n operand), k 16 (32 for 8-bit elements). With the swizzle the
    array must start at a multiple of SWIZZLE_ALIGN bytes (CUDA aligns it so)."""
    import numpy as np
    lbo, sbo, transposed = descriptor_strides(operand, rows, layout, swizzle)
    start = np.asarray(start, np.int64)[..., None, None]
    if swizzle == 128:
        canon = swizzled_canonical_bytes(not transposed, lbo, sbo, mn, k, elem_bytes)
        return swizzled_address(start * elem_bytes + canon) // elem_bytes
    return start + canonical_offsets(not transposed, lbo, sbo, mn, k, elem_bytes)
