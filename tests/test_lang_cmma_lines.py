"""cmma loads and stores on Line buffers: offsets and strides count elements, so a tile
staged in shared memory as 16-byte lines is loaded from the same array."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, Line, SharedMemory, Tensor, cmma, cube, f16, f32, sync_cube,
                    sync_plane, u32)
from source_check import NVCC, check_cuda


@cube(launch=True)
def staged_product(a: Tensor[Line[f16]], b: Tensor[Line[f16]], out: Tensor[Line[f32]]):
    """out = a @ b for 16 x 16 f16 tiles (lines of 8), staged through shared lines."""
    a_s = SharedMemory(Line[f16], 32, 8)
    b_s = SharedMemory(Line[f16], 32, 8)
    o_s = SharedMemory(Line[f32], 64, 4)
    a_s[UNIT_POS] = a[UNIT_POS]  # 32 units: one line of each tile each
    b_s[UNIT_POS] = b[UNIT_POS]
    sync_cube()
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.0)
    cmma.load(fa, a_s, 0, 16)
    cmma.load(fb, b_s, 0, 16)
    cmma.execute(fa, fb, acc, acc)
    cmma.store(o_s, 0, acc, 16, cmma.ROW_MAJOR)
    sync_plane()
    out[UNIT_POS] = o_s[UNIT_POS]
    out[UNIT_POS + 32] = o_s[UNIT_POS + 32]


def _spec():
    return dict(cube_dim=(32, 1, 1), checked=False,
                line_sizes={"a": 8, "b": 8, "out": 4})


def test_staged_lines_product_on_cpu():
    rng = np.random.default_rng(1)
    a_h = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    b_h = rng.uniform(-1, 1, (16, 16)).astype(np.float16)
    client = cubepy.client("cpu")
    out = client.zeros((16, 16), f32).with_line_size(4)
    staged_product.launch_unchecked(client, (1, 1, 1), (32, 1, 1),
                                    client.tensor(a_h).with_line_size(8),
                                    client.tensor(b_h).with_line_size(8), out)
    want = a_h.astype(np.float32) @ b_h.astype(np.float32)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_cuda_declares_cmma_shared_arrays_aligned_for_wmma(tmp_path):
    source = staged_product.source("cuda", **_spec())
    for name in ("a_s", "b_s", "o_s"):
        decl = next(line for line in source.splitlines() if f" {name}[" in line
                    and "__shared__" in line)
        assert "__align__(32)" in decl, decl
    assert "uint4" in source  # the staging stores are 16-byte accesses
    check_cuda(source, tmp_path)


@cube(launch=True)
def global_tiles(a: Tensor[f16], out: Tensor[f32], at: u32):
    fa = cmma.Matrix(cmma.A, 16, 16, 16, f16, cmma.ROW_MAJOR)
    fb = cmma.Matrix(cmma.B, 16, 16, 16, f16, cmma.ROW_MAJOR)
    acc = cmma.Matrix(cmma.ACCUMULATOR, 16, 16, 16, f32)
    cmma.fill(acc, 0.0)
    cmma.load(fa, a, at, 16)
    cmma.load(fb, a, at, 16)
    cmma.execute(fa, fb, acc, acc)
    cmma.store(out, 0, acc, 16, cmma.ROW_MAJOR)


def test_cached_facts_keep_what_cmma_launch_checks_read():
    """A kernel read back from the disk cache keeps no body: the buffers whose tiles
    wmma accesses travel in its facts (the staging bytes in its record's shared_bytes)."""
    import json

    from cubepy.kernel import tiled_global_buffers
    from cubepy.spec_cache import KernelFacts, _dec_artefact, _enc_artefact, _enc_kernel

    spec = global_tiles._specialization((64, 1, 1), {})
    compiled = global_tiles._compile(spec, "cuda", True)
    facts = KernelFacts(json.loads(json.dumps(_enc_kernel(compiled.kernel))))
    assert tiled_global_buffers(facts) == tiled_global_buffers(compiled.kernel) == {"a", "out"}
    record = _dec_artefact(json.loads(json.dumps(_enc_artefact(compiled.artefact))),
                           compiled.abi)
    assert record.shared_bytes == compiled.artefact.shared_bytes == 2 * 16 * 16 * 4  # 2 planes
