"""What every runtime provides: a Client that owns device memory and runs kernels, and
DeviceTensor, a buffer with a shape and strides.

A runtime subclasses Client and implements `_alloc`, `_upload`, `_download`, `compile`,
`dispatch` and `sync`. `kernel.launch` (cubepy/kernel.py) checks the arguments, builds
the info struct (cubepy/abi.py) and calls `compile` once per specialisation, then
`dispatch` on every launch.
"""
from __future__ import annotations

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
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = dtype
        self.buffer_len = int(buffer_len)
        self.line_size = line_size
        self.len = int(np.prod(self.shape, dtype=np.int64)) // line_size

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

    # -- memory -----------------------------------------------------------------------
    @public_entry
    def tensor(self, array) -> DeviceTensor:
        """Uploads a numpy array (any strides; stored contiguous) and keeps its shape."""
        array = np.asarray(array)
        dtype = self._dtype_of(array.dtype)
        data = array if array.flags.c_contiguous else np.ascontiguousarray(array)  # keeps 0-d
        handle = self._upload(data.reshape(-1), dtype)
        return DeviceTensor(self, handle, data.shape, _contiguous_strides(data.shape),
                            dtype, max(data.size, 0))

    @public_entry
    def empty(self, shape, dtype: DType) -> DeviceTensor:
        """A new tensor with unspecified contents (zeroed on every runtime today)."""
        return self.zeros(shape, dtype)

    @public_entry
    def zeros(self, shape, dtype: DType) -> DeviceTensor:
        """A new zero-filled tensor; `dtype` is a DType, its name or a numpy dtype."""
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dtype = self._check_dtype(dtype)
        size = int(np.prod(shape, dtype=np.int64))
        handle = self._alloc(size, dtype)
        return DeviceTensor(self, handle, shape, _contiguous_strides(shape), dtype, size)

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

    def __repr__(self) -> str:
        return f"<cubepy.Client {self.runtime}: {self.device}>"
