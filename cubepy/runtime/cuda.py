"""The cuda runtime: PyCUDA on the device's primary context.

- Context: the device's primary context (the one torch and CuPy use), pushed once per
  thread; clients of two devices switch it only when a call finds the other current.
- Memory: buffers come from a PyCUDA DeviceMemoryPool (a freed buffer goes back to the
  pool and the next allocation of its size class reuses it, as torch's caching
  allocator does: cudaMalloc and cudaFree cost hundreds of microseconds at 256 MB and
  cudaFree synchronises the device); `client.empty_cache()` returns the held blocks.
  Buffers are zeroed on allocation; uploads and zeroing go on the client's stream,
  downloads wait for it.
- Compilation: cuda_compile.py (NVRTC, else nvcc, with an on-disk cubin cache) then
  `module_from_buffer`; loaded modules and executables are found again by source while
  some kernel still uses them (weak references: they are unloaded with their kernels).
- Streams: the client's own PyCUDA stream (blocking, so ordered with the legacy default
  stream torch and CuPy use by default) unless `client.stream` names another; a launch
  whose arguments include torch (or CuPy) arrays runs on that library's current stream.
  Raw handles PyCUDA cannot launch on go through cuda_driver (ctypes on libcuda).
- Launch: the info struct travels BY VALUE after the buffer pointers. Pointers are 8
  bytes and the struct's alignment is at most 8, so appending its bytes right after the
  pointers reproduces the C parameter layout; one precompiled `struct.Struct` packs the
  whole parameter buffer and PyCUDA's `_launch_kernel` (what `prepared_async_call` ends
  in) queues it with cuLaunchKernel's CU_LAUNCH_PARAM_BUFFER_POINTER, asynchronously on
  one stream.
- Threads: a client may be shared by threads. The main thread makes the primary context
  current on its first call (`_activate`) and keeps it; other threads push it for each
  call and pop it after (`_in_context`: PyCUDA aborts the process when a thread ends
  with a context still pushed); module and executable caches are filled under
  the client's lock; launches and copies go to the one stream (the driver is
  thread-safe), so work from all threads runs in the order it was queued.
- Errors: a fault that poisons the context (an illegal address, a trap, ECC) marks the
  client lost; every later call raises LaunchError at once.
"""
from __future__ import annotations

import atexit
import functools
import re
import struct
import threading
import weakref
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..abi import KernelABI
from ..codegen.compiled import Compiled
from ..errors import LaunchError, missing_package
from ..ir.types import FP8_DTYPES, DType, bf16
from .base import Client, DeviceLimits, DeviceTensor
from .cuda_compile import CudaCompiler

if TYPE_CHECKING:  # (cached kernels launch without the IR)
    from concurrent.futures import Future

    from ..ir import nodes as ir

_tls = threading.local()  # .ctx: the context this module made current on this thread
_pushed: list = []  # (thread id, context) pairs pushed by this module, popped at exit


def _in_context(method):
    """Runs a CudaClient method with the client's primary context current. The main
    thread keeps it current from its first call on; any other thread (a thread pool,
    torch's autograd threads, the large-stack compile thread) pushes it for the call and
    pops it after: PyCUDA aborts the process when a thread ends with a context pushed."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if _tls.__dict__.get("ctx") is self._ctx:
            return method(self, *args, **kwargs)
        if threading.current_thread() is threading.main_thread():
            self._activate()
            return method(self, *args, **kwargs)
        outer = _tls.__dict__.get("ctx")  # another device's, pushed by a call further up
        self._ctx.push()
        _tls.ctx = self._ctx
        try:
            return method(self, *args, **kwargs)
        finally:
            self._cuda.Context.pop()
            _tls.ctx = outer
    return run
# CUDA errors after which the context is unusable for good (cuGetErrorString wording).
_STICKY = re.compile(r"illegal|launch[ _]failed|unspecified launch failure|misaligned|"
                     r"hardware stack|uncorrectable|\becc\b|assert|invalid program counter|"
                     r"address space|context[ _]is[ _]destroyed|launch[ _]timeout",
                     re.IGNORECASE)


class _Buffer:
    """A device allocation and its address (read on every launch, so kept as an int)."""

    __slots__ = ("alloc", "ptr", "nbytes", "ctx")

    def __init__(self, alloc, nbytes: int, ctx):
        self.alloc = alloc
        self.ptr = int(alloc)
        self.nbytes = nbytes
        self.ctx = ctx

    def __del__(self):
        # PyCUDA frees an allocation only where its context is current, and refuses to
        # make it current on another thread than the one that made the context ("could
        # not be cleaned up": a leak). A thread without it current pushes it to free.
        alloc = self.alloc
        if _tls.__dict__.get("ctx") is self.ctx:
            return  # PyCUDA frees it with the allocation object
        try:
            self.ctx.push()
        except Exception:  # interpreter shutdown, a lost context: PyCUDA's own cleanup
            return
        try:
            alloc.free()
        except Exception:
            pass
        finally:
            self.ctx.pop()


class _LoadedModule:
    """A loaded PyCUDA module and its cubin; executables hold it, the client's index
    refers to it weakly, so the module is unloaded once no executable of it is left."""

    __slots__ = ("module", "cubin", "__weakref__")

    def __init__(self, module, cubin: bytes | None):
        self.module = module
        self.cubin = cubin  # for launches on raw stream handles (cuda_driver.RawFunction)


class ForeignBuffer:
    """Device memory cubepy does not own (another library's array, or a view of a cubepy
    buffer): its address, and the object that keeps the memory alive."""

    __slots__ = ("ptr", "nbytes", "owner")

    def __init__(self, ptr: int, nbytes: int, owner: Any):
        self.ptr = ptr
        self.nbytes = nbytes
        self.owner = owner


class CudaExecutable:
    """A loaded kernel and what launching it needs."""

    __slots__ = ("function", "launch", "pack", "name", "source", "abi", "compiler",
                 "module", "raw", "fast_math", "shared", "__weakref__")

    def __init__(self, function, name: str, source: str, abi: KernelABI, compiler: str,
                 module: _LoadedModule | None = None, fast_math: bool = True,
                 shared: int = 0):
        self.fast_math = fast_math  # False: compiled without multiply-add contraction
        self.shared = shared  # bytes of dynamic shared memory every launch gives
        self.module = module  # keeps the module (and its cubin) while this executable lives
        self.function = function
        self.raw = None  # a cuda_driver.RawFunction, made on a first raw-stream launch
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
    _after_loss = ("such a fault poisons the process's CUDA context: restart the process "
                   "(for a kernel fault, run it with launch() to find the access)")

    def __init__(self, index: int = 0):
        super().__init__()
        try:
            import pycuda.driver as cuda
        except ImportError as e:
            raise missing_package("the cuda runtime", "pycuda", "cuda", e,
                                  " (on a machine with an NVIDIA driver and the CUDA "
                                  "toolkit)") from None
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
        self._pool = None  # a DeviceMemoryPool, made on the first allocation
        self._stream = _in_context(lambda self: cuda.Stream())(self)
        self._own_stream = self._stream
        self._raw_stream: int | None = None  # a stream handle set through `stream`
        self._foreign_streams: set[int] = set()  # launched on since the last sync
        major, minor = self._device.compute_capability()
        self.arch = f"sm_{major}{minor}"
        self.compute_capability = (major, minor)
        self.device = f"{self._device.name()} ({self.arch}, cuda:{index})"
        self.limits = self._read_limits(major)
        self.compiler = CudaCompiler(self.arch)
        # Weak: entries live as long as some kernel's caches hold the executable.
        self._modules: weakref.WeakValueDictionary[tuple[str, bool], _LoadedModule] = \
            weakref.WeakValueDictionary()
        self._executables: weakref.WeakValueDictionary[tuple[str, str, bool, int],
                                                       CudaExecutable] = \
            weakref.WeakValueDictionary()
        # (source, fast_math) -> the compile compile_ahead started, until `load` takes it
        self._ahead: dict[tuple[str, bool], Future[tuple[bytes, str]]] = {}

    def _read_limits(self, major: int) -> DeviceLimits:
        attr = self._cuda.device_attribute
        get = self._device.get_attribute
        from ..targets import get_target
        record = get_target(self.target)
        dtypes = set(record.dtype_set())
        if major < 8:
            dtypes.discard(bf16)  # native bf16 arithmetic arrives with sm_80
        return DeviceLimits(
            max_cube_dim=(get(attr.MAX_BLOCK_DIM_X), get(attr.MAX_BLOCK_DIM_Y),
                          get(attr.MAX_BLOCK_DIM_Z)),
            max_units_per_cube=get(attr.MAX_THREADS_PER_BLOCK),
            max_cube_count=(get(attr.MAX_GRID_DIM_X), get(attr.MAX_GRID_DIM_Y),
                            get(attr.MAX_GRID_DIM_Z)),
            dtypes=frozenset(dtypes),
            atomic_dtypes=record.atomic_dtype_set(),
            plane_dim=get(attr.WARP_SIZE),
            max_shared_bytes=_max_shared_bytes(attr, get),
            features=tuple(sorted(d.name for d in dtypes)) + ("atomic_f32", "plane"),
        )

    # -- context ------------------------------------------------------------------------
    def _activate(self) -> None:
        """Makes this device's primary context current on the main thread, for good (other
        threads go through _in_context)."""
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

    def _cuda_error(self, error: Exception, what: str) -> LaunchError:
        """The LaunchError for a failed driver call; a fault that poisons the context
        marks the client lost (CUDA then fails every later call the same way)."""
        if _STICKY.search(str(error)):
            return self._mark_lost(f"while {what}: {error}")
        return LaunchError(f"{what} on {self.device} failed: {error}")

    # -- streams ------------------------------------------------------------------------
    @property
    def stream(self) -> int:
        """The CUstream handle this client queues work on (0: the legacy default stream).
        Set it to an int handle, an object with `cuda_stream` (torch) or `__cuda_stream__`
        (the CUDA stream protocol), a PyCUDA Stream, or None for the client's own stream."""
        return self._raw_stream if self._raw_stream is not None else self._stream.handle

    @stream.setter
    def stream(self, value) -> None:
        if value is None or value is self._own_stream:
            self._stream, self._raw_stream = self._own_stream, None
            return
        if isinstance(value, self._cuda.Stream):
            self._stream, self._raw_stream = value, None
            return
        self._raw_stream = _stream_handle(value)

    def _launch_raw(self, exe: "CudaExecutable", count, dim, params: bytes, handle: int):
        """A launch on a stream handle PyCUDA has no Stream object for."""
        from . import cuda_driver
        if exe.raw is None:
            cubin = exe.module.cubin if exe.module is not None else None
            if cubin is None:
                cubin = self.compiler.compile(exe.source, exe.fast_math)
            exe.raw = cuda_driver.RawFunction(cubin, exe.name, exe.shared)
        exe.raw.launch(count, dim, params, handle, exe.shared)

    @_in_context
    def _make_stream_wait(self, consumer: int) -> None:
        """Work the consumer queues on stream handle `consumer` waits for this client's."""
        from . import cuda_driver
        self._activate()
        for producer in {self._own_stream.handle, self.stream, *self._foreign_streams}:
            if producer != consumer:
                cuda_driver.stream_wait(consumer, producer)

    def _memory_stream(self):
        """The PyCUDA stream for copies and zeroing, or None when `stream` is a raw handle
        (then those go through cuda_driver on the handle)."""
        return self._stream if self._raw_stream is None else None

    # -- memory -------------------------------------------------------------------------
    def _device_alloc(self, nbytes: int):
        """Device memory of at least `nbytes` (4 at least: zero bytes are refused) from
        the client's pool, made on first use in the client's context."""
        pool = self._pool
        if pool is None:
            from pycuda.tools import DeviceMemoryPool
            pool = self._pool = DeviceMemoryPool()
        return pool.allocate(max(nbytes, 4))

    def empty_cache(self) -> None:
        """Returns the device memory the pool holds for reuse to the driver (freed
        tensors' blocks; tensors still alive keep theirs)."""
        if self._pool is not None:
            self._in_context_call(self._pool.free_held)

    @_in_context
    def _in_context_call(self, fn):
        self._activate()
        return fn()

    @_in_context
    def _alloc_uninitialised(self, size: int, dtype: DType) -> _Buffer:
        """A buffer without the zeroing (for kernel outputs every element of which is
        written before anything reads it)."""
        self.check_alive()
        self._activate()
        nbytes = size * dtype.itemsize
        try:
            return _Buffer(self._device_alloc(nbytes), nbytes, self._ctx)
        except self._cuda.Error as e:
            raise self._cuda_error(e, f"allocating {nbytes} bytes") from None

    @_in_context
    def _alloc(self, size: int, dtype: DType) -> _Buffer:
        self.check_alive()
        self._activate()
        nbytes = size * dtype.itemsize
        try:
            alloc = self._device_alloc(nbytes)
            stream = self._memory_stream()
            if stream is None:
                from . import cuda_driver
                cuda_driver.memset_zero_async(int(alloc), max(nbytes, 4), self._raw_stream)
            else:
                self._cuda.memset_d8_async(alloc, 0, max(nbytes, 4), stream)
        except self._cuda.Error as e:
            raise self._cuda_error(e, f"allocating {nbytes} bytes") from None
        return _Buffer(alloc, nbytes, self._ctx)

    @_in_context
    def _upload(self, flat: np.ndarray, dtype: DType) -> _Buffer:
        self.check_alive()
        self._activate()
        nbytes = flat.size * dtype.itemsize  # (bf16 and fp8 values arrive as f32)
        try:
            alloc = self._device_alloc(nbytes)
            buf = _Buffer(alloc, nbytes, self._ctx)
            self._write(buf, flat, dtype)
        except self._cuda.Error as e:
            raise self._cuda_error(e, f"uploading {nbytes} bytes") from None
        return buf

    @_in_context
    def _write(self, handle, flat: np.ndarray, dtype: DType) -> None:
        self._activate()
        if dtype is bf16:  # f32 values -> bf16 bits, rounded to nearest even
            bits = np.ascontiguousarray(flat, np.float32).view(np.uint32)
            flat = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        elif dtype in FP8_DTYPES:  # values -> 8-bit float bits, as CUDA's cast rounds
            from .. import fp8
            flat = fp8.encode(flat, dtype.name)
        flat = np.ascontiguousarray(flat)
        if not flat.nbytes:
            return
        # Pageable source: the driver stages it before returning, so `flat` may go.
        stream = self._memory_stream()
        if stream is None:
            from . import cuda_driver
            cuda_driver.memcpy_htod_async(handle.ptr, flat, self._raw_stream)
        else:
            self._cuda.memcpy_htod_async(handle.ptr, flat, stream)

    def _wrap_pointer(self, ptr: int, nbytes: int, owner: Any) -> ForeignBuffer:
        return ForeignBuffer(ptr, nbytes, owner)

    def _view_handle(self, handle, offset: int, length: int, dtype: DType) -> ForeignBuffer:
        return ForeignBuffer(handle.ptr + offset * dtype.itemsize, length * dtype.itemsize,
                             handle)

    def _data_pointer(self, handle) -> int:
        return handle.ptr

    @_in_context
    def _download(self, tensor: DeviceTensor) -> np.ndarray:
        self.check_alive()
        self._activate()
        buf: _Buffer = tensor.handle
        bf = tensor.dtype is bf16
        f8 = tensor.dtype in FP8_DTYPES
        host = np.empty(tensor.buffer_len,
                        np.uint16 if bf else np.uint8 if f8 else tensor.dtype.numpy)
        self._sync_stream()
        if host.nbytes:
            try:
                self._cuda.memcpy_dtoh(host, buf.ptr)
            except self._cuda.Error as e:
                raise self._cuda_error(e, "downloading a tensor") from None
        if bf:  # numpy has no bfloat16: widen to the f32 it stands for
            return (host.astype(np.uint32) << 16).view(np.float32)
        if f8:  # nor 8-bit floats
            from .. import fp8
            return fp8.decode(host, tensor.dtype.name)
        return host

    # -- kernels ------------------------------------------------------------------------
    def _compile_coming(self) -> None:
        """A kernel is about to be compiled: start loading NVRTC meanwhile."""
        from .cuda_compile import start_loading_nvrtc
        start_loading_nvrtc()

    def compile_ahead(self, compiled: Compiled) -> None:
        """Starts compiling `compiled`'s source on the compile threads (NVRTC runs
        without the GIL), so that it compiles while the caller generates the next
        kernel; `load` of the same source takes the cubin."""
        key = (compiled.source, compiled.fast_math)
        with self._lock:
            if key not in self._modules and key not in self._ahead:
                from .cuda_compile import compile_ahead
                self._ahead[key] = compile_ahead(self.compiler, *key)

    def compile(self, kernel: ir.Kernel, abi: KernelABI, checked: bool,
                compiled: Compiled | None = None) -> CudaExecutable:
        """Loads the kernel's CUDA C (generated now unless `compiled` carries it)."""
        if compiled is None:
            from ..codegen import generate
            compiled = generate(kernel, "cuda", abi, checked)
        return self.load(compiled.source, compiled.entry, abi, compiled.fast_math,
                         compiled.dynamic_shared_bytes)

    @_in_context
    def load(self, source: str, name: str, abi: KernelABI,
             fast_math: bool = True, dynamic_shared: int = 0) -> CudaExecutable:
        """An executable for entry `name` of CUDA `source` following `abi` (compiled
        once per source in this process, and once per machine through the disk cache;
        `fast_math=False` compiles without multiply-add contraction). `dynamic_shared`:
        the bytes of `extern __shared__` memory every launch gives (over 48 KB the
        function is first allowed that much, CUDA's opt-in)."""
        key = (source, name, fast_math, dynamic_shared)
        exe = self._executables.get(key)
        if exe is not None:
            return exe
        self.check_alive()
        self._activate()
        with self._lock:  # one compile per source, whichever threads ask at once
            exe = self._executables.get(key)
            if exe is None:
                exe = self._load_locked(source, name, abi, fast_math, dynamic_shared)
                self._executables[key] = exe
            return exe

    def _load_locked(self, source: str, name: str, abi: KernelABI,
                     fast_math: bool, dynamic_shared: int = 0) -> CudaExecutable:
        loaded = self._modules.get((source, fast_math))
        compiler = "memory"
        try:
            if loaded is None:
                cubin, compiler = self._compiled_ahead(source, fast_math)
                if cubin is None:
                    cubin = self.compiler.compile(source, fast_math)
                    compiler = self.compiler.last_compiler
                loaded = _LoadedModule(self._cuda.module_from_buffer(cubin), cubin)
                self._modules[(source, fast_math)] = loaded
            function = loaded.module.get_function(name)
            if dynamic_shared:  # over 48 KB needs the function's opt-in
                function.set_attribute(
                    self._cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic_shared)
        except self._cuda.Error as e:
            raise self._cuda_error(e, f"loading {name}") from None
        return CudaExecutable(function, name, source, abi, compiler, loaded, fast_math,
                              dynamic_shared)

    def _compiled_ahead(self, source: str, fast_math: bool) -> tuple[bytes | None, str]:
        """The cubin compile_ahead made of `source` (waiting for it), or None when it
        made none (a failed compile runs again in `load`, which raises its error)."""
        ahead = self._ahead.pop((source, fast_math), None)
        if ahead is not None:
            try:
                return ahead.result()
            except Exception:
                pass
        return None, ""

    def dispatch(self, executable: CudaExecutable, cube_count: tuple[int, int, int],
                 cube_dim: tuple[int, int, int], buffers: Sequence[DeviceTensor],
                 info: bytes, stream: int | None = None) -> None:
        """Queues the launch on `stream` (a CUstream handle, given when the arguments ask
        for one: torch's current stream) or else on the client's stream."""
        if self.lost is not None:
            self.check_alive()
        if _tls.__dict__.get("ctx") is not self._ctx:  # not the main thread's fast path
            if threading.current_thread() is not threading.main_thread():
                return _in_context(CudaClient.dispatch)(self, executable, cube_count,
                                                        cube_dim, buffers, info, stream)
            self._activate()
        params = executable.pack(buffers, info)
        try:
            if stream is None and self._raw_stream is None:
                pystream = self._stream
            elif stream == 0 or (stream is None and self._raw_stream == 0):
                pystream = None  # the legacy default stream, which PyCUDA launches on
                self._foreign_streams.add(0)  # sync() waits for it too
            else:
                self._launch_foreign(executable, cube_count, cube_dim, params,
                                     self._raw_stream if stream is None else stream)
                return
            if executable.launch is not None:
                executable.launch(cube_count, cube_dim, params, executable.shared, pystream)
            else:  # a PyCUDA without _launch_kernel: the public prepared path
                self._prepared_fallback(executable, cube_count, cube_dim, params, pystream)
        except self._cuda.Error as e:
            raise self._cuda_error(e, f"launching {executable.name}") from None

    def _launch_foreign(self, exe: CudaExecutable, count, dim, params: bytes,
                        handle: int) -> None:
        if handle == self._stream.handle and self._raw_stream is None:
            if exe.launch is not None:
                exe.launch(count, dim, params, exe.shared, self._stream)
            else:
                self._prepared_fallback(exe, count, dim, params, self._stream)
            return
        from .cuda_driver import DriverError
        if handle not in self._foreign_streams:
            # Buffers zeroed or uploaded on the client's stream must be ready first; a
            # stream handle is checked once per sync (later uploads: see docs).
            self._make_stream_wait(handle)
            self._foreign_streams.add(handle)
        try:
            self._launch_raw(exe, count, dim, params, handle)
        except DriverError as e:
            raise LaunchError(f"launching {exe.name} on {self.device} (stream {handle:#x}) "
                              f"failed: {e}") from None

    def _prepared_fallback(self, exe: CudaExecutable, count, dim, params: bytes,
                           stream) -> None:
        fn = exe.function
        if getattr(fn, "arg_format", None) != f"{len(params)}s":
            fn.prepare(f"{len(params)}s")
        fn.prepared_async_call(count, dim, stream, params, shared_size=exe.shared)

    @_in_context
    def sync(self) -> None:
        """Waits for the client's stream and every stream it launched on since."""
        self.check_alive()
        self._activate()
        self._sync_stream()

    def _sync_stream(self) -> None:
        from . import cuda_driver
        try:
            if self._raw_stream is None:
                self._stream.synchronize()
            else:
                cuda_driver.stream_synchronize(self._raw_stream)
            for handle in self._foreign_streams:
                cuda_driver.stream_synchronize(handle)
            self._foreign_streams.clear()
        except self._cuda.Error as e:  # a kernel fault surfaces here
            raise self._cuda_error(e, "running a kernel") from None
        except cuda_driver.DriverError as e:
            raise self._cuda_error(e, "running a kernel") from None


def _max_shared_bytes(attr, get) -> int:
    """Shared memory one block may use: the opt-in maximum where the device has one
    (227 KB on sm_90), which generated kernels reach through dynamic shared memory."""
    optin = getattr(attr, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", None)
    default = get(attr.MAX_SHARED_MEMORY_PER_BLOCK)
    return max(default, get(optin)) if optin is not None else default


def _stream_handle(value) -> int:
    """A CUstream handle from an int or a stream object of torch, CuPy, PyCUDA or the CUDA
    stream protocol (`__cuda_stream__` -> (version, handle))."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if hasattr(value, "__cuda_stream__"):
        return int(value.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, PyCUDA
        if isinstance(getattr(value, attr, None), int):
            return int(getattr(value, attr))
    raise TypeError(f"client.stream: {value!r} is not a CUDA stream (an int handle, or an "
                    f"object with cuda_stream / __cuda_stream__)")


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
