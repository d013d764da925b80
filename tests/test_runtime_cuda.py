"""The cuda runtime (PyCUDA): context sharing, limits, compile caches, the prepared launch
path and the info struct passed by value.

Most tests need a CUDA device and carry the `cuda` mark; the parameter-buffer layout and
the compile path (with nvcc) are checked without one.
"""
from __future__ import annotations

import shutil
import struct

import numpy as np
import pytest

from cubepy.abi import BufferBinding, InfoField, KernelABI
from cubepy.errors import LaunchError
from cubepy.ir.types import bool_, f16, f32, f64, i32, i64, u32, u64


def _cuda_client():
    import cubepy
    try:
        return cubepy.client("cuda")
    except LaunchError:
        return None


HAVE_CUDA = _cuda_client() is not None
needs_cuda = [pytest.mark.cuda, pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device")]


def _abi(buffers: list[tuple[str, object]], scalars: list[tuple[str, object]]) -> KernelABI:
    """A hand-made ABI: buffers in order, scalar fields by decreasing alignment (as
    cubepy.abi.compute_abi orders them)."""
    codes = {"f16": "e", "f32": "f", "f64": "d", "i32": "i", "i64": "q", "u32": "I",
             "u64": "Q"}
    binds = tuple(BufferBinding(n, t, "array", False, False) for n, t in buffers)
    ordered = sorted(scalars, key=lambda s: -s[1].itemsize)
    fields, off, fmt = [], 0, "<"
    for name, t in ordered:
        fields.append(InfoField(name, "scalar", name, t, 1, off))
        off += t.itemsize
        fmt += codes[t.name]
    align = max((t.itemsize for _, t in ordered), default=1)
    size = -(-off // align) * align if fields else 0
    if size > off:
        fmt += f"{size - off}x"
    return KernelABI(binds, tuple(fields), size, fmt)


# Every scalar type in one struct: 3 x 8 + 3 x 4 + 2 = 38 bytes, padded to 40.
SCALARS_SOURCE = r"""
#include <cuda_fp16.h>
struct Info { double a; long long b; unsigned long long c; float d; int e; unsigned int f;
              __half g; };
static_assert(sizeof(Info) == 40, "info size");
static_assert(alignof(Info) == 8, "info alignment");
extern "C" __global__ void scalars(unsigned long long* o64, unsigned int* o32,
                                   unsigned short* o16, Info info) {
    o64[0] = (unsigned long long)__double_as_longlong(info.a);
    o64[1] = (unsigned long long)info.b;
    o64[2] = info.c;
    o32[0] = __float_as_uint(info.d);
    o32[1] = (unsigned int)info.e;
    o32[2] = info.f;
    o16[0] = __half_as_ushort(info.g);
}
"""
SCALARS_ABI = _abi([("o64", u64), ("o32", u32), ("o16", f16)],
                   [("a", f64), ("b", i64), ("c", u64), ("d", f32), ("e", i32), ("f", u32),
                    ("g", f16)])
SCALAR_VALUES = {"a": -1.0e300 / 3.0, "b": -(2**62) - 12345, "c": 2**64 - 7,
                 "d": 3.14159, "e": -2**31, "f": 2**32 - 1, "g": 0.333}

# One u32 info field after one pointer: the struct sits at offset 8, size 4.
FILL_SOURCE = r"""
struct Info { unsigned int n; };
extern "C" __global__ void fill(unsigned int* out, Info info) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < info.n) out[i] = i * 3u + 1u;
}
"""
FILL_ABI = _abi([("out", u32)], [("n", u32)])


class _FakeTensor:
    class _H:
        def __init__(self, ptr):
            self.ptr = ptr

    def __init__(self, ptr):
        self.handle = self._H(ptr)


# -- without a device ---------------------------------------------------------------------
def test_param_buffer_is_pointers_then_info_bytes():
    from cubepy.runtime.cuda import _make_param_packer
    info = struct.pack(SCALARS_ABI.struct_format, *(SCALAR_VALUES[f.name]
                                                    for f in SCALARS_ABI.fields))
    assert len(info) == SCALARS_ABI.size == 40
    pack = _make_param_packer(3, SCALARS_ABI.size)
    buf = pack([_FakeTensor(0x1000), _FakeTensor(0x2000), _FakeTensor(0xFFFF_0000_0000)],
               info)
    assert len(buf) == 3 * 8 + 40
    assert struct.unpack_from("<3Q", buf) == (0x1000, 0x2000, 0xFFFF_0000_0000)
    assert buf[24:] == info
    assert _make_param_packer(0, 8)([], b"12345678") == b"12345678"
    assert _make_param_packer(2, 0)([_FakeTensor(1), _FakeTensor(2)], b"") == \
        struct.pack("<QQ", 1, 2)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_compile_and_disk_cache(tmp_path, monkeypatch):
    from cubepy.runtime import cuda_compile
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvcc")
    for cached in (cuda_compile.nvrtc_version, cuda_compile.nvcc_version,
                   cuda_compile.nvrtc_identity, cuda_compile.nvcc_identity):
        cached.cache_clear()
    try:
        comp = cuda_compile.CudaCompiler("sm_90")
        cubin = comp.compile(SCALARS_SOURCE)  # the static_asserts check the layout
        assert cubin[:4] == b"\x7fELF"
        assert comp.last_compiler.startswith("nvcc")
        assert len(list((tmp_path / "cuda").glob("*.cubin"))) == 1
        again = cuda_compile.CudaCompiler("sm_90")
        assert again.compile(SCALARS_SOURCE) == cubin and again.last_compiler == "disk"
        other_arch = cuda_compile.CudaCompiler("sm_80")
        other_arch.compile(SCALARS_SOURCE)
        assert other_arch.last_compiler != "disk"  # the key holds the architecture
        with pytest.raises(LaunchError, match="rejected"):
            comp.compile("this is not CUDA")
    finally:
        for cached in (cuda_compile.nvrtc_version, cuda_compile.nvcc_version,
                       cuda_compile.nvrtc_identity, cuda_compile.nvcc_identity):
            cached.cache_clear()


def test_missing_device_index_raises_launch_error():
    import cubepy
    with pytest.raises(LaunchError):
        cubepy.client("cuda:97")


# -- on a device --------------------------------------------------------------------------
def _client():
    import cubepy
    return cubepy.client("cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device")
class TestOnDevice:
    def test_client_is_shared_and_named(self):
        import cubepy
        c = _client()
        assert cubepy.client("cuda:0") is c and c.runtime == "cuda" and c.target == "cuda"
        assert c.device and c.arch.startswith("sm_")

    def test_limits_from_device_attributes(self):
        import pycuda.driver as cuda
        c = _client()
        dev = cuda.Device(0)
        A = cuda.device_attribute
        assert c.limits.max_units_per_cube == dev.get_attribute(A.MAX_THREADS_PER_BLOCK)
        assert c.limits.max_cube_count[0] == dev.get_attribute(A.MAX_GRID_DIM_X)
        assert c.limits.max_cube_dim[2] == dev.get_attribute(A.MAX_BLOCK_DIM_Z)
        assert c.limits.plane_dim == dev.get_attribute(A.WARP_SIZE)
        if c.compute_capability >= (8, 0):
            for t in (f16, f32, f64, i32, i64, u32, u64, bool_):
                assert t in c.limits.dtypes

    def test_primary_context_is_current(self):
        drv = pytest.importorskip("cuda.bindings.driver")
        _client()
        err, current = drv.cuCtxGetCurrent()
        err2, dev = drv.cuDeviceGet(0)
        err3, primary = drv.cuDevicePrimaryCtxRetain(dev)
        assert int(err) == int(err2) == int(err3) == 0
        assert int(current) == int(primary)
        drv.cuDevicePrimaryCtxRelease(dev)

    def test_round_trip_every_dtype(self):
        c = _client()
        for np_t in (np.float16, np.float32, np.float64, np.int32, np.int64, np.uint32,
                     np.uint64, np.bool_):
            a = (np.arange(37) % 5).astype(np_t)
            assert np.array_equal(c.tensor(a).numpy(), a)
            z = c.zeros((3, 4), c._dtype_of(np.dtype(np_t)))
            assert z.numpy().shape == (3, 4) and not z.numpy().any()
        t = c.tensor(np.arange(12, dtype=np.float32).reshape(3, 4).T)  # strided source
        assert np.array_equal(t.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)
        assert c.tensor(np.zeros(0, np.float32)).numpy().shape == (0,)

    def test_info_struct_by_value_every_scalar_type(self):
        c = _client()
        exe = c.load(SCALARS_SOURCE, "scalars", SCALARS_ABI)
        o64, o32, o16 = c.zeros(3, u64), c.zeros(3, u32), c.zeros(1, f16)
        info = struct.pack(SCALARS_ABI.struct_format,
                           *(SCALAR_VALUES[f.name] for f in SCALARS_ABI.fields))
        c.dispatch(exe, (1, 1, 1), (1, 1, 1), [o64, o32, o16], info)
        v = SCALAR_VALUES
        want64 = np.array([struct.unpack("<Q", struct.pack("<d", v["a"]))[0],
                           v["b"] % 2**64, v["c"]], np.uint64)
        want32 = np.array([struct.unpack("<I", struct.pack("<f", v["d"]))[0],
                           v["e"] % 2**32, v["f"]], np.uint32)
        assert np.array_equal(o64.numpy(), want64)
        assert np.array_equal(o32.numpy(), want32)
        assert o16.numpy()[0] == np.float16(v["g"])

    def test_compile_cache_and_async_launches(self):
        c = _client()
        exe = c.load(FILL_SOURCE, "fill", FILL_ABI)
        assert c.load(FILL_SOURCE, "fill", FILL_ABI) is exe
        out = c.zeros(1000, u32)
        for n in (10, 500, 1000):  # queued without waiting; numpy() waits
            c.dispatch(exe, ((n + 127) // 128, 1, 1), (128, 1, 1), [out],
                       struct.pack("<I", n))
        c.sync()
        assert np.array_equal(out.numpy(), np.arange(1000, dtype=np.uint32) * 3 + 1)

    def test_nvrtc_and_nvcc_cubins_both_run(self, tmp_path, monkeypatch):
        import pycuda.driver as cuda
        from cubepy.runtime import cuda_compile
        c = _client()
        found = []
        for fn, available in ((cuda_compile.compile_nvrtc, cuda_compile.nvrtc_version()),
                              (cuda_compile.compile_nvcc, shutil.which("nvcc"))):
            if not available:
                continue
            module = cuda.module_from_buffer(fn(FILL_SOURCE, c.arch))
            from cubepy.runtime.cuda import CudaExecutable
            exe = CudaExecutable(module.get_function("fill"), "fill", FILL_SOURCE, FILL_ABI,
                                 fn.__name__)
            out = c.zeros(64, u32)
            c.dispatch(exe, (1, 1, 1), (64, 1, 1), [out], struct.pack("<I", 64))
            assert np.array_equal(out.numpy(), np.arange(64, dtype=np.uint32) * 3 + 1)
            found.append(fn.__name__)
        assert found

    def test_bf16_buffer_downloads_as_float32(self):
        from cubepy.ir.types import bf16
        c = _client()
        if bf16 not in c.limits.dtypes:
            pytest.skip("no bf16 on this device")
        t = c.zeros(5, bf16)
        got = t.numpy()
        assert got.dtype == np.float32 and got.shape == (5,) and not got.any()

    def test_bf16_scalar_parameter_travels_as_f32(self):
        import cubepy
        from corpus import axpy
        from cubepy.ir.types import bf16
        c = _client()
        if bf16 not in c.limits.dtypes:
            pytest.skip("no bf16 on this device")
        x = c.tensor(np.arange(64, dtype=np.float32) / 8, bf16)  # exact in bf16
        y = c.tensor(np.ones(64, np.float32), bf16)
        axpy.launch(c, cubepy.CubeCount(1), cubepy.CubeDim(64), 2.5, x, y)
        exact = np.arange(64, dtype=np.float32) / 8 * 2.5 + 1
        np.testing.assert_allclose(y.numpy(), exact, rtol=2.0 ** -7, atol=0)  # bf16's step

    def test_cube_dim_beyond_limit_is_a_launch_error(self):
        import cubepy
        from corpus import axpy
        c = _client()
        x = c.tensor(np.ones(8, np.float32))
        y = c.tensor(np.ones(8, np.float32))
        with pytest.raises(LaunchError, match="cube_dim"):
            axpy.launch(c, cubepy.CubeCount(1, 1, 1),
                        cubepy.CubeDim(c.limits.max_units_per_cube * 2, 1, 1), 2.0, x, y)

    @pytest.mark.parametrize("np_t", [np.float32, np.float64, np.float16])
    def test_generated_axpy_with_scalar(self, np_t):
        import cubepy
        from corpus import axpy
        c = _client()
        rng = np.random.default_rng(0)
        x = rng.standard_normal(1000).astype(np_t)
        y = rng.standard_normal(1000).astype(np_t)
        a = np_t(0.5)
        yd = c.tensor(y)
        axpy.launch(c, cubepy.CubeCount(4, 1, 1), cubepy.CubeDim(256, 1, 1), a,
                    c.tensor(x), yd)
        tol = 1e-2 if np_t is np.float16 else 1e-6
        np.testing.assert_allclose(yd.numpy(), a * x + y, rtol=tol, atol=tol)

    def test_generated_seed_kernel_with_broadcast(self):
        import cubepy
        from corpus import fused_matmul_add_relu_kernel as k
        c = _client()
        rng = np.random.default_rng(1)
        # The seed kernel reads dim_k from rhs's last dimension: K == N here.
        lhs = rng.standard_normal((1, 32, 40)).astype(np.float32)
        rhs = rng.standard_normal((3, 40, 40)).astype(np.float32)
        bias = rng.standard_normal((3, 32, 40)).astype(np.float32)
        out = c.zeros((3, 32, 40), f32)
        k.launch(c, cubepy.CubeCount(2, 3, 3), cubepy.CubeDim(16, 16, 1), c.tensor(lhs),
                 c.tensor(rhs), c.tensor(bias), out)
        want = np.maximum(lhs @ rhs + bias, 0)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.cuda
@pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device")
def test_comptime_value_change_recompiles():
    from corpus import unrolled_poly
    c = _client()
    x = c.tensor(np.full(8, 2.0, np.float32))
    results = {}
    for degree in (1, 3, 1):
        out = c.zeros(8, f32)
        unrolled_poly.launch(c, (1, 1, 1), (8, 1, 1), x, out, degree)
        results[degree] = out.numpy()
    acc = 0.0
    for k in range(3):
        acc = acc * 2.0 + (k + 1)
    assert np.allclose(results[3], acc) and np.allclose(results[1], 1.0)
