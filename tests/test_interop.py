"""Arrays of other libraries as kernel arguments (zero copy) and cubepy tensors handed to
them: numpy and torch on the cpu runtime here; torch CUDA tensors and CuPy arrays on cuda
(marked `cuda`); wgpu refuses foreign memory with a clear LaunchError."""
from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, CubeCount, CubeDim, Float, LaunchError, Tensor, cube, f32
from cubepy import interop

CUDA = [pytest.mark.cuda]


@cube(launch=True)
def axpy(a: Float, x: Tensor[Float], y: Tensor[Float]):
    i = ABSOLUTE_POS
    if i < y.len():
        y[i] = a * x[i] + y[i]


@cube(launch=True)
def copy_2d(src: Tensor[Float], dst: Tensor[Float]):
    """dst[r, c] = src[r, c] through both tensors' strides."""
    i = ABSOLUTE_POS
    if i < dst.len():
        r = i // dst.shape(1)
        c = i % dst.shape(1)
        dst[r * dst.stride(0) + c * dst.stride(1)] = src[r * src.stride(0) + c * src.stride(1)]


def run_axpy(client, a, x, y):
    n = x.shape[0]
    axpy.launch(client, CubeCount(-(-n // 64)), CubeDim(64), a, x, y)


def run_copy(client, src, dst):
    n = dst.shape[0] * dst.shape[1]
    copy_2d.launch(client, CubeCount(-(-n // 64)), CubeDim(64), src, dst)


@pytest.fixture
def cpu():
    return cubepy.client("cpu")


# -- numpy on cpu ------------------------------------------------------------------------
def test_numpy_arrays_are_written_in_place(cpu):
    x = np.arange(100, dtype=np.float32)
    y = np.ones(100, np.float32)
    run_axpy(cpu, 2.0, x, y)
    np.testing.assert_array_equal(y, 2 * np.arange(100) + 1)


def test_numpy_strided_views_keep_their_strides(cpu):
    base = np.arange(48, dtype=np.float64).reshape(6, 8)
    src = base[1:5, ::2]  # offset and a column stride of 2
    dst_base = np.zeros((4, 8))
    dst = dst_base[:4, :4].T  # a transposed view: strides (1, 8)
    run_copy(cpu, src, dst)
    np.testing.assert_array_equal(dst_base[:4, :4].T, src)
    assert dst_base[4:].sum() == 0 and dst_base[:, 4:].sum() == 0  # nothing else written


def test_numpy_transposed_source(cpu):
    src = np.arange(12, dtype=np.float32).reshape(3, 4).T
    dst = np.zeros((4, 3), np.float32)
    run_copy(cpu, src, dst)
    np.testing.assert_array_equal(dst, src)


def test_negative_strides_are_refused_naming_the_parameter(cpu):
    x = np.arange(8, dtype=np.float32)[::-1]
    with pytest.raises(LaunchError, match=r"parameter 'x'.*negative strides") as info:
        run_axpy(cpu, 1.0, x, np.zeros(8, np.float32))
    assert info.value.param == "x"


def test_unknown_dtype_is_refused_naming_the_parameter(cpu):
    with pytest.raises(LaunchError, match=r"parameter 'y'.*int8") as info:
        run_axpy(cpu, 1.0, np.zeros(8, np.float32), np.zeros(8, np.int8))
    assert info.value.param == "y"


def test_dtypes_are_checked_like_cubepy_tensors(cpu):
    with pytest.raises(LaunchError, match="binds Float to f64"):
        run_axpy(cpu, 1.0, np.zeros(8, np.float32), np.zeros(8, np.float64))


def test_mixing_cubepy_tensors_and_numpy(cpu):
    x = cpu.tensor(np.arange(16, dtype=np.float32))
    y = np.full(16, 3, np.float32)
    run_axpy(cpu, 1.0, x, y)
    np.testing.assert_array_equal(y, np.arange(16) + 3)


def test_a_foreign_type_is_classified_once(cpu, monkeypatch):
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    run_axpy(cpu, 1.0, x, y)
    monkeypatch.setattr(interop, "_classify", lambda *a: pytest.fail("re-classified"))
    run_axpy(cpu, 1.0, x, y)


def test_cubepy_tensors_skip_the_import_step(cpu, monkeypatch):
    x, y = cpu.zeros(8, f32), cpu.zeros(8, f32)
    run_axpy(cpu, 1.0, x, y)
    monkeypatch.setattr(axpy, "_importer", lambda *a: pytest.fail("imported cubepy tensors"))
    run_axpy(cpu, 1.0, x, y)


@cube(launch=True)
def add_one(x: Tensor[Float]):
    i = ABSOLUTE_POS
    if i < x.len():
        x[i] = x[i] + 1.0


def test_the_importer_is_generated_at_the_first_foreign_launch(cpu):
    """Launches with cubepy tensors only never build it (an exec, 0.3-0.5 ms of every
    first launch when it was built with the launch's other generated functions)."""
    x = cpu.tensor(np.zeros(8, np.float32))
    add_one.launch(cpu, CubeCount(1), CubeDim(8), x)
    assert add_one._importer is None
    y = np.zeros(8, np.float32)
    add_one.launch(cpu, CubeCount(1), CubeDim(8), y)
    assert add_one._importer is not None
    np.testing.assert_array_equal(y, np.ones(8, np.float32))
    np.testing.assert_array_equal(x.numpy(), np.ones(8, np.float32))


def test_generated_importer_matches_the_generic_one(cpu):
    importer = interop.make_importer(((1, "x"), (2, "y")), 3)
    x, y = np.zeros(4, np.float32), cpu.zeros(4, f32)
    args, stream = importer(cpu, (0.5, x, y), {})
    assert args[0] == 0.5 and args[2] is y and stream is None
    assert isinstance(args[1], cubepy.runtime.DeviceTensor) and args[1].handle.base is x
    short, _ = importer(cpu, (0.5, x), {})  # another count: the generic path
    assert len(short) == 2 and isinstance(short[1], cubepy.runtime.DeviceTensor)
    kept, _ = importer(cpu, (0.5, "text", y), {})  # not an array: left for the check
    assert kept[1] == "text"
    one = interop.make_importer(((0, "x"),), 1)
    assert one(cpu, (y,), {})[0] == (y,)


class OnlyDLPack:
    """An array that exports nothing but DLPack (as JAX does)."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


def test_any_dlpack_array_is_used_in_place_on_cpu(cpu):
    owner = np.zeros(8, np.float32)
    run_axpy(cpu, 1.0, np.ones(8, np.float32), OnlyDLPack(owner))
    np.testing.assert_array_equal(owner, np.ones(8))


def test_a_dlpack_array_on_another_device_is_refused(cpu):
    fake_gpu = OnlyDLPack(np.zeros(8, np.float32), device=(2, 0))
    with pytest.raises(LaunchError, match=r"parameter 'y'.*client\.tensor") as info:
        run_axpy(cpu, 1.0, np.ones(8, np.float32), fake_gpu)
    assert info.value.param == "y"


# -- exports on cpu ----------------------------------------------------------------------
def test_np_asarray_of_a_cpu_tensor_is_a_view(cpu):
    t = cpu.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = np.asarray(t)
    view[1, 2] = 42
    assert t.numpy()[1, 2] == 42
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_np_from_dlpack_shares_memory(cpu):
    t = cpu.tensor(np.arange(6, dtype=np.int32))
    a = np.from_dlpack(t)
    a[0] = -5
    assert t.numpy()[0] == -5 and a.dtype == np.int32


def test_dlpack_export_keeps_the_tensor_alive(cpu):
    t = cpu.tensor(np.arange(1000, dtype=np.float32))
    a = np.from_dlpack(t)
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(1000))
    del a
    gc.collect()
    assert not any(isinstance(v[3], cubepy.runtime.DeviceTensor)
                   and v[3].shape == (1000,) for v in cubepy.dlpack._EXPORTED.values())


def test_an_unconsumed_capsule_releases_the_tensor(cpu):
    t = cpu.tensor(np.zeros(3, np.float32))
    before = len(cubepy.dlpack._EXPORTED)
    capsule = t.__dlpack__()
    assert len(cubepy.dlpack._EXPORTED) == before + 1
    del capsule
    gc.collect()
    assert len(cubepy.dlpack._EXPORTED) == before


def test_dlpack_export_of_a_strided_view(cpu):
    t = cpu.tensor(np.arange(10, dtype=np.float32))[1:9:3]
    np.testing.assert_array_equal(np.from_dlpack(t), [1, 4, 7])


def test_dlpack_device_and_wgpu_refusal(runtime_client):
    t = runtime_client.zeros(4, f32)
    if runtime_client.runtime == "wgpu":
        with pytest.raises(BufferError, match="WebGPU"):
            t.__dlpack_device__()
        assert not hasattr(t, "__cuda_array_interface__")
        np.testing.assert_array_equal(np.asarray(t), np.zeros(4))  # a download
    elif runtime_client.runtime == "cpu":
        assert t.__dlpack_device__() == (1, 0)
        assert not hasattr(t, "__cuda_array_interface__")
    else:
        assert t.__dlpack_device__() == (2, runtime_client.index)
        cai = t.__cuda_array_interface__
        assert cai["version"] == 3 and cai["shape"] == (4,) and cai["typestr"] == "<f4"


def test_from_dlpack_wraps_without_copy(cpu):
    owner = np.zeros(5, np.float32)
    t = cpu.from_dlpack(owner)
    run_axpy(cpu, 1.0, cpu.tensor(np.ones(5, np.float32)), t)
    np.testing.assert_array_equal(owner, np.ones(5))
    with pytest.raises(LaunchError, match="neither DLPack"):
        cpu.from_dlpack([1, 2, 3])


def test_client_for(cpu):
    assert cubepy.client_for(np.zeros(2)) is cpu
    assert cubepy.client_for(cpu.zeros(2, f32)) is cpu
    assert cubepy.client_for(OnlyDLPack(np.zeros(2))) is cpu
    with pytest.raises(LaunchError, match="not an array"):
        cubepy.client_for("text")


def test_capsule_import_reads_what_torch_exports():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4).t()
    got = cubepy.dlpack.import_capsule(x.__dlpack__())
    assert got.ptr == x.data_ptr() and got.shape == (4, 3) and got.strides == (1, 4)
    assert got.dtype is cubepy.f64 and got.device == (1, 0)
    got.release()
    got.release()  # a second call does nothing


# -- wgpu refuses foreign memory ---------------------------------------------------------
@pytest.mark.wgpu
def test_wgpu_refuses_foreign_arrays():
    from conftest import _runtime_present
    if not _runtime_present("wgpu"):
        pytest.skip("no wgpu adapter")
    w = cubepy.client("wgpu")
    with pytest.raises(LaunchError, match=r"parameter 'y'.*WebGPU cannot import.*client\.tensor"):
        run_axpy(w, 1.0, w.zeros(4, f32), np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match="WebGPU"):
        w.from_dlpack(np.zeros(4, np.float32))


# -- tensor ergonomics -------------------------------------------------------------------
def test_fill_zero_and_copy(runtime_client):
    t = runtime_client.zeros((2, 3), f32)
    assert t.fill_(2.5) is t
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 2.5))
    t.copy_(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3))
    u = runtime_client.zeros((2, 3), f32).copy_(t)
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    t.copy_(np.array([7, 8, 9]))  # broadcast
    np.testing.assert_array_equal(t.numpy(), [[7, 8, 9], [7, 8, 9]])
    t.zero_()
    assert not t.numpy().any()
    with pytest.raises(ValueError, match="does not broadcast"):
        t.copy_(np.zeros(4))


def test_reshape_and_view_share_memory(runtime_client):
    t = runtime_client.zeros(12, f32)
    m = t.reshape(3, -1)
    assert m.shape == (3, 4) and m.strides == (4, 1) and t.view((2, 6)).shape == (2, 6)
    run_axpy(runtime_client, 1.0, runtime_client.tensor(np.ones(12, np.float32)),
             m.reshape(12))
    np.testing.assert_array_equal(t.numpy(), np.ones(12))
    with pytest.raises(ValueError, match="cannot reshape"):
        t.reshape(5, 3)


def test_reshape_refuses_to_copy(cpu):
    t = cpu.from_dlpack(np.zeros((4, 4), np.float32).T)
    with pytest.raises(ValueError, match="contiguous"):
        t.reshape(16)


def test_slices_are_views(cpu):
    t = cpu.tensor(np.arange(10, dtype=np.float32))
    part = t[2:6]
    assert part.shape == (4,) and len(part) == 4
    run_axpy(cpu, 0.0, cpu.tensor(np.zeros(4, np.float32)), part)  # y = y
    part.fill_(-1)
    np.testing.assert_array_equal(t.numpy(), [0, 1, -1, -1, -1, -1, 6, 7, 8, 9])
    np.testing.assert_array_equal(t[1::4].numpy(), [1, -1, 9])
    assert t[8:2].shape == (0,)
    with pytest.raises(TypeError, match="slicing"):
        t[3]


def test_slice_on_wgpu_is_a_clear_error():
    from conftest import _runtime_present
    if not _runtime_present("wgpu"):
        pytest.skip("no wgpu adapter")
    t = cubepy.client("wgpu").zeros(8, f32)
    with pytest.raises(LaunchError, match="cannot make views"):
        t[2:4]


def test_repr_len_and_to_numpy(cpu):
    t = cpu.zeros((3, 2), f32)
    assert "shape=(3, 2)" in repr(t) and "f32" in repr(t) and "device='cpu'" in repr(t)
    assert len(t) == 3
    np.testing.assert_array_equal(t.to_numpy(), t.numpy())
    with pytest.raises(TypeError, match="0-d"):
        len(cpu.zeros((), f32))


# -- torch on cpu ------------------------------------------------------------------------
def test_torch_cpu_tensors_are_written_in_place(cpu):
    torch = pytest.importorskip("torch")
    x = torch.arange(50, dtype=torch.float32)
    y = torch.ones(50, requires_grad=False)
    run_axpy(cpu, 3.0, x, y)
    torch.testing.assert_close(y, 3 * torch.arange(50, dtype=torch.float32) + 1)


def test_torch_strided_views(cpu):
    torch = pytest.importorskip("torch")
    src = torch.arange(20, dtype=torch.float32).reshape(4, 5)[:, 1:4].t()  # (3, 4)
    out = torch.zeros(4, 3).t()  # (3, 4), strides (1, 3)
    run_copy(cpu, src, out)
    torch.testing.assert_close(out, src)


def test_torch_dlpack_both_ways(cpu):
    torch = pytest.importorskip("torch")
    t = cpu.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    back = torch.from_dlpack(t)
    back[0, 0] = 9
    assert t.numpy()[0, 0] == 9 and back.shape == (2, 3)
    x = torch.zeros(4, dtype=torch.float64)
    view = cpu.from_dlpack(x)
    view.fill_(1.5)
    torch.testing.assert_close(x, torch.full((4,), 1.5, dtype=torch.float64))
    assert cubepy.client_for(x) is cpu


def test_torch_keeps_an_exported_view_alive_until_it_lets_go(cpu):
    """torch asks for DLPack 1.0 (max_version): the versioned struct. The export keeps
    the cubepy tensor, the struct and its shape and strides arrays alive until torch
    calls the deleter, however much is allocated and collected in between."""
    torch = pytest.importorskip("torch")
    before = len(cubepy.dlpack._EXPORTED)
    view = cpu.tensor(np.arange(10, dtype=np.float32))[1:9:3]
    capsule = view.__dlpack__(max_version=(1, 0))
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(capsule), b"dltensor_versioned")
    del capsule
    back = torch.from_dlpack(view)
    del view
    gc.collect()
    churn = [np.full(64, -1.0, np.float32) for _ in range(2000)]  # reuses freed memory
    assert len(cubepy.dlpack._EXPORTED) == before + 1
    assert back.shape == (3,) and back.stride() == (3,) and back.tolist() == [1.0, 4.0, 7.0]
    del back, churn
    gc.collect()
    assert len(cubepy.dlpack._EXPORTED) == before


@pytest.mark.parametrize("dtype_name", ["bool", "float16", "int64"])
def test_torch_dtypes_round_trip(cpu, dtype_name):
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, dtype_name)
    x = torch.ones(4, dtype=dtype)
    t = cpu.from_dlpack(x)
    assert t.dtype.name == {"bool": "bool", "float16": "f16", "int64": "i64"}[dtype_name]
    assert torch.equal(torch.from_dlpack(t), x)


def test_torch_bf16_is_refused_on_cpu(cpu):
    torch = pytest.importorskip("torch")
    with pytest.raises(LaunchError, match="parameter 'x'.*cpu runtime has no bf16"):
        run_axpy(cpu, 1.0, torch.zeros(4, dtype=torch.bfloat16),
                 torch.zeros(4, dtype=torch.bfloat16))


# -- cuda: torch CUDA tensors and CuPy arrays (run on a GPU machine) -----------------------
def _cuda_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    from conftest import _runtime_present
    if not _runtime_present("cuda"):
        pytest.skip("no cubepy cuda runtime")
    return torch, cubepy.client("cuda")


@pytest.mark.cuda
def test_cuda_torch_tensors_in_place_without_sync():
    torch, client = _cuda_torch()
    x = torch.arange(4096, device="cuda", dtype=torch.float32)
    y = torch.ones(4096, device="cuda")
    assert cubepy.client_for(x) is client
    run_axpy(client, 2.0, x, y)
    # no synchronisation: torch reads on its current stream, which the launch used
    torch.testing.assert_close(y, 2 * x + 1)


@pytest.mark.cuda
def test_cuda_torch_on_a_side_stream():
    torch, client = _cuda_torch()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.randn(1 << 16, device="cuda")
        y = torch.zeros(1 << 16, device="cuda")
        run_axpy(client, 1.0, x, y)
        same = torch.equal(y, x)  # read on s, which the launch ran on
    assert same


@pytest.mark.cuda
def test_cuda_client_stream_setter():
    torch, client = _cuda_torch()
    s = torch.cuda.Stream()
    client.stream = s
    try:
        assert client.stream == s.cuda_stream
        x = client.tensor(np.arange(256, dtype=np.float32))
        y = client.zeros(256, f32)
        run_axpy(client, 1.0, x, y)
        np.testing.assert_array_equal(y.numpy(), np.arange(256))
    finally:
        client.stream = None
    assert client.stream != s.cuda_stream


@pytest.mark.cuda
def test_cuda_torch_strided_views():
    torch, client = _cuda_torch()
    src = torch.arange(20, dtype=torch.float32, device="cuda").reshape(4, 5)[:, 1:4].t()
    out = torch.zeros(4, 3, device="cuda").t()
    run_copy(client, src, out)
    torch.testing.assert_close(out, src)


@pytest.mark.cuda
def test_cuda_dlpack_both_ways_with_torch():
    torch, client = _cuda_torch()
    t = client.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    back = torch.from_dlpack(t)  # torch passes its stream: the upload precedes its reads
    torch.testing.assert_close(back.cpu(), torch.arange(6.).reshape(2, 3))
    back.mul_(2)
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3) * 2)
    x = torch.zeros(8, device="cuda", dtype=torch.float16)
    view = client.from_dlpack(x)
    assert view.dtype is cubepy.f16
    run_axpy(client, 1.0, torch.ones(8, device="cuda", dtype=torch.float16), view)
    torch.testing.assert_close(x, torch.ones(8, device="cuda", dtype=torch.float16))
    bf = client.zeros(4, cubepy.bf16).fill_(1.5)
    torch.testing.assert_close(torch.from_dlpack(bf).float().cpu(), torch.full((4,), 1.5))


@pytest.mark.cuda
def test_cuda_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    from conftest import _runtime_present
    if not _runtime_present("cuda"):
        pytest.skip("no cubepy cuda runtime")
    client = cubepy.client("cuda")
    x = cupy.arange(1000, dtype=cupy.float32)
    y = cupy.ones(1000, dtype=cupy.float32)
    run_axpy(client, 2.0, x, y)
    cupy.testing.assert_array_equal(y, 2 * x + 1)
    src = cupy.arange(20, dtype=cupy.float64).reshape(4, 5)[:, 1:4].T
    out = cupy.zeros((3, 4))
    run_copy(client, src, out)
    cupy.testing.assert_array_equal(out, src)
    t = client.tensor(np.arange(5, dtype=np.float32))
    cupy.testing.assert_array_equal(cupy.asarray(t), cupy.arange(5, dtype=cupy.float32))
    cupy.testing.assert_array_equal(cupy.from_dlpack(t), cupy.arange(5, dtype=cupy.float32))
    assert cubepy.client_for(x) is client


@pytest.mark.cuda
def test_cuda_refuses_host_and_other_device_arrays():
    torch, client = _cuda_torch()
    with pytest.raises(LaunchError, match=r"parameter 'y'.*host memory"):
        run_axpy(client, 1.0, torch.zeros(4, device="cuda"), np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match=r"parameter 'x'.*torch tensor on cpu"):
        run_axpy(client, 1.0, torch.zeros(4), torch.zeros(4, device="cuda"))


def test_launch_memo_reuses_views_until_the_tensor_changes(cpu, monkeypatch):
    """The memo that keeps torch CUDA launches cheap, exercised with CPU tensors: a view
    is reused for the same tensor, and rebuilt when its strides or identity change."""
    torch = pytest.importorskip("torch")
    calls = []
    real = interop._torch_cpu

    def counting(client, t, owner=True):
        calls.append(owner)
        return real(client, t, owner)

    monkeypatch.setitem(interop._ADAPTERS, (torch.Tensor, "cpu"), counting)
    monkeypatch.setattr(interop, "_MEMOIZED", {
        counting: (interop._torch_quick_fingerprint, interop._torch_fingerprint)})
    src = torch.arange(16, dtype=torch.float32).reshape(4, 4)
    out = torch.zeros(4, 4)
    run_copy(cpu, src, out)
    assert len(calls) == 2 and calls == [False, False]
    run_copy(cpu, src, out)
    assert len(calls) == 2  # both views reused
    src.add_(1.0)  # an in-place op: a new _version, the same layout
    run_copy(cpu, src, out)
    assert len(calls) == 2  # still reused, after the full check
    torch.testing.assert_close(out, src)
    src.t_()  # same pointer and shape, other strides
    run_copy(cpu, src, out)
    assert len(calls) == 3
    torch.testing.assert_close(out, src)
    out = torch.zeros(4, 4)  # a new tensor in the same position
    run_copy(cpu, src, out)
    assert len(calls) == 4
    torch.testing.assert_close(out, src)


def test_a_read_only_array_is_refused_as_an_output(cpu):
    x = np.ones(8, np.float32)
    x.flags.writeable = False
    y = np.zeros(8, np.float32)
    run_axpy(cpu, 1.0, x, y)  # read-only input: fine
    np.testing.assert_array_equal(y, np.ones(8))
    y.flags.writeable = False
    with pytest.raises(LaunchError, match=r"parameter 'y' is written.*read-only") as info:
        run_axpy(cpu, 1.0, x, y)
    assert info.value.param == "y"


def test_stream_handles_from_stream_objects():
    from cubepy.runtime.cuda import _stream_handle

    class TorchLike:
        cuda_stream = 0x1234

    class Protocol:
        def __cuda_stream__(self):
            return (0, 0x42)

    assert _stream_handle(7) == 7
    assert _stream_handle(TorchLike()) == 0x1234
    assert _stream_handle(Protocol()) == 0x42
    with pytest.raises(TypeError, match="not a CUDA stream"):
        _stream_handle("stream")


def test_array_without_copy_refused_off_cpu():
    from conftest import _runtime_present
    if not _runtime_present("wgpu"):
        pytest.skip("no wgpu adapter")
    t = cubepy.client("wgpu").zeros(4, f32)
    with pytest.raises(ValueError, match="without a copy"):
        t.__array__(copy=False)


def test_a_dlpack_view_keeps_its_producer_alive(cpu):
    t = cpu.from_dlpack(OnlyDLPack(np.arange(1000, dtype=np.float64)))
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), np.arange(1000))


def test_strided_dlpack_producer_through_the_capsule_path(cpu):
    torch = pytest.importorskip("torch")
    src = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()  # strides (1, 4)
    view = cpu.from_dlpack(OnlyDLPack(src))
    assert view.shape == (4, 3) and view.strides == (1, 4)
    out = np.zeros((4, 3), np.float32)
    run_copy(cpu, view, out)
    np.testing.assert_array_equal(out, src.numpy())


class _FakeCudaTensor:
    """A CPU torch tensor that answers like a CUDA one (for the cuda adapter's logic)."""

    is_cuda = True

    def __init__(self, t):
        self.t = t
        self.dtype, self.shape = t.dtype, t.shape

    def get_device(self):
        return 0

    def __getattr__(self, name):  # stride, numel, is_contiguous, data_ptr
        return getattr(self.t, name)


class _FakeCudaClient:
    runtime, index = "cuda", 0

    def _wrap_pointer(self, ptr, nbytes, owner):
        from cubepy.runtime.cuda import ForeignBuffer
        return ForeignBuffer(ptr, nbytes, owner)


def test_cuda_adapter_views_pointer_shape_and_strides(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(interop, "_torch_current_stream", lambda index: 0x77)
    monkeypatch.setitem(interop._ADAPTERS, (_FakeCudaTensor, "cuda"), interop._torch_cuda)
    client = _FakeCudaClient()
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = _FakeCudaTensor(base[1:, 2:5].t())  # (3, 3) view, strides (1, 6), offset 8
    y = _FakeCudaTensor(torch.zeros(5, dtype=torch.float16))
    importer = interop.make_importer(((1, "x"), (2, "y")), 3)
    memo = {}
    (a, vx, vy), stream = importer(client, (1.0, x, y), memo)
    assert stream == 0x77 and a == 1.0
    assert vx.shape == (3, 3) and vx.strides == (1, 6) and vx.dtype is cubepy.f32
    assert vx.handle.ptr == base.data_ptr() + 8 * 4
    assert vx.buffer_len == 1 + 2 * 1 + 2 * 6 and vx.handle.nbytes == vx.buffer_len * 4
    assert vx.handle.owner is None  # launch views do not keep the tensor alive
    assert vy.dtype is cubepy.f16 and vy.handle.nbytes == 10 and vy.strides == (1,)
    (_, again, _), _ = importer(client, (1.0, x, y), memo)
    assert again is vx  # remembered
    x.t.t_()  # other strides: a new view
    (_, fresh, _), _ = importer(client, (1.0, x, y), memo)
    assert fresh is not vx and fresh.strides == (6, 1)
    other = _FakeCudaTensor(torch.zeros(2))
    other.get_device = lambda: 1
    with pytest.raises(LaunchError, match=r"parameter 'y'.*cuda:0"):
        importer(client, (1.0, x, other), memo)
    owned, _ = interop.to_tensor(client, x, "x")  # from_dlpack's path keeps x alive
    assert owned.handle.owner is x


def _fake_cuda_client(monkeypatch):
    """A CudaClient whose driver calls are recorded instead of made (stream routing)."""
    from cubepy.runtime import cuda as cuda_mod
    from cubepy.runtime import cuda_driver
    calls = []

    class Stream:
        def __init__(self, handle):
            self.handle = handle

        def synchronize(self):
            calls.append(("sync own", self.handle))

    Driver = type("Driver", (), {"Error": RuntimeError, "Stream": Stream})

    client = object.__new__(cuda_mod.CudaClient)
    client._cuda, client._ctx, client.device = Driver, object(), "fake"
    client._stream = client._own_stream = Stream(0x10)
    client._raw_stream, client._foreign_streams, client.lost = None, set(), None
    monkeypatch.setattr(cuda_mod._tls, "ctx", client._ctx, raising=False)
    monkeypatch.setattr(cuda_driver, "stream_wait",
                        lambda consumer, producer: calls.append(("wait", consumer, producer)))
    monkeypatch.setattr(cuda_driver, "stream_synchronize",
                        lambda handle: calls.append(("sync", handle)))
    monkeypatch.setattr(cuda_mod.CudaClient, "_launch_raw",
                        lambda self, exe, c, d, p, handle: calls.append(("raw", handle)))
    monkeypatch.setattr(cuda_mod.CudaClient, "_activate", lambda self: None)

    class Exe:
        name = "k"
        shared = 0  # bytes of dynamic shared memory

        def pack(self, buffers, info):
            return b"params"

        def launch(self, count, dim, params, shared, stream):
            calls.append(("pycuda", None if stream is None else stream.handle))

    return client, Exe(), calls


def test_cuda_dispatch_routes_streams(monkeypatch):
    client, exe, calls = _fake_cuda_client(monkeypatch)
    grid = ((1, 1, 1), (32, 1, 1), [], b"")
    client.dispatch(exe, *grid)
    assert calls == [("pycuda", 0x10)]  # the client's own stream
    calls.clear()
    client.dispatch(exe, *grid, stream=0)  # torch's default stream: the legacy one
    assert calls == [("pycuda", None)] and 0 in client._foreign_streams
    calls.clear()
    client.dispatch(exe, *grid, stream=0x99)  # a torch side stream
    assert ("raw", 0x99) in calls and ("wait", 0x99, 0x10) in calls and ("wait", 0x99, 0) in calls
    calls.clear()
    client.dispatch(exe, *grid, stream=0x99)  # the wait happens once per sync
    assert calls == [("raw", 0x99)]
    calls.clear()
    client.sync()
    assert ("sync own", 0x10) in calls and ("sync", 0x99) in calls and ("sync", 0) in calls
    assert not client._foreign_streams
    calls.clear()
    client.stream = 0x55
    assert client.stream == 0x55
    client.dispatch(exe, *grid)
    assert calls[-1] == ("raw", 0x55) and ("wait", 0x55, 0x10) in calls
    client.stream = None
    assert client.stream == 0x10


def test_cuda_dlpack_export_waits_on_the_consumer_stream(monkeypatch):
    client, exe, calls = _fake_cuda_client(monkeypatch)
    client._foreign_streams.add(0x99)
    client._make_stream_wait(0x42)
    assert sorted(calls) == [("wait", 0x42, 0x10), ("wait", 0x42, 0x99)]
    calls.clear()
    client._make_stream_wait(0x10)  # the consumer is the client's stream: only the other
    assert calls == [("wait", 0x10, 0x99)]
