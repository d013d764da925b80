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
from typing import Any, Sequence

import numpy as np

from ..abi import KernelABI
from ..errors import LaunchError, public_entry
from ..ir import nodes as ir
from ..ir.types import DType, dtype_from_name, dtype_from_numpy


@dataclass(frozen=True)
class DeviceLimits:
    """What a device accepts; `kernel.launch` checks these before running anything."""

    max_cube_dim: tuple[int, int, int]
    max_units_per_cube: int
    max_cube_count: tuple[int, int, int]
    dtypes: frozenset  # DTypes usable in kernels and buffers
    atomic_dtypes: frozenset = frozenset()  # DTypes usable with atomics
    plane_dim: int = 32
    max_shared_bytes: int = 48 * 1024
    features: tuple[str, ...] = ()


class DeviceTensor:
    """A buffer on one client with a shape and strides (in elements).

    `t[i]` in a kernel indexes the flat buffer; shape and strides are metadata, as in
    CubeCL. `buffer_len` counts the buffer's elements; `len` is the number of elements the
    shape spans (product of the shape) divided by the line size.
    """

    __slots__ = ("client", "handle", "shape", "strides", "dtype", "buffer_len",
                 "line_size", "len")

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

    def __repr__(self) -> str:
        return (f"DeviceTensor(shape={self.shape}, strides={self.strides}, "
                f"dtype={self.dtype}, runtime={self.client.runtime})")


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
    def tensor(self, array) -> DeviceTensor:
        """Uploads a numpy array (any strides; stored contiguous) and keeps its shape."""
        array = np.asarray(array)
        dtype = self._dtype_of(array.dtype)
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

    def _allocating(self, make, size: int, dtype: DType) -> Any:
        """`make()`, with running out of memory reported as a LaunchError."""
        self.check_alive()
        try:
            return make()
        except (MemoryError, OverflowError, ValueError) as e:
            raise LaunchError(f"cannot allocate a {dtype.name} tensor of {size} elements "
                              f"on {self.device}: {e or type(e).__name__}") from None

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

    def compile(self, kernel: ir.Kernel, abi: KernelABI, checked: bool) -> Any:
        """An executable for a specialised kernel (after passes). Called once per
        specialisation; the caller caches the result."""
        raise NotImplementedError

    def dispatch(self, executable: Any, cube_count: tuple[int, int, int],
                 cube_dim: tuple[int, int, int], buffers: Sequence[DeviceTensor],
                 info: bytes) -> None:
        """Queues one launch. `buffers` follow `abi.buffers`; `info` is the packed info
        struct (empty when the ABI has none)."""
        raise NotImplementedError

    def sync(self) -> None:
        """Waits for all launched work."""
        raise NotImplementedError

    def timer(self):
        """A timer of the device work launched between its `start()` and `stop()`:
        CUDA events on cuda, timestamp queries on wgpu (when the device has them), wall
        time otherwise (cubepy/timing.py)."""
        from ..timing import make_timer
        return make_timer(self)

    def __repr__(self) -> str:
        return f"<cubepy.Client {self.runtime}: {self.device}>"
