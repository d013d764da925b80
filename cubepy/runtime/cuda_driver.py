"""The few CUDA driver calls PyCUDA does not expose, through ctypes on libcuda.

PyCUDA launches only on its own `Stream` objects; streams made by torch, CuPy or the
user arrive as raw `CUstream` handles. These helpers launch on, wait for and copy on
such handles, and ask which device a pointer lives on. All need the right context
current (the cuda client makes its primary context current before calling them).
"""
from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache

_c = ctypes
CU_LAUNCH_PARAM_END = 0
CU_LAUNCH_PARAM_BUFFER_POINTER = 1
CU_LAUNCH_PARAM_BUFFER_SIZE = 2
CU_EVENT_DISABLE_TIMING = 2
CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class DriverError(RuntimeError):
    """A CUDA driver call failed."""


@lru_cache(maxsize=1)
def lib():
    """libcuda, with the signatures used here declared."""
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    cu = ctypes.CDLL(name)
    vp, u32, sz = _c.c_void_p, _c.c_uint, _c.c_size_t
    sigs = {
        "cuModuleLoadData": [_c.POINTER(vp), _c.c_char_p],
        "cuModuleGetFunction": [_c.POINTER(vp), vp, _c.c_char_p],
        "cuLaunchKernel": [vp, u32, u32, u32, u32, u32, u32, u32, vp, vp, vp],
        "cuFuncSetAttribute": [vp, _c.c_int, _c.c_int],
        "cuEventCreate": [_c.POINTER(vp), u32],
        "cuEventRecord": [vp, vp],
        "cuEventDestroy_v2": [vp],
        "cuStreamWaitEvent": [vp, vp, u32],
        "cuStreamSynchronize": [vp],
        "cuMemsetD8Async": [_c.c_uint64, _c.c_ubyte, sz, vp],
        "cuMemcpyHtoDAsync_v2": [_c.c_uint64, vp, sz, vp],
        "cuPointerGetAttribute": [vp, _c.c_int, _c.c_uint64],
    }
    for fn, args in sigs.items():
        getattr(cu, fn).argtypes = args
        getattr(cu, fn).restype = _c.c_int
    return cu


def check(result: int, what: str) -> None:
    if result != 0:
        raise DriverError(f"{what} failed with CUDA error {result}")


class RawFunction:
    """A kernel loaded through the driver API (for launches on raw stream handles)."""

    def __init__(self, cubin: bytes, name: str, dynamic_shared: int = 0):
        cu = lib()
        self._module = _c.c_void_p()
        check(cu.cuModuleLoadData(_c.byref(self._module), cubin), "cuModuleLoadData")
        self.handle = _c.c_void_p()
        check(cu.cuModuleGetFunction(_c.byref(self.handle), self._module, name.encode()),
              "cuModuleGetFunction")
        if dynamic_shared:  # over 48 KB of dynamic shared memory needs the opt-in
            check(cu.cuFuncSetAttribute(self.handle,
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        dynamic_shared), "cuFuncSetAttribute")

    def launch(self, grid, block, params: bytes, stream: int, shared: int = 0) -> None:
        """cuLaunchKernel with the parameter buffer `params` (as PyCUDA's prepared path)
        and `shared` bytes of dynamic shared memory."""
        buf = _c.create_string_buffer(params, len(params))
        size = _c.c_size_t(len(params))
        extra = (_c.c_void_p * 5)(CU_LAUNCH_PARAM_BUFFER_POINTER, _c.cast(buf, _c.c_void_p),
                                  CU_LAUNCH_PARAM_BUFFER_SIZE,
                                  _c.cast(_c.byref(size), _c.c_void_p), CU_LAUNCH_PARAM_END)
        check(lib().cuLaunchKernel(self.handle, *grid, *block, shared, stream or None, None,
                                   extra), "cuLaunchKernel")


def stream_wait(consumer: int, producer: int) -> None:
    """Work queued on stream `consumer` from now on waits for what `producer` has queued
    so far (an event, no host synchronisation)."""
    cu = lib()
    event = _c.c_void_p()
    check(cu.cuEventCreate(_c.byref(event), CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    try:
        check(cu.cuEventRecord(event, producer or None), "cuEventRecord")
        check(cu.cuStreamWaitEvent(consumer or None, event, 0), "cuStreamWaitEvent")
    finally:
        cu.cuEventDestroy_v2(event)


def stream_synchronize(stream: int) -> None:
    check(lib().cuStreamSynchronize(stream or None), "cuStreamSynchronize")


def memset_zero_async(ptr: int, nbytes: int, stream: int) -> None:
    check(lib().cuMemsetD8Async(ptr, 0, nbytes, stream or None), "cuMemsetD8Async")


def memcpy_htod_async(ptr: int, host, stream: int) -> None:
    """Copies the contiguous numpy array `host` to `ptr` (pageable: staged before return)."""
    check(lib().cuMemcpyHtoDAsync_v2(ptr, host.ctypes.data, host.nbytes, stream or None),
          "cuMemcpyHtoDAsync")


def pointer_device(ptr: int) -> int:
    """The ordinal of the device that `ptr` was allocated on."""
    ordinal = _c.c_int()
    check(lib().cuPointerGetAttribute(_c.byref(ordinal), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      ptr), "cuPointerGetAttribute")
    return ordinal.value
