"""WGSL's storageBarrier() goes only at the sync_cube() calls that order storage-buffer
accesses of different units (codegen/wgsl_barriers.py): naga gives it device scope, so
a needless one costs a device-wide fence per barrier. The alias variant, where a
read-only parameter shares a written buffer, gets the ones its sharing needs."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, UNIT_POS, Array, SharedMemory, cube, f32, sync_cube, u32

DIM = (64, 1, 1)


@cube(launch=True)
def reduce_then_write(x: Array[f32], out: Array[f32]):
    """Reads before the barrier, writes only after it: no storage barrier."""
    tile = SharedMemory(f32, 64)
    tile[UNIT_POS] = x[ABSOLUTE_POS]
    sync_cube()
    out[ABSOLUTE_POS] = tile[63 - UNIT_POS]


@cube(launch=True)
def exchange_through_storage(out: Array[f32], y: Array[f32]):
    """Each unit writes out, then reads a neighbour's element of it."""
    out[ABSOLUTE_POS] = f32(ABSOLUTE_POS)
    sync_cube()
    y[ABSOLUTE_POS] = out[ABSOLUTE_POS - UNIT_POS + (UNIT_POS + 1) % 64]


@cube(launch=True)
def write_then_write(out: Array[f32], y: Array[f32]):
    """Writes before the barrier and another (possibly the same) buffer after it."""
    out[ABSOLUTE_POS] = 1.0
    sync_cube()
    y[ABSOLUTE_POS] = 2.0


@cube(launch=True)
def write_in_loop(out: Array[f32], steps: u32):
    """A write after the barrier in a loop precedes the barrier's next iteration."""
    tile = SharedMemory(f32, 64)
    for s in range(steps):
        tile[UNIT_POS] = f32(s)
        sync_cube()
        out[ABSOLUTE_POS] = tile[63 - UNIT_POS]


def _barriers(kernel, **spec) -> tuple[int, int]:
    src = kernel.source("wgsl", cube_dim=DIM, **spec)
    return src.count("storageBarrier();"), src.count("workgroupBarrier();")


def test_reads_before_and_writes_after_need_no_storage_barrier():
    assert _barriers(reduce_then_write) == (0, 1)


@pytest.mark.parametrize("kernel", [exchange_through_storage, write_then_write,
                                    write_in_loop])
def test_storage_accesses_across_the_barrier_keep_it(kernel):
    assert _barriers(kernel) == (1, 1)


def test_the_benchmark_reductions_drop_it():
    """softmax's cube reductions order workgroup memory only (its reads of x come
    before, its writes of out after)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.kernels.softmax import softmax_in_registers
    src = softmax_in_registers.source("wgsl", cube_dim=(256, 1, 1), checked=False,
                                      line_sizes={"x": 4, "out": 4}, per_unit=1)
    assert src.count("workgroupBarrier();") == 4 and "storageBarrier" not in src


def test_fence_cube_keeps_its_storage_barrier():
    @cube(launch=True)
    def fenced(out: Array[f32]):
        out[ABSOLUTE_POS] = 1.0
        cubepy.fence_cube()

    src = fenced.source("wgsl", cube_dim=DIM)
    assert "storageBarrier();\n    workgroupBarrier();" in src


from conftest import wgpu_client as _wgpu  # noqa: E402


@pytest.mark.wgpu
@pytest.mark.skipif(_wgpu() is None, reason="no wgpu adapter")
def test_units_read_each_others_storage_writes():
    client = _wgpu()
    out = client.zeros(256, f32)
    y = client.zeros(256, f32)
    exchange_through_storage.launch(client, 4, 64, out, y)
    i = np.arange(256)
    np.testing.assert_array_equal(y.numpy(), (i - i % 64 + (i % 64 + 1) % 64).astype(np.float32))


@pytest.mark.wgpu
@pytest.mark.skipif(_wgpu() is None, reason="no wgpu adapter")
def test_the_alias_variant_gets_the_barriers_sharing_needs():
    """reduce_then_write with x and out one buffer: out's writes after the barrier may
    meet x's reads before it in other units, so the variant has storageBarrier()."""
    client = _wgpu()
    data = np.arange(128, dtype=np.float32)
    buf = client.tensor(data)
    reduce_then_write.launch(client, 2, 64, buf, buf)
    expected = data.reshape(2, 64)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(buf.numpy(), expected)
    (exe,) = [entry.executables[client] for entry in reduce_then_write._compiled.values()
              if client in entry.executables]
    assert "storageBarrier" not in exe.source
    (variant,) = exe.alias_variants.values()
    assert variant.source.count("storageBarrier();") == 1
    assert "storageBarrier();\n    workgroupBarrier();" in variant.source
