"""The 128-byte swizzle of the warpgroup multiply: cmma.wg_offset(row, col, rows, 128) and
cmma.wg_mma(..., layout, 128).

The cpu emulation reads A and B through wgmma's own address rules (the canonical layout
of the descriptor's strides, then bits 4-6 XOR bits 7-9 of the byte address), not
through wg_offset, so a tile stored in the wrong place gives a wrong product here as on
a GPU. Runtime tests marked `cuda` need an sm_90 device; source tests compile with nvcc
for sm_90a.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import cubepy
from cubepy import UNIT_POS, Array, SharedMemory, cmma, cube, f16, f32, sync_cube, u32
from cubepy import wgmma_layout as layout
from error_markers import located_error_checker
from source_check import NVCC
from test_lang_wgmma import CLIENTS, _build_error, _nvcc_sm90a, wg_product

ROW = cmma.ROW_MAJOR
RNG = np.random.default_rng(29)
_error_at = located_error_checker(__file__)


@pytest.fixture(params=CLIENTS)
def client(request):
    return cubepy.client(request.param)


# -- the layout ---------------------------------------------------------------------------

def test_swizzled_offset_xors_the_chunk_with_the_row():
    sw = 128
    assert layout.offset(0, 0, 64, sw) == 0
    assert layout.offset(0, 9, 64, sw) == 9  # row 0: chunks in place
    assert layout.offset(1, 0, 64, sw) == 64 + 8  # row 1, chunk 0 -> chunk 1
    assert layout.offset(3, 16, 64, sw) == 3 * 64 + (2 ^ 3) * 8
    assert layout.offset(9, 8, 64, sw) == 9 * 64 + (1 ^ 1) * 8  # row 9 is row 1 of atom 2
    assert layout.offset(5, 64, 16, sw) == 16 * 64 + 5 * 64 + (0 ^ 5) * 8  # 2nd block
    assert cmma.wg_offset_host(7, 63, 8, sw) == 7 * 64 + (7 ^ 7) * 8 + 7


@pytest.mark.parametrize("rows,cols", [(64, 64), (16, 256), (128, 128)])
def test_swizzled_offset_is_a_permutation_of_whole_chunks(rows, cols):
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    got = layout.offset(r, c, rows, 128)
    assert sorted(got.ravel()) == list(range(rows * cols))
    # 8 consecutive columns from a multiple of 8 stay one 16-byte chunk
    np.testing.assert_array_equal(got[:, 1:][:, c[0, 1:] % 8 != 0] % 8,
                                  c[:, 1:][:, c[0, 1:] % 8 != 0] % 8)
    # 8 rows of one chunk column land in 8 different chunk slots (no bank conflict)
    slots = (got[:8, ::8] // 8) % 8
    assert all(len(set(slots[:, j])) == 8 for j in range(slots.shape[1]))


def test_swizzle_descriptor_strides():
    # K-major (A, col-major B): LBO unused (the field's 1), SBO 8 rows of 128 bytes
    assert layout.descriptor_strides("a", 128, swizzle=128) == (16, 1024, False)
    assert layout.descriptor_strides("b", 256, "col_major", 128) == (16, 1024, False)
    # MN-major (row-major B stored k x n): LBO the next 64 n (a block of k rows of 128
    # bytes), SBO 8 k rows
    assert layout.descriptor_strides("b", 64, "row_major", 128) == (8192, 1024, True)


def test_swizzled_address_xors_bits_4_to_6_with_7_to_9():
    assert layout.swizzled_address(0) == 0
    assert layout.swizzled_address(128) == 128 + 16
    assert layout.swizzled_address(3 * 128 + 32 + 6) == 3 * 128 + (2 ^ 3) * 16 + 6
    assert layout.swizzled_address(1024 + 128) == 1024 + 128 + 16  # per 1024-byte atom


@pytest.mark.parametrize("rows", [64, 128])
@pytest.mark.parametrize("kk", [0, 1, 2, 3, 4, 7])
def test_a_descriptor_reads_what_the_swizzled_offset_stored(rows, kk):
    # k16 step kk: steps 1-3 move the start 32 bytes on inside an atom, 4 and on start
    # in the next 64-column block
    m, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    for row0 in range(0, rows, 64):
        start = layout.offset(row0, kk * 16, rows, 128)
        got = layout.element_offsets("a", rows, "row_major", 64, 16, start, 128)
        np.testing.assert_array_equal(got, layout.offset(row0 + m, kk * 16 + k, rows, 128))


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("kk", [0, 1, 3])
def test_b_descriptors_read_what_the_swizzled_offset_stored(n, kk):
    n_, k = np.meshgrid(np.arange(n), np.arange(16), indexing="ij")
    rows = 64  # k rows of the row-major tile: k16 steps 2048 bytes apart
    got = layout.element_offsets("b", rows, "row_major", n, 16,
                                 layout.offset(kk * 16, 0, rows, 128), 128)
    np.testing.assert_array_equal(got, layout.offset(kk * 16 + k, n_, rows, 128))
    # col major: the tile is n x k, K-major like A
    got = layout.element_offsets("b", n, "col_major", n, 16,
                                 layout.offset(0, kk * 16, n, 128), 128)
    np.testing.assert_array_equal(got, layout.offset(n_, kk * 16 + k, n, 128))


def test_the_interleaved_layout_is_not_what_the_swizzled_descriptor_reads():
    m, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    got = layout.element_offsets("a", 64, "row_major", 64, 16, 0, 128)
    assert (got != layout.offset(m, k, 64)).any()
    assert (got != m * 64 + k).any()  # nor the unswizzled rows of 128 bytes


# -- products -----------------------------------------------------------------------------

def _run(client, n, k, groups, b_col, store_swizzle=128):
    m = 64 * groups
    a = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    out = client.zeros(m * n, f32)
    wg_product.launch(client, (1, 1, 1), (128 * groups, 1, 1), client.tensor(a.ravel()),
                      client.tensor(b.ravel()), out, 0, n, n=n, k=k, groups=groups,
                      b_rows_n=b_col, swizzle=128, store_swizzle=store_swizzle)
    return out.numpy().reshape(m, n), a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
def test_swizzled_single_tile(client, n, b_col):
    got, want = _run(client, n, 64, 1, b_col)  # 4 k16 steps inside one atom
    np.testing.assert_allclose(got, want, atol=2e-3)


@pytest.mark.parametrize("k", [64, 128])
@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
def test_swizzled_k_blocks_and_two_warpgroups(client, k, b_col):
    got, want = _run(client, 128, k, 2, b_col)  # k 128: two 64-column blocks
    np.testing.assert_allclose(got, want, atol=3e-3)


def test_a_swizzled_tile_is_rows_of_64_elements():
    # a 64 x 16 A tile in 2048 bytes: wgmma reads rows 128 bytes apart, past its end
    with pytest.raises(cubepy.LaunchError, match="A tile reaches past the end"):
        _run(cubepy.client("cpu"), 64, 16, 1, False)


@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
def test_tiles_stored_unswizzled_give_another_product(b_col):
    got, want = _run(cubepy.client("cpu"), 64, 64, 1, b_col, store_swizzle=0)
    assert np.abs(got - want).max() > 0.1


# -- CUDA source --------------------------------------------------------------------------

def _source(**spec) -> str:
    spec = {"n": 128, "k": 64, "groups": 2, "b_rows_n": False, "swizzle": 128,
            "store_swizzle": 128, **spec}
    return wg_product.source("cuda", cube_dim=(128 * spec["groups"], 1, 1), checked=False,
                             **spec)


def test_cuda_source_builds_swizzled_descriptors():
    src = _source()
    assert "| (1ull << 62);" in src  # layout type 1: the 128-byte swizzle
    assert re.search(r"cube_wgmma_desc_sw128\(a_s \+ [^,]+, 16u, 1024u\)", src), src
    # B row major, 64 k rows: LBO the next 64 n (64 * 128 bytes), SBO 8 k rows
    assert re.search(r"cube_wgmma_desc_sw128\(b_s \+ [^,]+, 8192u, 1024u\)", src), src
    assert "p, 1, 1, 0, 1;" in src
    assert "__shared__ __align__(1024) __half a_s" in src
    assert "__shared__ __align__(1024) __half b_s" in src
    assert "cube_wgmma_desc(" not in src
    col = _source(b_rows_n=True)
    assert re.search(r"cube_wgmma_desc_sw128\(b_s \+ [^,]+, 16u, 1024u\)", col), col
    assert "p, 1, 1, 0, 0;" in col


@cube(launch=True)
def big_swizzled(a: Array[f16], out: Array[f32]):
    small = SharedMemory(f32, 8)  # 32 bytes before the tiles
    a_s = SharedMemory(f16, 64 * 64 * 10)  # 80 KB: the arrays are carved
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    small[UNIT_POS % 8] = 1.0
    for i in range(UNIT_POS, 64 * 64 * 2, 128):
        a_s[i] = a[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, a_s, 64 * 64, 64, ROW, 128)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, u32(small[0]), acc, 64, ROW)


def test_carved_swizzled_tiles_start_at_1024_bytes():
    src = big_swizzled.source("cuda", cube_dim=(128, 1, 1), checked=False)
    assert "cube_smem_1k = cube_smem + ((1024u - ((unsigned)__cvta_generic_to_shared(" \
           "cube_smem) & 1023u)) & 1023u);" in src, src
    assert "reinterpret_cast<__half*>(cube_smem_1k + 1024)" in src, src


def test_carved_swizzled_launch_has_room_to_align():
    from cubepy.codegen.cuda import _carve_offsets, _carved_shared_bytes
    from cubepy.ir.parser import parse_kernel
    k = parse_kernel(big_swizzled.ir(cube_dim=(128, 1, 1), target="cuda"))
    offsets, end = _carve_offsets(k)
    assert offsets == [0, 1024]
    assert _carved_shared_bytes(k) == end + 1024


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("n,b_col", [(256, False), (128, True)])
def test_nvcc_accepts_swizzled_for_sm_90a(tmp_path, n, b_col):
    _nvcc_sm90a(_source(n=n, b_rows_n=b_col), tmp_path)
    _nvcc_sm90a(big_swizzled.source("cuda", cube_dim=(128, 1, 1)), tmp_path)


def test_ir_text_round_trips_the_swizzle():
    from cubepy.ir.parser import parse_kernel
    from cubepy.ir.printer import print_kernel
    text = wg_product.ir(cube_dim=(128, 1, 1), target="cuda", n=64, k=16, groups=1,
                         b_rows_n=False, swizzle=128, store_swizzle=128)
    assert ", row_major, 128)" in text
    assert print_kernel(parse_kernel(text)) == text


# -- errors -------------------------------------------------------------------------------

def test_swizzle_is_0_or_128():
    def k(out: Array[u32]):
        out[0] = cmma.wg_offset(0, 0, 64, 64)  # E:offset
    _error_at(_build_error(k), "offset", "0 (core matrices) or 128")

    def m(out: Array[f32]):
        a = SharedMemory(f16, 64 * 64)
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.wg_mma(acc, a, 0, 64, a, 0, 64, ROW, 32)  # E:mma
    _error_at(_build_error(m), "mma", "0 (core matrices) or 128")


def test_verifier_rejects_another_swizzle_in_ir_text():
    from cubepy.ir.parser import parse_kernel
    from cubepy.ir.verify import IRVerifyError, verify
    text = wg_product.ir(cube_dim=(128, 1, 1), target="cuda", n=64, k=64, groups=1,
                         b_rows_n=False, swizzle=128, store_swizzle=128)
    kernel = parse_kernel(text.replace(", row_major, 128)", ", row_major, 64)"))
    with pytest.raises(IRVerifyError, match="swizzle 64"):
        verify(kernel)
