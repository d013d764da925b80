"""The warpgroup matrix multiply (cmma.WarpgroupAccumulator, wg_mma, wg_offset).

Runtime tests run on the cpu runtime's emulation against numpy and, marked `cuda`, on a
Hopper GPU (sm_90; skipped elsewhere). The emulation reads shared memory through the
same descriptor rules the CUDA code generator writes (cubepy/wgmma_layout.py), which are
checked here against the PTX ISA's canonical layouts. Source tests compile the CUDA with
nvcc for sm_90a; WGSL and Metal lack the multiply (a CompileError at the user's line,
marked `# E:<tag>`).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, Array, CompileError, Comptime, LaunchError, SharedMemory,
                    bf16, cmma, cube, f16, f32, sync_cube, u32, unroll)
from cubepy import wgmma_layout as layout
from cubepy.runtime.cuda_compile import CudaCompiler
from error_markers import located_error_checker
from source_check import NVCC, assert_no_spills, check_cuda


def _present(name: str) -> bool:
    try:
        cubepy.client(name)
        return True
    except LaunchError:
        return False


def _hopper() -> bool:
    return _present("cuda") and cubepy.client("cuda").compiler.arch == "sm_90"


CUDA_HOPPER = [pytest.mark.cuda,
               pytest.mark.skipif(not _hopper(), reason="no sm_90 CUDA device")]
CLIENTS = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=CUDA_HOPPER)]
ROW, COL = cmma.ROW_MAJOR, cmma.COL_MAJOR
RNG = np.random.default_rng(11)


@pytest.fixture(params=CLIENTS)
def client(request):
    return cubepy.client(request.param)


_error_at = located_error_checker(__file__)


# -- the layout ---------------------------------------------------------------------------

def test_wg_offset_places_core_matrices_column_after_column():
    rows = 64
    assert layout.offset(0, 1, rows) == 1  # along a 16-byte row of a core matrix
    assert layout.offset(1, 0, rows) == 8  # the next row of the core: 16 bytes on
    assert layout.offset(8, 0, rows) == 64  # the core below: 128 bytes on
    assert layout.offset(0, 8, rows) == 512  # the next column of cores: rows * 8
    assert cmma.wg_offset_host(63, 15, rows) == 1023
    r, c = np.meshgrid(np.arange(rows), np.arange(32), indexing="ij")
    assert sorted(layout.offset(r, c, rows).ravel()) == list(range(rows * 32))


def test_canonical_layout_matches_the_ptx_isa_example():
    # PTX ISA, "Canonical Layouts": MN-major, no swizzle, bf16, T = 8: ((8,1,2),(8,2)) :
    # ((1,8,64),(8,128)) with LBO = 128 * 2 bytes and SBO = 64 * 2 bytes
    got = layout.canonical_offsets(False, 256, 128, 16, 16)
    mn, k = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    want = mn % 8 + (mn // 8) * 64 + (k % 8) * 8 + (k // 8) * 128
    np.testing.assert_array_equal(got, want)
    # K-major ((8,m),(T,2k)) : ((1T,SBO),(1,LBO)), in elements: rows of 8 k contiguous
    got = layout.canonical_offsets(True, 1024, 128, 16, 16)
    want = (mn % 8) * 8 + (mn // 8) * 64 + k % 8 + (k // 8) * 512
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("rows", [16, 64, 128])
def test_descriptors_read_what_wg_offset_stored(rows):
    m, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(layout.element_offsets("a", max(rows, 64), "row_major",
                                                         64, 16),
                                  layout.offset(m, k, max(rows, 64)))
    n_, kb = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    # row-major B: the tile is k x n, element (k, n) at offset(k, n, rows)
    np.testing.assert_array_equal(layout.element_offsets("b", rows, "row_major", 64, 16),
                                  layout.offset(kb, n_, rows))
    # col-major B: the tile is n x k
    np.testing.assert_array_equal(layout.element_offsets("b", 64, "col_major", 64, 16),
                                  layout.offset(n_, kb, 64))


@cube(launch=True)
def offsets(out: Array[u32], rows: Comptime[int], cols: Comptime[int],
            swizzle: Comptime[int]):
    i = cubepy.ABSOLUTE_POS
    if i < rows * cols:
        out[i] = cmma.wg_offset(i // cols, i % cols, rows, swizzle)


@pytest.mark.parametrize("rows,cols,swizzle", [(64, 16, 0), (16, 256, 0), (128, 64, 0),
                                               (64, 64, 128), (16, 256, 128)])
def test_wg_offset_in_a_kernel(rows, cols, swizzle):
    """The kernel's offsets are wgmma_layout's, without and with the 128-byte swizzle."""
    client = cubepy.client("cpu")
    out = client.zeros(rows * cols, cubepy.u32)
    offsets.launch(client, (rows * cols // 64, 1, 1), (64, 1, 1), out, rows=rows,
                   cols=cols, swizzle=swizzle)
    r, c = np.divmod(np.arange(rows * cols), cols)
    np.testing.assert_array_equal(out.numpy(), layout.offset(r, c, rows, swizzle))


# -- products -----------------------------------------------------------------------------

@cube(launch=True)
def wg_product(a: Array[f16], b: Array[f16], out: Array[f32], out_offset: u32,
               out_stride: u32, n: Comptime[int], k: Comptime[int], groups: Comptime[int],
               b_rows_n: Comptime[bool], swizzle: Comptime[int], store_swizzle: Comptime[int]):
    """out = a @ b: `groups` warpgroups, each 64 rows of a ((64 * groups) x k) times b
    (k x n), k / 16 multiplies in one commit group; B stored k x n (row major), or
    n x k (col major) when b_rows_n. The tiles are read with `swizzle` (0 or 128) and
    stored with wg_offset(..., store_swizzle) (the same, or another to get it wrong)."""
    rows_a = 64 * groups
    a_s = SharedMemory(f16, rows_a * k)
    b_s = SharedMemory(f16, k * n)
    acc = cmma.WarpgroupAccumulator(n, f32)
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, rows_a * k, 128 * groups):
        a_s[cmma.wg_offset(i // k, i % k, rows_a, store_swizzle)] = a[i]
    for i in range(UNIT_POS, k * n, 128 * groups):
        if b_rows_n:
            b_s[cmma.wg_offset(i % n, i // n, n, store_swizzle)] = b[i]
        else:
            b_s[cmma.wg_offset(i // n, i % n, k, store_swizzle)] = b[i]
    sync_cube()
    wg = UNIT_POS // 128
    cmma.wg_fence()
    for s in unroll(range(k // 16)):
        a_at = cmma.wg_offset(wg * 64, s * 16, rows_a, swizzle)
        if b_rows_n:
            cmma.wg_mma(acc, a_s, a_at, rows_a, b_s, cmma.wg_offset(0, s * 16, n, swizzle),
                        n, COL, swizzle)
        else:
            cmma.wg_mma(acc, a_s, a_at, rows_a, b_s, cmma.wg_offset(s * 16, 0, k, swizzle),
                        k, ROW, swizzle)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, out_offset + wg * 64 * out_stride, acc, out_stride, ROW)


NO_SWIZZLE = {"swizzle": 0, "store_swizzle": 0}  # wg_product's core-matrix layout


def _halves(*shape) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float16)


def _run_product(client, n, k, groups, b_col, out_stride=None, out_offset=0):
    m = 64 * groups
    a, b = _halves(m, k), _halves(k, n)
    stride = out_stride or n
    out = client.zeros(out_offset + m * stride, f32)
    wg_product.launch(client, (1, 1, 1), (128 * groups, 1, 1), client.tensor(a.ravel()),
                      client.tensor(b.ravel()), out, out_offset, stride, n=n, k=k,
                      groups=groups, b_rows_n=b_col, **NO_SWIZZLE)
    got = out.numpy()[out_offset:].reshape(m, stride)[:, :n]
    return got, a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
def test_single_tile_product(client, n, b_col):
    got, want = _run_product(client, n, 16, 1, b_col)
    np.testing.assert_allclose(got, want, atol=1e-3)


@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
def test_k_steps_and_two_warpgroups(client, b_col):
    got, want = _run_product(client, 128, 64, 2, b_col)
    np.testing.assert_allclose(got, want, atol=2e-3)


def test_store_with_offset_and_stride(client):
    got, want = _run_product(client, 64, 32, 1, False, out_stride=80, out_offset=5)
    np.testing.assert_allclose(got, want, atol=2e-3)


@cube
def multiply_64x16_by_16x64(a: Array[f16], b: Array[f16], a_s: Array[f16], b_s: Array[f16],
                            acc):
    """acc += A (64 x 16) @ B (16 x 64), row major in a and b, staged into wgmma's layout
    in shared memory; the multiply waited for."""
    for i in range(UNIT_POS, 1024, 128):
        a_s[cmma.wg_offset(i // 16, i % 16, 64)] = a[i]
        b_s[cmma.wg_offset(i // 64, i % 64, 16)] = b[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 16, ROW)
    cmma.wg_commit()
    cmma.wg_wait(0)


@cube(launch=True)
def wg_product_f16(a: Array[f16], b: Array[f16], out: Array[f16]):
    a_s = SharedMemory(f16, 64 * 16)
    b_s = SharedMemory(f16, 16 * 64)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.25)
    multiply_64x16_by_16x64(a, b, a_s, b_s, acc)
    cmma.store(out, 0, acc, 64, ROW)


def test_fill_accumulates_and_store_converts_to_f16(client):
    a, b = _halves(64, 16), _halves(16, 64)
    out = client.zeros(64 * 64, f16)
    wg_product_f16.launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a.ravel()),
                          client.tensor(b.ravel()), out)
    want = (a.astype(np.float32) @ b.astype(np.float32) + 0.25).astype(np.float16)
    np.testing.assert_allclose(out.numpy().reshape(64, 64).astype(np.float32),
                               want.astype(np.float32), atol=2e-3)


@cube(launch=True)
def wg_through_shared(a: Array[f16], b: Array[f16], out: Array[f16], offset: u32,
                      stride: u32, lines: Comptime[bool]):
    """The product stored into shared memory at `offset` with row `stride` (f16
    elements; in a SharedMemory of Line[f16] of 8 with `lines`), then copied to out."""
    a_s = SharedMemory(f16, 64 * 16)
    b_s = SharedMemory(f16, 16 * 64)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    multiply_64x16_by_16x64(a, b, a_s, b_s, acc)
    if lines:
        tile_lines = SharedMemory(cubepy.Line[f16], 64 * 72 // 8 + 1, 8)
        cmma.store(tile_lines, offset, acc, stride, ROW)
        sync_cube()
        for i in range(UNIT_POS, 64 * 64, 128):
            at = offset + i // 64 * stride + i % 64
            out[i] = tile_lines[at // 8][at % 8]
    else:
        tile = SharedMemory(f16, 64 * 72 + 8)
        cmma.store(tile, offset, acc, stride, ROW)
        sync_cube()
        for i in range(UNIT_POS, 64 * 64, 128):
            out[i] = tile[offset + i // 64 * stride + i % 64]


# even strides and aligned offsets take the pair stores on CUDA; an odd stride or an odd
# offset the element stores: the same values either way
@pytest.mark.parametrize("lines", [False, True], ids=["elements", "lines"])
@pytest.mark.parametrize("offset,stride", [(0, 72), (8, 64), (3, 72), (0, 65), (5, 67)])
def test_store_into_shared_memory(client, lines, offset, stride):
    a, b = _halves(64, 16), _halves(16, 64)
    out = client.zeros(64 * 64, f16)
    wg_through_shared.launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a.ravel()),
                             client.tensor(b.ravel()), out, offset, stride, lines=lines)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(out.numpy().reshape(64, 64).astype(np.float32), want,
                               atol=3e-3)


@cube(launch=True)
def wg_into_lines(a: Array[f16], b: Array[f16], out: cubepy.Tensor[cubepy.Line[f16]],
                  offset: u32, stride: u32):
    """The product stored into a Line tensor (offset and stride in elements), and one
    line access of it, so that it stays a Line tensor."""
    a_s = SharedMemory(f16, 64 * 16)
    b_s = SharedMemory(f16, 16 * 64)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    multiply_64x16_by_16x64(a, b, a_s, b_s, acc)
    cmma.store(out, offset, acc, stride, ROW)
    sync_cube()
    if UNIT_POS == 0:
        out[len(out) - 1] = out[len(out) - 1] * 2.0  # the last line, past the tile


@pytest.mark.parametrize("line", [4, 8])
@pytest.mark.parametrize("offset,stride", [(8, 72), (5, 67)])
def test_store_into_a_line_tensor(client, line, offset, stride):
    a, b = _halves(64, 16), _halves(16, 64)
    size = -(-(offset + 64 * stride + 8) // 8) * 8  # a whole line of 8 past the tile
    out = client.tensor(np.ones(size, np.float16)).with_line_size(line)
    wg_into_lines.launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a.ravel()),
                         client.tensor(b.ravel()), out, offset, stride)
    got = out.numpy().ravel()
    tile = got[offset:offset + 64 * stride].reshape(64, stride)[:, :64]
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(tile.astype(np.float32), want, atol=3e-3)
    np.testing.assert_array_equal(got[-line:], 2.0)  # the line access
    src = wg_into_lines.source("cuda", cube_dim=(128, 1, 1), line_sizes={"out": line})
    assert "__floats2half2_rn(" in src and "__half* const cube_p" in src


def test_odd_strides_and_offsets_store_f16_and_f32_alike(client):
    for stride, offset in ((67, 0), (80, 5), (65, 3)):
        got, want = _run_product(client, 64, 16, 1, False, out_stride=stride,
                                 out_offset=offset)
        np.testing.assert_allclose(got, want, atol=2e-3)


@cube(launch=True)
def plain_row_major(a: Array[f16], b: Array[f16], out: Array[f32]):
    """A and B stored row major (not with wg_offset): not the layout wgmma reads."""
    a_s = SharedMemory(f16, 64 * 16)
    b_s = SharedMemory(f16, 16 * 64)
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, 1024, 128):
        a_s[i] = a[i]
        b_s[i] = b[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 16, ROW)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, 0, acc, 64, ROW)


def test_a_tile_in_another_layout_gives_another_product(client):
    a, b = _halves(64, 16), _halves(16, 64)
    out = client.zeros(64 * 64, f32)
    plain_row_major.launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a.ravel()),
                           client.tensor(b.ravel()), out)
    got = out.numpy().reshape(64, 64)
    want = a.astype(np.float32) @ b.astype(np.float32)
    assert np.abs(got - want).max() > 0.1


# -- the asynchronous rules on the cpu ------------------------------------------------------

@cube(launch=True)
def early_store(a: Array[f16], out: Array[f32], wait: Comptime[bool]):
    a_s = SharedMemory(f16, 64 * 16)
    acc = cmma.WarpgroupAccumulator(16, f32)
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, 1024, 128):
        a_s[i] = a[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, a_s, 0, 16, ROW)
    cmma.wg_commit()
    if wait:
        cmma.wg_wait(0)
    cmma.store(out, 0, acc, 16, ROW)


def test_cpu_refuses_reading_an_accumulator_before_wg_wait():
    client = cubepy.client("cpu")
    a = client.tensor(_halves(1024))
    out = client.zeros(64 * 16, f32)
    with pytest.raises(LaunchError, match="wg_commit\\(\\) and wg_wait\\(\\) first"):
        early_store.launch(client, (1, 1, 1), (128, 1, 1), a, out, wait=False)
    early_store.launch(client, (1, 1, 1), (128, 1, 1), a, out, wait=True)
    assert out.numpy().any()


@cube(launch=True)
def chained_groups(a: Array[f16], out: Array[f32]):
    """Two groups multiply into one accumulator, the second issued while the first may
    run (wg_wait(1) between), each from its own shared copy."""
    a_s = SharedMemory(f16, 2 * 64 * 16)
    acc = cmma.WarpgroupAccumulator(16, f32)
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, 2048, 128):
        a_s[i] = a[i]
    sync_cube()
    for s in unroll(range(2)):
        cmma.wg_fence()
        cmma.wg_mma(acc, a_s, s * 1024, 64, a_s, s * 1024, 16, ROW)
        cmma.wg_commit()
        cmma.wg_wait(1)
    cmma.wg_wait(0)
    cmma.store(out, 0, acc, 16, ROW)


def test_cpu_lets_a_later_group_multiply_into_a_running_accumulator():
    client = cubepy.client("cpu")
    a = _halves(2048)
    out = client.zeros(64 * 16, f32)
    chained_groups.launch(client, (1, 1, 1), (128, 1, 1), client.tensor(a), out)
    want = np.zeros((64, 16))
    for s in range(2):
        tile = a[s * 1024:(s + 1) * 1024].astype(np.float64)
        r, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
        av = tile[cmma.wg_offset_host(r, k, 64)]  # 64 x 16, staged as wg_offset says
        k, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
        bv = tile[cmma.wg_offset_host(k, j, 16)]  # 16 x 16 (k x n)
        want += av @ bv
    np.testing.assert_allclose(out.numpy().reshape(64, 16), want, rtol=1e-5, atol=1e-5)


# -- CUDA source -----------------------------------------------------------------------------

def _source(**spec) -> str:
    spec = {"n": 128, "k": 32, "groups": 1, "b_rows_n": False, **NO_SWIZZLE, **spec}
    return wg_product.source("cuda", cube_dim=(128 * spec["groups"], 1, 1), checked=False,
                             **spec)


def test_cuda_source_builds_descriptors_from_the_layout():
    src = _source()
    # A: 64 rows; K-major: LBO = the next 8 columns (64 * 16 bytes), SBO = 8 rows (128)
    assert re.search(r"cube_wgmma_desc\(a_s \+ [^,]+, 1024u, 128u\)", src), src
    # B row major, 32 rows (k): MN-major: LBO = the next 8 k (128), SBO = 8 n (32 * 16)
    assert re.search(r"cube_wgmma_desc\(b_s \+ [^,]+, 128u, 512u\)", src), src
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in src
    assert "p, 1, 1, 0, 1;" in src  # imm-trans-b = 1: B is MN-major
    assert "__shared__ __align__(128) __half a_s" in src
    assert "wgmma.fence.sync.aligned" in src and "fence.proxy.async.shared::cta" in src
    assert "wgmma.commit_group.sync.aligned" in src
    assert "wgmma.wait_group.sync.aligned 0" in src
    assert "float acc[64];" in src
    col = _source(b_rows_n=True)
    assert re.search(r"cube_wgmma_desc\(b_s \+ [^,]+, 2048u, 128u\)", col), col
    assert "p, 1, 1, 0, 0;" in col  # K-major B


def _store_block(src: str) -> str:
    return src[src.index("const unsigned cube_t"):]


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_store_writes_column_pairs_where_aligned(checked):
    src = _store_block(wg_product.source("cuda", cube_dim=(128, 1, 1), checked=checked,
                                         n=64, k=16, groups=1, b_rows_n=False,
                                         **NO_SWIZZLE))
    # two row pointers (rows r and r + 8 of this unit), stores at constant offsets
    rows = re.findall(r"float\* const (cube_q[01]\d+) = ", src)
    assert len(rows) == 2, src
    # f32: float2 where the stride is even and the tile 8-byte aligned, else elements
    test = re.search(r"if \(\((cube_st\d+) & 1u\) == 0u && \(\(unsigned long long\)"
                     r"\(const void\*\)(cube_p\d+) & 7ull\) == 0ull\) \{", src)
    assert test, src
    pairs, fallback = src[test.end():].split("    } else {\n", 1)
    for q in rows:
        assert f"*reinterpret_cast<float2*>({q} + 8 * cube_j" in pairs
        assert re.search(rf"{q}\[8 \* cube_j\d+ \+ 1\] = acc\[", fallback)
    assert pairs.count("make_float2(acc[") == 2 and "float2" not in fallback
    assert fallback.count("= acc[") == 4  # one element a store
    if checked:  # a pair wholly in the room, else its first element alone
        assert len(re.findall(r"if \(8 \* cube_j\d+ \+ 1 < cube_room[01]\d+\) \*", pairs)) == 2
        assert len(re.findall(r"else if \(8 \* cube_j\d+ < cube_room[01]\d+\)", pairs)) == 2
        assert fallback.count("< cube_room") == 4


def test_store_pairs_f16_and_bf16():
    f16_src = _store_block(wg_through_shared.source("cuda", cube_dim=(128, 1, 1),
                                                    checked=False, lines=False))
    assert "*reinterpret_cast<__half2*>(" in f16_src and "__floats2half2_rn(" in f16_src
    assert "& 3ull) == 0ull" in f16_src  # a pair of halves: 4 bytes
    assert "__float2half_rn(" in f16_src  # the element fallback
    bf_src = _store_block(bf16_product.source("cuda", cube_dim=(128, 1, 1)))
    assert "*reinterpret_cast<__nv_bfloat162*>(" in bf_src
    assert "__floats2bfloat162_rn(" in bf_src and "& 3ull) == 0ull" in bf_src


@cube(launch=True)
def big_tiles(a: Array[f16], out: Array[f32]):
    small = SharedMemory(f32, 8)  # 32 bytes before the tiles
    a_s = SharedMemory(f16, 64 * 16 * 40)  # 80 KB: the arrays are carved
    acc = cmma.WarpgroupAccumulator(64, f32)
    cmma.fill(acc, 0.0)
    small[UNIT_POS % 8] = 1.0
    for i in range(UNIT_POS, 1024, 128):
        a_s[i] = a[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, a_s, 1024, 16, ROW)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, u32(small[0]), acc, 64, ROW)


def test_carved_wgmma_tiles_start_at_128_bytes():
    src = big_tiles.source("cuda", cube_dim=(128, 1, 1), checked=False)
    assert "extern __shared__ __align__(128) unsigned char cube_smem[];" in src
    assert "reinterpret_cast<__half*>(cube_smem + 128)" in src, src


def test_warpgroup_store_needs_no_wmma_alignment():
    from cubepy.ir.parser import parse_kernel
    from cubepy.ir.visit import matrix_buffers
    k = parse_kernel(wg_product.ir(cube_dim=(128, 1, 1), target="cuda", n=64, k=16,
                                   groups=1, b_rows_n=False, **NO_SWIZZLE))
    assert matrix_buffers(k, "global") == frozenset()  # no 32-byte launch check of out


def test_cuda_compiler_picks_sm_90a_for_wgmma_only():
    src = _source()
    assert CudaCompiler("sm_90").arch_for(src) == "sm_90a"
    assert CudaCompiler("sm_90").arch_for("__global__ void k() {}") == "sm_90"
    with pytest.raises(LaunchError, match="only sm_90 \\(Hopper\\) has; this device is "
                                          "sm_89"):
        CudaCompiler("sm_89").arch_for(src)


def test_cuda_compile_uses_sm_90a_and_keys_the_cache_by_it(tmp_path, monkeypatch):
    from cubepy.runtime import cuda_compile
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    archs = []

    def fake_nvcc(source: str, arch: str, fast_math: bool = True) -> bytes:
        archs.append(arch)
        return b"cubin-" + arch.encode()
    monkeypatch.setattr(cuda_compile, "nvrtc_identity", lambda: None)
    monkeypatch.setattr(cuda_compile, "nvcc_identity", lambda: "nvcc|fake")
    monkeypatch.setattr(cuda_compile, "nvcc_version", lambda: "nvcc-fake")
    monkeypatch.setattr(cuda_compile, "compile_nvcc", fake_nvcc)
    comp = CudaCompiler("sm_90")
    assert comp.compile(_source()) == b"cubin-sm_90a"
    assert comp.compile("__global__ void k() {}") == b"cubin-sm_90"
    assert archs == ["sm_90a", "sm_90"]
    assert comp.compile(_source()) == b"cubin-sm_90a" and comp.last_compiler == "disk"


def _nvcc_sm90a(source: str, tmp_path) -> str:
    return check_cuda(source, tmp_path, arch="sm_90a")


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("n", [64, 256])
@pytest.mark.parametrize("b_col", [False, True], ids=["b_row", "b_col"])
@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_nvcc_accepts_for_sm_90a(tmp_path, n, b_col, checked):
    src = wg_product.source("cuda", cube_dim=(256, 1, 1), checked=checked, n=n, k=32,
                            groups=2, b_rows_n=b_col, **NO_SWIZZLE)
    output = _nvcc_sm90a(src, tmp_path)
    assert_no_spills(output)


@cube(launch=True)
def bf16_product(a: Array[bf16], b: Array[bf16], out: Array[bf16]):
    a_s = SharedMemory(bf16, 64 * 16)
    b_s = SharedMemory(bf16, 16 * 128)
    acc = cmma.WarpgroupAccumulator(128, f32)
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, 64 * 16, 128):
        a_s[cmma.wg_offset(i // 16, i % 16, 64)] = a[i]
    for i in range(UNIT_POS, 16 * 128, 128):
        b_s[cmma.wg_offset(i // 128, i % 128, 16)] = b[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, b_s, 0, 16, ROW)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, 0, acc, 128, ROW)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
def test_bf16_compiles_for_sm_90a(tmp_path):
    src = bf16_product.source("cuda", cube_dim=(128, 1, 1))
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in src
    assert "__float2bfloat16_rn(" in src
    _nvcc_sm90a(src, tmp_path)


def test_bf16_is_not_on_the_cpu():
    with pytest.raises(CompileError, match="the cpu runtime has no bf16"):
        bf16_product.ir(cube_dim=(128, 1, 1), target="cpu")


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
@pytest.mark.parametrize("lines", [False, True], ids=["elements", "lines"])
@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_store_into_shared_memory_compiles_for_sm_90a(tmp_path, lines, checked):
    src = wg_through_shared.source("cuda", cube_dim=(128, 1, 1), checked=checked,
                                   lines=lines)
    assert "__floats2half2_rn(" in src
    output = _nvcc_sm90a(src, tmp_path)
    assert_no_spills(output)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="no nvcc")
def test_store_into_a_line_tensor_compiles_for_sm_90a(tmp_path):
    src = wg_into_lines.source("cuda", cube_dim=(128, 1, 1), checked=True,
                               line_sizes={"out": 8})
    assert "*reinterpret_cast<uint4*>(" in src  # the line store: out stays a Line tensor
    output = _nvcc_sm90a(src, tmp_path)
    assert_no_spills(output)


@cube(launch=True)
def to_bf16(x: Array[f32], y: Array[bf16]):
    y[cubepy.ABSOLUTE_POS] = bf16(x[cubepy.ABSOLUTE_POS])


@pytest.mark.cuda
@pytest.mark.skipif(not _hopper(), reason="no sm_90 CUDA device")
def test_bf16_product_on_hopper():
    c = cubepy.client("cuda")
    a = RNG.integers(-4, 5, (64, 16)).astype(np.float32)  # small integers: exact in bf16
    b = RNG.integers(-4, 5, (16, 128)).astype(np.float32)
    ta, tb, out = c.zeros(64 * 16, bf16), c.zeros(16 * 128, bf16), c.zeros(64 * 128, bf16)
    to_bf16.launch(c, (8, 1, 1), (128, 1, 1), c.tensor(a.ravel()), ta)
    to_bf16.launch(c, (16, 1, 1), (128, 1, 1), c.tensor(b.ravel()), tb)
    bf16_product.launch(c, (1, 1, 1), (128, 1, 1), ta, tb, out)
    np.testing.assert_array_equal(out.numpy().astype(np.float32).reshape(64, 128), a @ b)


# -- compile errors ----------------------------------------------------------------------------

@cube(launch=True)
def one_multiply(a: Array[f16], out: Array[f32]):
    a_s = SharedMemory(f16, 64 * 16)
    acc = cmma.WarpgroupAccumulator(16, f32)  # E:target
    cmma.fill(acc, 0.0)
    for i in range(UNIT_POS, 1024, 128):
        a_s[i] = a[i]
    sync_cube()
    cmma.wg_fence()
    cmma.wg_mma(acc, a_s, 0, 64, a_s, 0, 16, ROW)
    cmma.wg_commit()
    cmma.wg_wait(0)
    cmma.store(out, 0, acc, 16, ROW)


@pytest.mark.parametrize("target,title", [("wgsl", "WGSL"), ("metal", "Metal")])
def test_wgsl_and_metal_have_no_warpgroup_multiply(target, title):
    with pytest.raises(CompileError) as info:
        one_multiply.source(target, cube_dim=(128, 1, 1))
    _error_at(info.value, "target", f"{title} has no warpgroup matrix multiply",
              "CUDA on sm_90")


def test_cube_must_hold_whole_warpgroups():
    with pytest.raises(CompileError) as info:
        one_multiply.source("cuda", cube_dim=(64, 1, 1))
    _error_at(info.value, "target", "whole warpgroups of 128 units", "64")


def _build_error(fn) -> CompileError:
    with pytest.raises(CompileError) as info:
        cube(launch=True)(fn).source("cuda", cube_dim=(128, 1, 1))
    return info.value


def test_accumulator_width_and_type():
    def k(out: Array[f32]):
        acc = cmma.WarpgroupAccumulator(100, f32)  # E:width
    _error_at(_build_error(k), "width", "multiple of 8 from 8 to 256")

    def k2(out: Array[f32]):
        acc = cmma.WarpgroupAccumulator(64, f16)  # E:elem
    _error_at(_build_error(k2), "elem", "holds f32, not f16")


def test_operands_come_from_16_or_8_bit_shared_memory():
    def k(a: Array[f16], out: Array[f32]):
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.wg_mma(acc, a, 0, 64, a, 0, 16, ROW)  # E:global
    _error_at(_build_error(k), "global", "reads A from shared memory")

    def k2(out: Array[f32]):
        s = SharedMemory(f32, 64 * 16)
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.wg_mma(acc, s, 0, 64, s, 0, 16, ROW)  # E:f32
    _error_at(_build_error(k2), "f32",
              "holds f32; the warpgroup multiply takes f16, bf16, e4m3 or e5m2")


def test_tile_rows_are_compile_time_and_enough():
    def k(out: Array[f32], r: u32):
        s = SharedMemory(f16, 64 * 16)
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.wg_mma(acc, s, 0, r, s, 0, 16, ROW)  # E:rows
    _error_at(_build_error(k), "rows", "compile-time positive multiple of 8")

    def k2(out: Array[f32]):
        s = SharedMemory(f16, 64 * 16)
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.wg_mma(acc, s, 0, 32, s, 0, 16, ROW)  # E:few
    _error_at(_build_error(k2), "few", "A's tile has 32 rows, fewer than the 64")


def test_wait_takes_a_compile_time_count():
    def k(out: Array[f32], r: u32):
        cmma.wg_wait(r)  # E:wait
    _error_at(_build_error(k), "wait", "compile-time int from 0 to 7")


def test_plane_accumulator_is_not_a_warpgroup_one():
    def k(out: Array[f32]):
        s = SharedMemory(f16, 64 * 16)
        acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
        cmma.wg_mma(acc, s, 0, 64, s, 0, 16, ROW)  # E:plane
    _error_at(_build_error(k), "plane", "takes a warpgroup accumulator fragment here")


def test_warpgroup_store_is_row_major():
    def k(out: Array[f32]):
        acc = cmma.WarpgroupAccumulator(64, f32)
        cmma.store(out, 0, acc, 64, COL)  # E:col
    _error_at(_build_error(k), "col", "stored row major")
