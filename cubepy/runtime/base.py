"""What every runtime provides: a Client that owns device memory and runs kernels, and
DeviceTensor, a buffer with a shape and strides.

A runtime subclasses Client and implements `_alloc`, `_upload`, `_download`, `compile`,
`dispatch` and `sync`. `kernel.launch` (cubepy/kernel.py) checks the arguments, builds
the info struct (cubepy/abi.py) and calls `compile` once per specialisation, then
`dispatch` on every launch.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..abi import KernelABI, line_access_bytes
from ..errors import LaunchError, public_entry
from ..ir.types import F32_ON_HOST, DType, dtype_from_name, dtype_from_numpy

if TYPE_CHECKING:
    from ..ir import nodes as ir


@dataclass(frozen=True)
class DeviceLimits:
    """What a device accepts; `kernel.launch` checks these before running anything."""

    max_cube_dim: tuple[int, int, int]
    max_units_per_cube: int
    max_cube_count: tuple[int, int, int]
    dtypes: frozenset  # DTypes usable in kernels and buffers
    atomic_dtypes: frozenset = frozenset()  # DTypes usable with atomics
    plane_dim: int = 32  # the plane size kernels see (PLANE_DIM)
    max_shared_bytes: int = 48 * 1024
    features: tuple[str, ...] = ()


class DeviceTensor:
    """A buffer on one client with a shape and strides (in elements).

    `t[i]` in a kernel indexes the flat buffer; shape and strides are metadata, as in
    CubeCL. `buffer_len` counts the buffer's elements; `len` is the number of elements the
    shape spans (product of the shape) divided by the line size. `line_aligned`: the
    buffer's address is a multiple of `line_access_bytes` (always true at line size 1),
    so kernels may access its lines as whole vectors.
    """

    __slots__ = ("client", "handle", "shape", "strides", "dtype", "buffer_len",
                 "line_size", "len", "line_aligned")

    def __init__(self, client: "Client", handle: Any, shape: Sequence[int],
                 strides: Sequence[int], dtype: DType, buffer_len: int, line_size: int = 1):
        self.client = client
        self.handle = handle
        self.shape = check_shape(shape)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = dtype
        self.buffer_len = int(buffer_len)
        self.line_size = line_size
        _check_view(self.shape, self.strides, self.buffer_len)
        self.len = math.prod(self.shape) // line_size
        # whether kernels may read and write its lines as single vector accesses
        self.line_aligned = line_size == 1 or client._aligned(
            handle, line_access_bytes(line_size, dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return self.buffer_len * self.dtype.itemsize

    def numpy(self) -> np.ndarray:
        """Waits for the work that writes this buffer and copies it back, with the
        tensor's shape and strides."""
        flat = self.client._download(self)
        itemsize = flat.dtype.itemsize
        if self.strides == _contiguous_strides(self.shape):
            return flat[: int(np.prod(self.shape, dtype=np.int64))].reshape(self.shape)
        view = np.lib.stride_tricks.as_strided(
            flat, self.shape, tuple(s * itemsize for s in self.strides))
        return np.array(view)

    @public_entry
    def with_line_size(self, n: int) -> "DeviceTensor":
        """The same buffer, read as lines (vectors) of `n` elements."""
        if n < 1 or self.shape and self.shape[-1] % n:
            raise LaunchError(f"line size {n} does not divide the last dimension "
                              f"{self.shape[-1] if self.shape else 1}")
        return DeviceTensor(self.client, self.handle, self.shape, self.strides, self.dtype,
                            self.buffer_len, n)

    def to_numpy(self) -> np.ndarray:
        """Alias of numpy()."""
        return self.numpy()

    def __repr__(self) -> str:
        line = f", line_size={self.line_size}" if self.line_size != 1 else ""
        return (f"DeviceTensor(shape={self.shape}, dtype={self.dtype}, "
                f"device={self.client.device_name!r}, strides={self.strides}{line})")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- exchange with other libraries (cubepy/interop.py) ------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (cpu and cuda)."""
        from ..interop import dlpack_capsule
        return dlpack_capsule(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        from ..interop import dlpack_device
        return dlpack_device(self)

    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3 of the CUDA array interface (cuda tensors only)."""
        from ..interop import cuda_array_interface
        return cuda_array_interface(self)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """A view on cpu, a download elsewhere (np.asarray(t))."""
        from ..interop import array
        return array(self, dtype, copy)

    # -- views and writes -----------------------------------------------------------------
    def is_contiguous(self) -> bool:
        return self.strides == _contiguous_strides(self.shape)

    def reshape(self, *shape) -> "DeviceTensor":
        """The same memory with another shape (contiguous tensors; never copies). One
        size may be -1."""
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(
            shape[0], (int, np.integer)) else tuple(shape)
        shape = tuple(int(s) for s in shape)
        size = int(np.prod(self.shape, dtype=np.int64))
        if shape.count(-1) > 1 or any(s < -1 for s in shape):
            raise ValueError(f"invalid shape {shape}")
        if -1 in shape:
            rest = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
            if rest == 0 or size % rest:
                raise ValueError(f"cannot reshape {self.shape} to {shape}")
            shape = tuple(size // rest if s == -1 else s for s in shape)
        if int(np.prod(shape, dtype=np.int64)) != size:
            raise ValueError(f"cannot reshape {self.shape} ({size} elements) to {shape}")
        if not self.is_contiguous():
            raise ValueError(f"reshape/view needs a contiguous tensor (strides "
                             f"{self.strides} for shape {self.shape}); cubepy never copies "
                             f"here")
        return DeviceTensor(self.client, self.handle, shape, _contiguous_strides(shape),
                            self.dtype, self.buffer_len, 1)

    view = reshape

    def __getitem__(self, key) -> "DeviceTensor":
        """`t[a:b]` and `t[a:b:step]` (step > 0): a view along the first dimension."""
        if not isinstance(key, slice) or not self.shape:
            raise TypeError("cubepy tensors support slicing t[a:b] along the first "
                            "dimension (a view); index elements inside kernels")
        if self.line_size != 1:
            raise TypeError("slice the tensor before with_line_size()")
        start, stop, step = key.indices(self.shape[0])
        if step < 1:
            raise ValueError("a slice step must be positive")
        from ..interop import buffer_extent
        shape = (len(range(start, stop, step)),) + self.shape[1:]
        strides = (self.strides[0] * step,) + self.strides[1:]
        length = buffer_extent(shape, strides)
        offset = start * self.strides[0] if length else 0
        handle = self.client._view_handle(self.handle, offset, length, self.dtype)
        return DeviceTensor(self.client, handle, shape, strides, self.dtype, length)

    def fill_(self, value) -> "DeviceTensor":
        """Sets every element the tensor's shape covers to `value`; returns self."""
        self.client._write_view(self, np.full(self.shape, value, _host_dtype(self.dtype)))
        return self

    def zero_(self) -> "DeviceTensor":
        return self.fill_(0)

    def copy_(self, other) -> "DeviceTensor":
        """Copies `other` (a cubepy tensor, a numpy array or any array numpy can read,
        broadcast to this shape) into this tensor; returns self."""
        host = other.numpy() if isinstance(other, DeviceTensor) else np.asarray(other)
        try:
            values = np.broadcast_to(host, self.shape)
        except ValueError:
            raise ValueError(f"copy_: shape {host.shape} does not broadcast to "
                             f"{self.shape}") from None
        self.client._write_view(self, values.astype(_host_dtype(self.dtype), copy=False))
        return self


def _host_dtype(dtype: DType):
    """The numpy dtype holding this dtype's values on the host (f32 for bf16 and the
    8-bit floats, which numpy lacks)."""
    return np.float32 if dtype in F32_ON_HOST else dtype.numpy


MAX_DIM = 2**32 - 1  # shapes and strides travel as u32 in the info struct


def check_shape(shape) -> tuple[int, ...]:
    """`shape` as a tuple of ints, or LaunchError for anything that is not a shape:
    negative sizes, sizes beyond u32 (the info struct's type), non-integers."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise LaunchError(f"a shape is an int or a sequence of ints, not {shape!r}",
                          "shape") from None
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise LaunchError(f"shape {shape!r}: {d!r} is not an int", "shape")
        if not 0 <= d <= MAX_DIM:
            raise LaunchError(f"shape {shape!r}: size {d} is outside 0..{MAX_DIM}",
                              "shape")
    return tuple(int(d) for d in dims)


def _check_view(shape: tuple, strides: tuple, buffer_len: int) -> None:
    """Refuses a shape and strides that address elements outside the buffer."""
    if len(strides) != len(shape):
        raise LaunchError(f"strides {strides} do not match shape {shape} (one stride per "
                          f"dimension)", "strides")
    if buffer_len < 0:
        raise LaunchError(f"buffer_len {buffer_len} is negative", "buffer_len")
    if any(s < 0 or s > MAX_DIM for s in strides):
        raise LaunchError(f"strides {strides}: each stride is in 0..{MAX_DIM} elements",
                          "strides")
    if 0 in shape:
        return  # addresses nothing
    last = sum((d - 1) * s for d, s in zip(shape, strides))
    if last >= buffer_len:
        raise LaunchError(f"shape {shape} with strides {strides} reaches element {last}, "
                          f"outside the buffer of {buffer_len} elements", "strides")


def _contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


class Client:
    """A device and the work queued on it. Get one with `cubepy.client(name)`."""

    runtime: str = ""  # "cuda", "wgpu" or "cpu"
    target: str = ""  # code generation target: "cuda", "wgsl" or "cpu"
    device: str = ""  # human-readable device description
    limits: DeviceLimits
    lost: str | None = None  # why the device is unusable, once it is (see check_alive)
    # What a user can do after a loss (the cuda runtime says otherwise).
    _after_loss = ("create a new client (cubepy.client(name) makes one) and upload the "
                   "data again")

    def __init__(self) -> None:
        # Held around everything that touches the client's shared mutable state (open
        # command recording, staging buffers, caches): clients are shared by threads.
        self._lock = threading.RLock()

    def check_alive(self) -> None:
        """Raises LaunchError when the device was lost: every call after a loss fails
        at once instead of reaching (and possibly hanging in) the driver."""
        if self.lost is not None:
            raise self._lost_error()

    def _mark_lost(self, reason: str) -> LaunchError:
        """Records that the device is unusable; the LaunchError to raise now."""
        self.lost = reason
        return self._lost_error()

    def _lost_error(self) -> LaunchError:
        return LaunchError(f"the {self.runtime} device {self.device!r} was lost "
                           f"({self.lost}); {self._after_loss}")

    # -- memory -----------------------------------------------------------------------
    @public_entry
    def tensor(self, array, dtype=None) -> DeviceTensor:
        """Uploads a numpy array (any strides; stored contiguous) and keeps its shape.
        `dtype` (a DType or its name) converts it on the way (numpy's cast; to bf16,
        e4m3 or e5m2, which numpy lacks, rounded to nearest even, the 8-bit floats
        saturating): `client.tensor(x, cubepy.e4m3)`."""
        array = np.asarray(array)
        if dtype is None:
            dtype = self._dtype_of(array.dtype)
        else:
            dtype = self._check_dtype(dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                array = array.astype(_host_dtype(dtype), copy=False)
        data = array if array.flags.c_contiguous else np.ascontiguousarray(array)  # keeps 0-d
        handle = self._allocating(lambda: self._upload(data.reshape(-1), dtype),
                                  data.size, dtype)
        return DeviceTensor(self, handle, data.shape, _contiguous_strides(data.shape),
                            dtype, max(data.size, 0))

    @public_entry
    def empty(self, shape, dtype: DType) -> DeviceTensor:
        """A new tensor with unspecified contents (zeroed on every runtime today)."""
        return self.zeros(shape, dtype)

    @public_entry
    def zeros(self, shape, dtype: DType) -> DeviceTensor:
        """A new zero-filled tensor; `dtype` is a DType, its name or a numpy dtype."""
        shape = check_shape(shape)
        dtype = self._check_dtype(dtype)
        size = math.prod(shape)
        handle = self._allocating(lambda: self._alloc(size, dtype), size, dtype)
        return DeviceTensor(self, handle, shape, _contiguous_strides(shape), dtype, size)

    def empty_cache(self) -> None:
        """Returns memory held for reuse to the device (the cuda runtime pools freed
        buffers); a no-op where nothing is held."""

    def _empty_uninitialised(self, shape, dtype: DType) -> DeviceTensor:
        """A tensor whose contents are unspecified, for a kernel that writes every
        element before anything reads it (skips the zeroing where a runtime can)."""
        size = math.prod(shape)
        handle = self._allocating(lambda: self._alloc_uninitialised(size, dtype), size, dtype)
        return DeviceTensor(self, handle, shape, _contiguous_strides(shape), dtype, size)

    def _alloc_uninitialised(self, size: int, dtype: DType) -> Any:
        return self._alloc(size, dtype)

    def _allocating(self, make, size: int, dtype: DType) -> Any:
        """`make()`, with running out of memory reported as a LaunchError."""
        self.check_alive()
        try:
            return make()
        except (MemoryError, OverflowError, ValueError) as e:
            raise LaunchError(f"cannot allocate a {dtype.name} tensor of {size} elements "
                              f"on {self.device}: {e or type(e).__name__}") from None

    def from_dlpack(self, array) -> DeviceTensor:
        """A cubepy tensor viewing the memory of `array` (anything exporting DLPack, or on
        cuda `__cuda_array_interface__`), which stays alive as long as the view."""
        from ..interop import to_tensor
        tensor, _ = to_tensor(self, array, "array")
        if tensor is None:
            raise LaunchError(f"{type(array).__name__} exports neither DLPack nor "
                              f"__cuda_array_interface__; use client.tensor(...) for a copy")
        return tensor

    @property
    def device_name(self) -> str:
        """"cpu", "cuda:0", "wgpu:0"."""
        index = getattr(self, "index", None)
        return self.runtime if index is None else f"{self.runtime}:{index}"

    def _write_view(self, tensor: DeviceTensor, values: np.ndarray) -> None:
        """Writes `values` (tensor.shape, host dtype) into the elements the tensor's shape
        and strides cover, leaving the rest of the buffer as it is."""
        if tensor.is_contiguous() and tensor.buffer_len == values.size:
            flat = np.ascontiguousarray(values).reshape(-1)
        else:
            flat = np.array(self._download(tensor)[:tensor.buffer_len])
            item = flat.itemsize
            np.lib.stride_tricks.as_strided(
                flat, tensor.shape, tuple(s * item for s in tensor.strides))[...] = values
        self._write(tensor.handle, flat, tensor.dtype)

    def _view_handle(self, handle: Any, offset: int, length: int, dtype: DType) -> Any:
        """A handle for `length` elements of `handle` from element `offset` (no copy)."""
        raise LaunchError(f"the {self.runtime} runtime cannot make views of a buffer "
                          f"(slicing); copy the slice with client.tensor(t.numpy()[a:b])")

    def _write(self, handle: Any, flat: np.ndarray, dtype: DType) -> None:
        """Overwrites the start of buffer `handle` with the 1-D host array `flat`."""
        raise NotImplementedError

    def _data_pointer(self, handle: Any) -> int:
        """The address of a buffer's first element (cpu: host, cuda: device)."""
        raise BufferError(f"the {self.runtime} runtime cannot share its memory")

    def _aligned(self, handle: Any, nbytes: int) -> bool:
        """Whether buffer `handle` starts at a multiple of `nbytes` (a power of two).
        Runtimes that hand out addresses check them; the others bind every buffer from
        its start, which is aligned."""
        try:
            return self._data_pointer(handle) % nbytes == 0
        except BufferError:
            return True

    def _dtype_of(self, np_dtype) -> DType:
        try:
            dtype = dtype_from_numpy(np_dtype)
        except TypeError as e:
            raise LaunchError(str(e)) from None
        return self._check_dtype(dtype)

    def _check_dtype(self, dtype) -> DType:
        """`dtype` (a DType, its name such as "f32", or a numpy dtype) if the device has
        it."""
        if not isinstance(dtype, DType):
            try:
                dtype = (dtype_from_name(dtype) if isinstance(dtype, str)
                         else dtype_from_numpy(dtype))
            except (KeyError, TypeError):
                raise LaunchError(f"{dtype!r} is not a cubepy dtype (f32, u32, ...)") from None
        if dtype not in self.limits.dtypes:
            raise LaunchError(f"the {self.runtime} device {self.device!r} does not support "
                              f"{dtype.name}")
        return dtype

    # -- to implement per runtime --------------------------------------------------------
    def _alloc(self, size: int, dtype: DType) -> Any:
        """A zeroed buffer of `size` elements."""
        raise NotImplementedError

    def _upload(self, flat: np.ndarray, dtype: DType) -> Any:
        """A buffer holding a copy of the contiguous 1-D array `flat`."""
        raise NotImplementedError

    def _download(self, tensor: DeviceTensor) -> np.ndarray:
        """The whole buffer as a 1-D numpy array, after all work writing it is done."""
        raise NotImplementedError

    def _compile_coming(self) -> None:
        """Told, before the frontend runs, that a kernel is about to be compiled for this
        client (no cached specialisation): a runtime may start loading its device
        compiler then, overlapping the frontend and code generation."""

    def compile(self, kernel: ir.Kernel, abi: KernelABI, checked: bool,
                compiled: Any = None) -> Any:
        """An executable for a specialised kernel (after passes). Called once per
        specialisation; the caller caches the result. `compiled`, when given, is the
        kernel's code already generated for this client's target (a codegen.Compiled):
        the runtime uses it instead of generating the source again."""
        raise NotImplementedError

    def compile_ahead(self, compiled: Any) -> None:
        """Starts building the executable of `compiled` (a codegen.Compiled for this
        client's target) where the runtime can do so in the background; the `compile`
        of the same code then takes the result. Nothing, by default."""

    def dispatch(self, executable: Any, cube_count: tuple[int, int, int],
                 cube_dim: tuple[int, int, int], buffers: Sequence[DeviceTensor],
                 info: bytes) -> None:
        """Queues one launch. `buffers` follow `abi.buffers`; `info` is the packed info
        struct (empty when the ABI has none)."""
        raise NotImplementedError

    def sync(self) -> None:
        """Waits for all launched work."""
        raise NotImplementedError

    def flush(self) -> None:
        """Hands launched work to the device without waiting for it. wgpu records
        launches into a batch it submits lazily (docs/RUNTIMES.md, "wgpu batches");
        cuda and cpu have nothing held back, so this does nothing there."""

    def timer(self):
        """A timer of the device work launched between its `start()` and `stop()`:
        CUDA events on cuda, timestamp queries on wgpu (when the device has them), wall
        time otherwise (cubepy/timing.py)."""
        from ..timing import make_timer
        return make_timer(self)

    def __repr__(self) -> str:
        return f"<cubepy.Client {self.runtime}: {self.device}>"
