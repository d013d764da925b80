"""Shared memory over CUDA's static 48 KB: the arrays are carved from one `extern
__shared__` block at 32-byte aligned offsets (the launch gives its size and the function
opts in to it), while kernels within 48 KB keep their static `__shared__` arrays."""
from __future__ import annotations

import re

import numpy as np
import pytest

import cubepy
from cubepy import (UNIT_POS, Array, Comptime, CubeCount, CubeDim, DynamicSharedMemory,
                    LaunchError, Line, SharedMemory, Tensor, cmma, cube, f16, f32,
                    sync_cube, sync_plane)
from cubepy.codegen.cuda import STATIC_SHARED_LIMIT

from conftest import _runtime_present
from source_check import NVCC, check_cuda

DIM = 256
KB40 = 40 * 1024 // 4  # f32 elements in 40 KB

BIG_RUNTIMES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=[
        pytest.mark.cuda,
        pytest.mark.skipif(not _runtime_present("cuda"), reason="no CUDA device")]),
]


@cube(launch=True)
def two_arrays(x: Array[f32], n: Comptime[int]):
    """Both arrays of n floats hold x; each unit writes the sum of its two copies."""
    a = SharedMemory(f32, n)
    b = SharedMemory(f32, n)
    for i in range(UNIT_POS, n, DIM):
        a[i] = x[i]
        b[i] = x[i]
    sync_cube()
    for i in range(UNIT_POS, n, DIM):
        x[i] = a[i] + b[n - 1 - i]


@cube(launch=True)
def reversed_copy(x: Array[f32], out: Array[f32], n: Comptime[int]):
    """out = x reversed, through one shared array of n floats."""
    s = SharedMemory(f32, n)
    for i in range(UNIT_POS, n, DIM):
        s[i] = x[i]
    sync_cube()
    for i in range(UNIT_POS, n, DIM):
        out[i] = s[n - 1 - i]


@cube(launch=True)
def dynamic_and_static(x: Array[f32], out: Array[f32]):
    """out = x reversed through a DynamicSharedMemory, plus a static array's first value."""
    s = DynamicSharedMemory(f32)
    t = SharedMemory(f32, 1024)
    n = len(s)
    for i in range(UNIT_POS, n, DIM):
        s[i] = x[i]
    t[UNIT_POS] = x[0]
    sync_cube()
    for i in range(UNIT_POS, n, DIM):
        out[i] = s[n - 1 - i] + t[0]


@cube(launch=True)
def staged_after_pad(a: Tensor[Line[f16]], b: Tensor[Line[f16]], out: Tensor[Line[f32]],
                     pad: Comptime[int]):
    """a @ b for 16 x 16 tiles staged in shared lines that follow an odd-sized array."""
    p = SharedMemory(f16, pad)
    a_s = SharedMemory(Line[f16], 32, 8)
    b_s = SharedMemory(Line[f16], 32, 8)
    o_s = SharedMemory(Line[f32], 64, 4)
    p[UNIT_POS] = f16(1.0)
    a_s[UNIT_POS] = a[UNIT_POS]
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


def _compiled(kernel, **spec):
    dim = spec.pop("cube_dim", CubeDim(DIM))
    return kernel._compile(kernel._specialization(dim, spec), "cuda", True).artefact


_CARVED = re.compile(r"(\S+)\* const (\w+) = reinterpret_cast<\S+\*>\(cube_smem \+ (\d+)\);")


def _carved(source: str) -> dict[str, int]:
    """Carved array name -> its byte offset in the extern block."""
    return {m.group(2): int(m.group(3)) for m in _CARVED.finditer(source)}


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_two_40kb_arrays_are_carved_from_extern_shared(tmp_path):
    artefact = _compiled(two_arrays, n=KB40)
    source = artefact.source
    assert "extern __shared__ __align__(128) unsigned char cube_smem[];" in source
    assert "__shared__ float" not in source  # no static array remains
    offsets = _carved(source)
    assert offsets == {"a": 0, "b": KB40 * 4}, offsets
    assert artefact.dynamic_shared_bytes == 2 * KB40 * 4
    check_cuda(source, tmp_path)


def test_a_40kb_kernel_keeps_its_static_array():
    artefact = _compiled(reversed_copy, n=KB40)
    assert "    __shared__ float s[10240];" in artefact.source.splitlines()
    assert "extern __shared__" not in artefact.source and "cube_smem" not in artefact.source
    assert artefact.dynamic_shared_bytes == 0


def test_the_static_limit_is_inclusive():
    at = _compiled(reversed_copy, n=STATIC_SHARED_LIMIT // 4)
    over = _compiled(reversed_copy, n=STATIC_SHARED_LIMIT // 4 + 1)
    assert "cube_smem" not in at.source and at.dynamic_shared_bytes == 0
    assert "cube_smem" in over.source and over.dynamic_shared_bytes == STATIC_SHARED_LIMIT + 4


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_carved_cmma_tiles_keep_32_byte_alignment(tmp_path):
    pad = 25001  # f16 elements: 50002 bytes, so the next array's start is rounded up
    source = _compiled(staged_after_pad, cube_dim=CubeDim(32), pad=pad,
                       line_sizes={"a": 8, "b": 8, "out": 4}).source
    offsets = _carved(source)
    assert offsets["p"] == 0 and offsets["a_s"] == 50016, offsets
    assert all(offset % 32 == 0 for offset in offsets.values()), offsets
    assert offsets["b_s"] == offsets["a_s"] + 32 * 16 and offsets["o_s"] == offsets["b_s"] + 512
    check_cuda(source, tmp_path)


def test_carved_source_round_trips_through_the_spec_cache():
    from cubepy.spec_cache import _dec_artefact, _enc_artefact
    compiled = two_arrays._compile(two_arrays._specialization(CubeDim(DIM), {"n": KB40}),
                                   "cuda", True)
    back = _dec_artefact(_enc_artefact(compiled.artefact), compiled.abi)
    assert back.dynamic_shared_bytes == compiled.artefact.dynamic_shared_bytes > 0
    assert back.source == compiled.artefact.source


@pytest.mark.parametrize("name", BIG_RUNTIMES)
def test_100kb_of_shared_memory_reverses(name):
    client = cubepy.client(name)
    n = 100 * 1024 // 4
    assert client.limits.max_shared_bytes >= 100 * 1024
    x = np.arange(n, dtype=np.float32)
    out = client.zeros((n,), f32)
    reversed_copy.launch(client, CubeCount(1), CubeDim(DIM), client.tensor(x), out, n)
    np.testing.assert_array_equal(out.numpy(), x[::-1])


@pytest.mark.parametrize("name", BIG_RUNTIMES)
def test_two_40kb_arrays_run(name):
    client = cubepy.client(name)
    x = np.arange(KB40, dtype=np.float32)
    t = client.tensor(x)
    two_arrays.launch(client, CubeCount(1), CubeDim(DIM), t, KB40)
    np.testing.assert_array_equal(t.numpy(), x + x[::-1])


@pytest.mark.parametrize("name", BIG_RUNTIMES)
def test_dynamic_shared_memory_of_80000_bytes_with_a_static_array(name):
    client = cubepy.client(name)
    n = 80_000 // 4
    x = np.arange(n, dtype=np.float32) + 1.0
    out = client.zeros((n,), f32)
    dynamic_and_static.launch(client, CubeCount(1), CubeDim(DIM), client.tensor(x), out,
                              shared_mem=80_000)
    np.testing.assert_array_equal(out.numpy(), x[::-1] + x[0])
    artefact = _compiled(dynamic_and_static, shared_mem=80_000)
    assert artefact.dynamic_shared_bytes == 80_000 + 1024 * 4
    assert _carved(artefact.source) == {"s": 0, "t": 80_000}


@pytest.mark.parametrize("name", BIG_RUNTIMES)
def test_over_the_opt_in_maximum_is_a_launch_error(name):
    client = cubepy.client(name)
    limit = client.limits.max_shared_bytes
    n = limit // 4 + 1
    x = client.zeros((n,), f32)
    with pytest.raises(LaunchError, match="max_shared_bytes") as err:
        reversed_copy.launch(client, CubeCount(1), CubeDim(DIM), x, client.zeros((n,), f32), n)
    assert str(limit) in str(err.value) and f"{n * 4} bytes" in str(err.value)
    with pytest.raises(LaunchError, match="max_shared_bytes") as err:
        dynamic_and_static.launch(client, CubeCount(1), CubeDim(DIM), x, x,
                                  shared_mem=limit)
    assert err.value.param == "shared_mem"


def test_cuda_runtime_opts_in_and_launches_with_the_dynamic_bytes(monkeypatch):
    """With PyCUDA's calls recorded: the loaded function is allowed the carved block's
    bytes once, and every launch gives them."""
    from cubepy.runtime import cuda as cuda_mod
    calls = []

    class Function:
        def set_attribute(self, attr, value):
            calls.append(("set_attribute", attr, value))

        def _launch_kernel(self, grid, block, params, shared, stream):
            calls.append(("launch", shared))

    class Module:
        def get_function(self, name):
            return Function()

    class Compiler:
        last_compiler = "fake"

        def compile(self, source, fast_math):
            return b"cubin"

    attrs = type("function_attribute", (), {"MAX_DYNAMIC_SHARED_SIZE_BYTES": "max-dyn"})
    Driver = type("Driver", (), {"Error": RuntimeError, "function_attribute": attrs,
                                 "module_from_buffer": staticmethod(lambda cubin: Module())})
    client = object.__new__(cuda_mod.CudaClient)
    client._cuda, client._ctx, client.device = Driver, object(), "fake"
    client._modules, client._ahead, client.compiler = {}, {}, Compiler()
    client._stream = client._own_stream = object()
    client._raw_stream, client._foreign_streams, client.lost = None, set(), None
    monkeypatch.setattr(cuda_mod._tls, "ctx", client._ctx, raising=False)

    compiled = two_arrays._compile(two_arrays._specialization(CubeDim(DIM), {"n": KB40}),
                                   "cuda", True)
    nbytes = compiled.artefact.dynamic_shared_bytes
    exe = client._load_locked(compiled.artefact.source, compiled.artefact.entry,
                              compiled.abi, True, nbytes)
    assert calls == [("set_attribute", "max-dyn", nbytes)] and exe.shared == nbytes
    calls.clear()
    client.dispatch(exe, (1, 1, 1), (DIM, 1, 1), [type("B", (), {"handle": type(
        "H", (), {"ptr": 0})()})()], b"\0" * compiled.abi.size)
    assert calls == [("launch", nbytes)]
    calls.clear()
    small = reversed_copy._compile(reversed_copy._specialization(CubeDim(DIM), {"n": 64}),
                                   "cuda", True)
    exe = client._load_locked(small.artefact.source, small.artefact.entry, small.abi, True,
                              small.artefact.dynamic_shared_bytes)
    assert calls == [] and exe.shared == 0  # static arrays: no opt-in, no dynamic bytes
