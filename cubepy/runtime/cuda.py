"""The cuda runtime: PyCUDA on the device's primary context.

- Context: the device's primary context (the one torch and CuPy use), pushed once per
  thread; clients of two devices switch it only when a call finds the other current.
- Memory: `mem_alloc` buffers, zeroed on allocation; uploads and zeroing go on the
  client's stream, downloads wait for it.
- Compilation: cuda_compile.py (NVRTC, else nvcc, with an on-disk cubin cache) then
  `module_from_buffer`; modules are cached in memory by source.
- Launch: the info struct travels BY VALUE after the buffer pointers. Pointers are 8
  bytes and the struct's alignment is at most 8, so appending its bytes right after the
  pointers reproduces the C parameter layout; one precompiled `struct.Struct` packs the
  whole parameter buffer and PyCUDA's `_launch_kernel` (what `prepared_async_call` ends
  in) queues it with cuLaunchKernel's CU_LAUNCH_PARAM_BUFFER_POINTER, asynchronously on
  one stream.
"""
from __future__ import annotations

import atexit
import struct
import threading
from typing import Any, Sequence

import numpy as np

from ..abi import KernelABI
from ..errors import LaunchError
from ..ir import nodes as ir
from ..ir.types import ALL_DTYPES, DType, bf16, f32, i32, u32
from .base import Client, DeviceLimits, DeviceTensor
from .cuda_compile import CudaCompiler

_tls = threading.local()  # .ctx: the context this module made current on this thread
_pushed: list = []  # (thread id, context) pairs pushed by this module, popped at exit


class _Buffer:
    """A device allocation and its address (read on every launch, so kept as an int)."""

    __slots__ = ("alloc", "ptr", "nbytes")

    def __init__(self, alloc, nbytes: int):
        self.alloc = alloc
        self.ptr = int(alloc)
        self.nbytes = nbytes


class CudaExecutable:
    """A loaded kernel and what launching it needs."""

    __slots__ = ("function", "launch", "pack", "name", "source", "abi", "compiler")

    def __init__(self, function, name: str, source: str, abi: KernelABI, compiler: str):
        self.function = function
        self.name = name
        self.source = source
        self.abi = abi
        self.compiler = compiler
        # PyCUDA's prepared-call path ends in _launch_kernel(grid, block, buf, shared,
        # stream); calling it directly skips the per-call format parsing and kwargs.
        self.launch = getattr(function, "_launch_kernel", None)
        self.pack = _make_param_packer(len(abi.buffers), abi.size if abi.has_info else 0)


def _make_param_packer(n_buffers: int, info_size: int):
    """(buffers, info) -> the kernel parameter buffer: 8-byte pointers, then the info
    struct's bytes. The struct needs no padding before it: its offset (8 * n_buffers) is
    a multiple of its alignment (at most 8)."""
    fmt = "<" + "Q" * n_buffers + (f"{info_size}s" if info_size else "")
    pack = struct.Struct(fmt).pack
    args = ", ".join(f"b[{i}].handle.ptr" for i in range(n_buffers))
    if info_size:
        args = f"{args}, info" if args else "info"
    return eval(f"lambda b, info: _pack({args})", {"_pack": pack})


class CudaClient(Client):
    """A CUDA device through PyCUDA. `CudaClient(1)` is `cubepy.client("cuda:1")`."""

    runtime = "cuda"
    target = "cuda"

    def __init__(self, index: int = 0):
        try:
            import pycuda.driver as cuda
        except ImportError as e:
            raise LaunchError(f"pycuda is not installed ({e})") from None
        try:
            cuda.init()
            count = cuda.Device.count()
        except Exception as e:  # no driver, no device
            raise LaunchError(f"no CUDA device ({e})") from None
        if count == 0:
            raise LaunchError("no CUDA device")
        if not 0 <= index < count:
            raise LaunchError(f"no CUDA device cuda:{index} (found {count})")
        self._cuda = cuda
        self.index = index
        self._device = cuda.Device(index)
        self._ctx = self._device.retain_primary_context()
        self._activate()
        self._stream = cuda.Stream()
        major, minor = self._device.compute_capability()
        self.arch = f"sm_{major}{minor}"
        self.compute_capability = (major, minor)
        self.device = f"{self._device.name()} ({self.arch}, cuda:{index})"
        self.limits = self._read_limits(major)
        self.compiler = CudaCompiler(self.arch)
        self._modules: dict[str, Any] = {}  # source -> loaded module
        self._executables: dict[tuple[str, str], CudaExecutable] = {}

    def _read_limits(self, major: int) -> DeviceLimits:
        attr = self._cuda.device_attribute
        get = self._device.get_attribute
        dtypes = set(ALL_DTYPES)
        if major < 8:
            dtypes.discard(bf16)  # native bf16 arithmetic arrives with sm_80
        return DeviceLimits(
            max_cube_dim=(get(attr.MAX_BLOCK_DIM_X), get(attr.MAX_BLOCK_DIM_Y),
                          get(attr.MAX_BLOCK_DIM_Z)),
            max_units_per_cube=get(attr.MAX_THREADS_PER_BLOCK),
            max_cube_count=(get(attr.MAX_GRID_DIM_X), get(attr.MAX_GRID_DIM_Y),
                            get(attr.MAX_GRID_DIM_Z)),
            dtypes=frozenset(dtypes),
            atomic_dtypes=frozenset({i32, u32, f32}),
            plane_dim=get(attr.WARP_SIZE),
            max_shared_bytes=get(attr.MAX_SHARED_MEMORY_PER_BLOCK),
            features=tuple(sorted(d.name for d in dtypes)) + ("atomic_f32", "plane"),
        )

    # -- context ------------------------------------------------------------------------
    def _activate(self) -> None:
        """Makes this device's primary context current on the calling thread."""
        ctx = self._ctx
        cur = getattr(_tls, "ctx", None)
        if cur is ctx:
            return
        if cur is not None:
            self._cuda.Context.pop()
            _pushed.remove((threading.get_ident(), cur))
        ctx.push()
        _tls.ctx = ctx
        _pushed.append((threading.get_ident(), ctx))

    # -- memory -------------------------------------------------------------------------
    def _alloc(self, size: int, dtype: DType) -> _Buffer:
        self._activate()
        nbytes = size * dtype.itemsize
        alloc = self._cuda.mem_alloc(max(nbytes, 4))  # a zero-byte allocation is refused
        self._cuda.memset_d8_async(alloc, 0, max(nbytes, 4), self._stream)
        return _Buffer(alloc, nbytes)

    def _upload(self, flat: np.ndarray, dtype: DType) -> _Buffer:
        self._activate()
        nbytes = flat.nbytes
        alloc = self._cuda.mem_alloc(max(nbytes, 4))
        if nbytes:
            # Pageable source: the driver stages it before returning, so `flat` may go.
            self._cuda.memcpy_htod_async(alloc, flat, self._stream)
        return _Buffer(alloc, nbytes)

    def _download(self, tensor: DeviceTensor) -> np.ndarray:
        self._activate()
        buf: _Buffer = tensor.handle
        bf = tensor.dtype is bf16
        host = np.empty(tensor.buffer_len, np.uint16 if bf else tensor.dtype.numpy)
        self._sync_stream()
        if host.nbytes:
            self._cuda.memcpy_dtoh(host, buf.alloc)
        if bf:  # numpy has no bfloat16: widen to the f32 it stands for
            return (host.astype(np.uint32) << 16).view(np.float32)
        return host

    # -- kernels ------------------------------------------------------------------------
    def compile(self, kernel: ir.Kernel, abi: KernelABI, checked: bool) -> CudaExecutable:
        from ..codegen import emit
        from ..codegen.names import entry_name
        source = emit(kernel, "cuda", abi, checked)
        return self.load(source, entry_name(kernel.name, "cuda"), abi)

    def load(self, source: str, name: str, abi: KernelABI) -> CudaExecutable:
        """An executable for entry `name` of CUDA `source` following `abi` (compiled
        once per source in this process, and once per machine through the disk cache)."""
        key = (source, name)
        exe = self._executables.get(key)
        if exe is not None:
            return exe
        self._activate()
        module = self._modules.get(source)
        compiler = "memory"
        if module is None:
            cubin = self.compiler.compile(source)
            compiler = self.compiler.last_compiler
            module = self._cuda.module_from_buffer(cubin)
            self._modules[source] = module
        function = module.get_function(name)
        exe = CudaExecutable(function, name, source, abi, compiler)
        self._executables[key] = exe
        return exe

    def dispatch(self, executable: CudaExecutable, cube_count: tuple[int, int, int],
                 cube_dim: tuple[int, int, int], buffers: Sequence[DeviceTensor],
                 info: bytes) -> None:
        if _tls.__dict__.get("ctx") is not self._ctx:
            self._activate()
        params = executable.pack(buffers, info)
        try:
            if executable.launch is not None:
                executable.launch(cube_count, cube_dim, params, 0, self._stream)
            else:  # a PyCUDA without _launch_kernel: the public prepared path
                self._prepared_fallback(executable, cube_count, cube_dim, params)
        except self._cuda.Error as e:
            raise LaunchError(f"launching {executable.name} on {self.device} failed: "
                              f"{e}") from None

    def _prepared_fallback(self, exe: CudaExecutable, count, dim, params: bytes) -> None:
        fn = exe.function
        if getattr(fn, "arg_format", None) != f"{len(params)}s":
            fn.prepare(f"{len(params)}s")
        fn.prepared_async_call(count, dim, self._stream, params)

    def sync(self) -> None:
        self._activate()
        self._sync_stream()

    def _sync_stream(self) -> None:
        try:
            self._stream.synchronize()
        except self._cuda.Error as e:  # a kernel fault surfaces here
            raise LaunchError(f"a kernel on {self.device} failed: {e}") from None


def _pop_contexts() -> None:
    """At exit, leave PyCUDA's context stack as we found it (PyCUDA warns otherwise)."""
    me = threading.get_ident()
    for tid, _ in reversed(_pushed):
        if tid == me:
            try:
                import pycuda.driver as cuda
                cuda.Context.pop()
            except Exception:
                pass
    _pushed.clear()
    _tls.__dict__.pop("ctx", None)
    try:
        from pycuda.tools import clear_context_caches
        clear_context_caches()
    except Exception:
        pass


atexit.register(_pop_contexts)
