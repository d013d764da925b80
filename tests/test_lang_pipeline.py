"""Asynchronous copies (cubepy.pipeline): memcpy_async into shared memory, commit, wait.

Runtime tests run on the cpu runtime and on wgpu (both copy at once) and, marked `cuda`,
on a GPU (cp.async). Source tests compile every target's code with its real compiler
(validate_sources) and check the CUDA text for cp.async. CompileError tests mark the
offending line with `# E:<tag>`.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import cubepy
from cubepy import (CUBE_POS, UNIT_POS, Comptime, CompileError, CubeCount, CubeDim, Float,
                    Line, LocalArray, SharedMemory, Tensor, cube, f16, f32, f64, pipeline,
                    sync_cube, u32, unroll)
from error_markers import located_error_checker, marker_line
from source_check import validate_sources

UNITS = 64


_error_at = located_error_checker(__file__)


# ----------------------------------------------------------------------------- kernels

@cube(launch=True)
def reversed_lines(a: Tensor[Line[Float]], out: Tensor[Line[Float]]):
    """Each unit copies one line of its cube's slice; after the wait and the barrier
    every unit reads another unit's line."""
    tile = SharedMemory(Line[Float], 64, a.line_size())
    pipeline.memcpy_async(tile, UNIT_POS, a, CUBE_POS * 64 + UNIT_POS)
    pipeline.commit()
    pipeline.wait(0)
    sync_cube()
    out[CUBE_POS * 64 + UNIT_POS] = tile[63 - UNIT_POS]


@cube(launch=True)
def staged_sum(a: Tensor[Line[Float]], out: Tensor[Line[Float]], steps: Comptime[int],
               stages: Comptime[int]):
    """out[unit] = sum over the steps of a[step][63 - unit], the steps' slices brought in
    by a `stages`-deep pipeline of copies (the multistage loop of a tiled matmul)."""
    tiles = SharedMemory(Line[Float], stages * 64, a.line_size())
    for s in unroll(range(stages - 1)):
        pipeline.memcpy_async(tiles, s * 64 + UNIT_POS, a, s * 64 + UNIT_POS)
        pipeline.commit()
    acc = a[0] * Float(0.0)
    for step in range(steps):
        pipeline.wait(stages - 2)  # this step's slice has landed (for this unit)
        sync_cube()  # ... and for every unit; the buffer read last step is free
        nxt = step + stages - 1
        if nxt < steps:
            pipeline.memcpy_async(tiles, nxt % stages * 64 + UNIT_POS, a, nxt * 64 + UNIT_POS)
        pipeline.commit()  # an empty group at the end keeps the count
        acc += tiles[step % stages * 64 + 63 - UNIT_POS]
    out[UNIT_POS] = acc


@cube(launch=True)
def scalar_copy(a: Tensor[Float], out: Tensor[Float]):
    tile = SharedMemory(Float, 64)
    pipeline.memcpy_async(tile, UNIT_POS, a, CUBE_POS * 64 + UNIT_POS)
    pipeline.commit()
    pipeline.wait(0)
    sync_cube()
    out[CUBE_POS * 64 + UNIT_POS] = tile[63 - UNIT_POS]


def _run(client, kernel, a_h: np.ndarray, line: int, cubes: int = 1, checked=True, **ct):
    a = client.tensor(a_h).with_line_size(line)
    dtype = {np.float16: f16, np.float32: f32, np.float64: f64}[a_h.dtype.type]
    out = client.zeros(a_h.shape, dtype).with_line_size(line)
    launch = kernel.launch if checked else kernel.launch_unchecked
    launch(client, CubeCount(cubes), CubeDim(UNITS), a, out, *ct.values())
    return out.numpy()


# ----------------------------------------------------------------------------- runs

@pytest.mark.parametrize("dtype,line", [(np.float16, 8), (np.float16, 4), (np.float16, 2),
                                        (np.float32, 4), (np.float32, 2), (np.float64, 2)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_units_read_each_others_copies(runtime_client, dtype, line):
    if dtype is np.float64 and runtime_client.runtime == "wgpu":
        pytest.skip("WGSL has no f64")
    rng = np.random.default_rng(line)
    a_h = rng.standard_normal((2 * 64 * line,)).astype(dtype)
    got = _run(runtime_client, reversed_lines, a_h, line, cubes=2)
    want = a_h.reshape(2, 64, line)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(got, want)


def test_scalar_copies(runtime_client):
    a_h = np.arange(128, dtype=np.float32)
    got = _run(runtime_client, scalar_copy, a_h, 1, cubes=2)
    np.testing.assert_array_equal(got, a_h.reshape(2, 64)[:, ::-1].reshape(-1))


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_multistage_pipeline(runtime_client, stages):
    steps = 5
    a_h = np.random.default_rng(stages).integers(-8, 8, (steps * 64 * 4,)).astype(np.float32)
    a = runtime_client.tensor(a_h).with_line_size(4)
    out = runtime_client.zeros((64 * 4,), f32).with_line_size(4)
    staged_sum.launch(runtime_client, CubeCount(1), CubeDim(UNITS), a, out, steps, stages)
    want = a_h.reshape(steps, 64, 4)[:, ::-1].sum(axis=0).reshape(-1)
    np.testing.assert_array_equal(out.numpy(), want)


def test_checked_copy_past_the_end_reads_zero(runtime_client):
    """A checked launch over a source shorter than the cube's slice: the lines past its
    end arrive as zeros, as a checked read gives."""
    a_h = np.arange(1, 62 * 4 + 1, dtype=np.float32)  # 62 lines of 4
    a = runtime_client.tensor(a_h).with_line_size(4)
    out = runtime_client.zeros((64 * 4,), f32).with_line_size(4)
    reversed_lines.launch(runtime_client, CubeCount(1), CubeDim(UNITS), a, out)
    padded = np.zeros(64 * 4, np.float32)
    padded[:a_h.size] = a_h
    np.testing.assert_array_equal(out.numpy(), padded.reshape(64, 4)[::-1].reshape(-1))


@cube(launch=True)
def transposed_view(a: Tensor[f32], out: Tensor[f32]):
    tile = SharedMemory(f32, (8, 8))
    v = a[8:72]
    pipeline.memcpy_async(tile, (UNIT_POS // 8, UNIT_POS % 8), v, UNIT_POS)
    pipeline.commit()
    pipeline.wait(0)
    sync_cube()
    out[UNIT_POS] = tile[UNIT_POS % 8, UNIT_POS // 8]


def test_indices_into_views_and_2d_shared_memory(runtime_client):
    a_h = np.arange(80, dtype=np.float32)
    out = runtime_client.zeros((64,), f32)
    transposed_view.launch(runtime_client, CubeCount(1), CubeDim(UNITS),
                           runtime_client.tensor(a_h), out)
    np.testing.assert_array_equal(out.numpy(), a_h[8:72].reshape(8, 8).T.reshape(-1))


# ----------------------------------------------------------------------------- sources

@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
@pytest.mark.parametrize("dtype,line", [(f16, 8), (f32, 4), (f32, 2), (f16, 2)],
                         ids=lambda v: getattr(v, "name", str(v)))
def test_every_compiler_accepts_the_copies(tmp_path, checked, dtype, line):
    validate_sources(staged_sum, tmp_path, cube_dim=(64, 1, 1), checked=checked,
                     Float=dtype, steps=4, stages=3, line_sizes={"a": line, "out": line})


def test_every_compiler_accepts_scalar_copies(tmp_path):
    validate_sources(scalar_copy, tmp_path, cube_dim=(64, 1, 1), Float=f32)


def _cuda(kernel, checked: bool, misaligned=(), **spec) -> str:
    base = kernel._specialization(CubeDim(UNITS), spec)
    return kernel._compile(dataclasses.replace(base, misaligned=tuple(misaligned)), "cuda",
                           checked).source


def test_cuda_issues_cp_async():
    src = _cuda(staged_sum, False, Float=f16, steps=4, stages=3,
                line_sizes={"a": 8, "out": 8})
    assert "cp.async.cg.shared.global [%0], [%1], 16;" in src
    assert "__cvta_generic_to_shared(&tiles[" in src
    assert 'asm volatile("cp.async.commit_group;' in src
    assert 'asm volatile("cp.async.wait_group 1;' in src
    assert "#if __CUDA_ARCH__ >= 800" in src and "#else" in src  # older GPUs copy plainly
    assert "__shared__ __align__(16) __half tiles[1536];" in src


def test_cuda_small_copies_use_ca_and_checked_ones_pass_the_bytes_inside():
    src = _cuda(reversed_lines, True, Float=f32, line_sizes={"a": 2, "out": 2})
    assert "cp.async.ca.shared.global [%0], [%1], 8, %2;" in src
    assert "info.a_buffer_len - cube_copy_start" in src and "* 4u : 0u;" in src
    src = _cuda(scalar_copy, False, Float=f32)
    assert "cp.async.ca.shared.global [%0], [%1], 4;" in src


def test_misaligned_source_is_copied_plainly():
    src = _cuda(reversed_lines, False, misaligned=("a",), Float=f32,
                line_sizes={"a": 4, "out": 4})
    assert "cp.async.ca" not in src and "cp.async.cg" not in src
    assert "tile[tile_item * 4u + 3u] = a[a_item * 4u + 3u];" in src
    assert "cp.async.wait_group 0;" in src  # commit and wait stay: nothing pending


def test_other_targets_copy_plainly():
    wgsl = reversed_lines.source("wgsl", cube_dim=CubeDim(64), Float=f32,
                                 line_sizes={"a": 4, "out": 4})
    metal = reversed_lines.source("metal", cube_dim=CubeDim(64), Float=f32,
                                  line_sizes={"a": 4, "out": 4})
    for src in (wgsl, metal):
        assert "cp.async" not in src and "tile_item" in src


def test_ir_text_names_the_copies():
    text = staged_sum.ir(cube_dim=(64, 1, 1), Float=f32, steps=4, stages=3,
                         line_sizes={"a": 4, "out": 4})
    assert "async_copy @tiles[" in text and "] x 4" in text
    assert "async_commit" in text and "async_wait 1" in text


# ----------------------------------------------------------------------------- errors

def _compile_error(kernel, **spec) -> CompileError:
    with pytest.raises(CompileError) as info:
        kernel.source("cuda", cube_dim=CubeDim(64), **spec)
    return info.value


def test_destination_must_be_shared_memory():
    @cube(launch=True)
    def k(a: Tensor[f32], b: Tensor[f32]):
        pipeline.memcpy_async(b, UNIT_POS, a, UNIT_POS)  # E:dst-tensor

    _error_at(_compile_error(k), "dst-tensor", "SharedMemory", "a Tensor ('b')")

    @cube(launch=True)
    def k2(a: Tensor[f32]):
        loc = LocalArray(f32, 4)
        pipeline.memcpy_async(loc, 0, a, UNIT_POS)  # E:dst-local

    _error_at(_compile_error(k2), "dst-local", "a LocalArray")


def test_source_must_be_global_memory():
    @cube(launch=True)
    def k(a: Tensor[f32]):
        s = SharedMemory(f32, 64)
        t = SharedMemory(f32, 64)
        pipeline.memcpy_async(s, UNIT_POS, t, UNIT_POS)  # E:src-shared
        a[UNIT_POS] = s[UNIT_POS]

    _error_at(_compile_error(k), "src-shared", "Tensor or Array parameter", "shared memory")


def test_types_and_line_sizes_must_match():
    @cube(launch=True)
    def k(a: Tensor[f32]):
        s = SharedMemory(u32, 64)
        pipeline.memcpy_async(s, UNIT_POS, a, UNIT_POS)  # E:types

    _error_at(_compile_error(k), "types", "holds f32", "holds u32")

    @cube(launch=True)
    def k2(a: Tensor[Line[f32]]):
        s = SharedMemory(Line[f32], 64, 2)
        pipeline.memcpy_async(s, UNIT_POS, a, UNIT_POS)  # E:lines

    _error_at(_compile_error(k2, line_sizes={"a": 4}), "lines", "lines of 4", "of 2",
              "line sizes must match")


def test_an_item_is_4_8_or_16_bytes():
    @cube(launch=True)
    def k(a: Tensor[f16]):
        s = SharedMemory(f16, 64)
        pipeline.memcpy_async(s, UNIT_POS, a, UNIT_POS)  # E:two-bytes

    _error_at(_compile_error(k), "two-bytes", "4, 8 or 16 bytes", "2 bytes")

    @cube(launch=True)
    def k2(a: Tensor[Line[f32]]):
        s = SharedMemory(Line[f32], 64, 8)
        pipeline.memcpy_async(s, UNIT_POS, a, UNIT_POS)  # E:32-bytes

    _error_at(_compile_error(k2, line_sizes={"a": 8}), "32-bytes", "32 bytes")


def test_wait_count_is_a_compile_time_int():
    @cube(launch=True)
    def k(a: Tensor[f32], n: u32):
        pipeline.wait(n)  # E:runtime-wait

    _error_at(_compile_error(k), "runtime-wait", "known at compile time")

    @cube(launch=True)
    def k2(a: Tensor[f32]):
        pipeline.wait(-1)  # E:negative-wait

    _error_at(_compile_error(k2), "negative-wait", "int >= 0")


def test_calls_take_their_argument_counts():
    @cube(launch=True)
    def k(a: Tensor[f32]):
        pipeline.commit(1)  # E:commit-args

    err = _compile_error(k)
    assert err.lineno == marker_line(__file__, "commit-args")


def test_names_outside_kernels():
    with pytest.raises(TypeError, match="inside a @cube function"):
        pipeline.commit()
    assert set(pipeline.__all__) == {"memcpy_async", "commit", "wait"}


@pytest.mark.nvcc
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_plain_copy_before_sm80_compiles(tmp_path, checked):
    """The `__CUDA_ARCH__ < 800` branch (no cp.async) is valid CUDA too."""
    import shutil
    import subprocess
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    path = tmp_path / "k.cu"
    path.write_text(_cuda(staged_sum, checked, Float=f16, steps=4, stages=3,
                          line_sizes={"a": 8, "out": 8}))
    r = subprocess.run([nvcc, "-arch=sm_75", "-cubin", "-o", str(tmp_path / "k.cubin"),
                        str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "warning" not in (r.stdout + r.stderr).lower(), r.stderr
