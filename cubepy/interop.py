"""Arrays of other libraries as kernel arguments (zero copy), and cubepy tensors for them.

Import: `import_arguments` turns each foreign array among a launch's buffer arguments
into a DeviceTensor viewing the same memory, with its shape and strides. What kind of
array a Python type is gets decided once per (type, runtime) and cached (`_ADAPTERS`), so
a launch pays only for reading the array's pointer, shape, strides and dtype.

Export: `dlpack`, `dlpack_device`, `cuda_array_interface` and `array` implement the
protocol methods of DeviceTensor.

Buffers: a cubepy kernel indexes a flat buffer (`t[i]`). A foreign view's buffer starts
at the view's first element and spans every element its strides reach, so kernels that
compute offsets from `shape`/`stride` see the view exactly; negative strides cannot be
expressed (strides are u32 in kernels) and are refused.
"""
from __future__ import annotations

import math
import sys
import weakref
from typing import Any, Callable

import numpy as np

from . import dlpack
from .errors import LaunchError
from .ir.types import ALL_DTYPES, FP8_DTYPES, DType, bf16, dtype_from_numpy

# runtime.base.DeviceTensor, bound on first use (`_device_tensor()`): importing cubepy, or
# parsing and building a kernel, loads no runtime. Every caller here already has a client.
_DeviceTensor: type | None = None

_new_tensor = object.__new__
_ADAPTERS: dict[tuple[type, str], Callable | None] = {}
_CONTIGUOUS: dict[tuple[int, ...], tuple[int, ...]] = {}
_NUMPY_DTYPES: dict[Any, DType | None] = {}
_TORCH_DTYPES: dict[Any, DType] = {}
_TYPESTR = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "i32": "<i4", "i64": "<i8",
            "u32": "<u4", "u64": "<u8", "bool": "|b1"}
# host memory as the cpu runtime holds it: an 8-bit float's bits as uint8
_HOST_TYPESTR = {**_TYPESTR, "e4m3": "|u1", "e5m2": "|u1"}
_HOW = "use client.tensor(...) for a copy"


class _Refused(Exception):
    """An array this client cannot use in place; the message says why."""


# -- small helpers -----------------------------------------------------------------------
def buffer_extent(shape, strides) -> int:
    """Elements a view spans from its first element: 1 + sum((n - 1) * stride)."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def _elem_strides(byte_strides, itemsize: int) -> tuple[int, ...]:
    if any(s < 0 for s in byte_strides):
        raise _Refused("it has negative strides (a reversed view); pass a copy "
                       "(x.copy() / x.contiguous())")
    if any(s % itemsize for s in byte_strides):
        raise _Refused("its strides are not a multiple of its element size")
    return tuple(s // itemsize for s in byte_strides)


def _numpy_dtype(np_dtype) -> DType:
    found = _NUMPY_DTYPES.get(np_dtype, False)
    if found is False:
        try:
            found = dtype_from_numpy(np_dtype)
        except TypeError:
            found = None
        _NUMPY_DTYPES[np_dtype] = found
    if found is None:
        raise _Refused(f"its dtype {np_dtype} has no cubepy equivalent "
                       f"({', '.join(t.name for t in ALL_DTYPES)})")
    return found


def _torch_dtype(torch_dtype) -> DType:
    if not _TORCH_DTYPES:
        import torch
        _TORCH_DTYPES.update({torch.float16: _by("f16"), torch.bfloat16: bf16,
                              torch.float32: _by("f32"), torch.float64: _by("f64"),
                              torch.int32: _by("i32"), torch.int64: _by("i64"),
                              torch.bool: _by("bool")})
        for name in ("uint32", "uint64"):
            if hasattr(torch, name):
                _TORCH_DTYPES[getattr(torch, name)] = _by("u" + name[-2:])
        for name, ours in (("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")):
            if hasattr(torch, name):
                _TORCH_DTYPES[getattr(torch, name)] = _by(ours)
    found = _TORCH_DTYPES.get(torch_dtype)
    if found is None:
        raise _Refused(f"its dtype {torch_dtype} has no cubepy equivalent")
    return found


def _device_tensor() -> type:
    global _DeviceTensor
    from .runtime.base import DeviceTensor
    _DeviceTensor = DeviceTensor
    return DeviceTensor


def _by(name: str) -> DType:
    return next(t for t in ALL_DTYPES if t.name == name)


def _make_tensor(client, handle, shape, strides, dtype: DType, buffer_len: int):
    """A DeviceTensor without __init__'s conversions (the launch hot path)."""
    t = _new_tensor(_DeviceTensor or _device_tensor())
    t.client, t.handle, t.shape, t.strides = client, handle, shape, strides
    t.dtype, t.buffer_len, t.line_size, t.line_aligned = dtype, buffer_len, 1, True
    t.len = math.prod(shape)
    return t


# -- adapters: (client, array) -> (DeviceTensor, device index -> stream handle, or None) --
def _from_numpy(client, a: np.ndarray, dtype: DType | None = None):
    """cpu: a numpy array in place (its memory becomes the buffer); `dtype` overrides
    the array's own (the uint8 bits of a torch float8 tensor)."""
    dtype = dtype or _numpy_dtype(a.dtype)
    shape = a.shape
    if a.flags.c_contiguous:
        return _make_tensor(client, a.reshape(-1), shape, _contiguous(shape), dtype,
                            a.size), None
    strides = _elem_strides(a.strides, a.itemsize)
    n = buffer_extent(shape, strides)
    handle = np.lib.stride_tricks.as_strided(a, (n,), (a.itemsize,),
                                             writeable=a.flags.writeable)
    return _make_tensor(client, handle, shape, strides, dtype, n), None


def _contiguous(shape) -> tuple[int, ...]:
    """C-contiguous strides in elements (numpy may give size-1 dimensions any stride; a
    contiguous view gets the usual ones). Remembered per shape: launches repeat shapes."""
    found = _CONTIGUOUS.get(shape)
    if found is None:
        acc, out = 1, []
        for n in reversed(shape):
            out.append(acc)
            acc *= n
        found = tuple(reversed(out))
        if len(_CONTIGUOUS) < 4096:
            _CONTIGUOUS[shape] = found
    return found


def _torch_uint8():
    import torch
    return torch.uint8


def _torch_cpu(client, t, owner=True):
    """A torch CPU tensor through its numpy view (which keeps its memory alive: `owner`
    cannot be dropped here, so cpu views are not memoized)."""
    if t.device.type != "cpu":
        raise _Refused(f"it is a torch tensor on {t.device}, and this client is "
                       f"{client.runtime}: move it (x.cpu()) or use cubepy.client_for(x)")
    dtype = _torch_dtype(t.dtype)  # a clear message for dtypes cubepy lacks
    if dtype not in client.limits.dtypes:
        raise _Refused(f"the {client.runtime} runtime has no {dtype.name}")
    fp8 = dtype in FP8_DTYPES  # numpy has no 8-bit float: share the bits as uint8
    try:
        a = (t.detach().view(_torch_uint8()) if fp8 else t.detach()).numpy()
    except (TypeError, RuntimeError) as e:
        raise _Refused(f"torch cannot share it with numpy ({e})") from None
    return _from_numpy(client, a, dtype if fp8 else None)


def _dlpack_cpu(client, x):
    """Any DLPack producer in host memory, through the same capsule import as on cuda
    (numpy's own import marks legacy capsules read-only; kernels write)."""
    kind, _ = x.__dlpack_device__()
    if kind not in (dlpack.KDL_CPU, dlpack.KDL_CUDA_HOST):
        raise _Refused(f"it lives on DLPack device type {kind}, not in host memory "
                       f"(use cubepy.client_for(x))")
    imported = _checked_import(x.__dlpack__())
    dtype = imported.dtype
    if dtype not in client.limits.dtypes:
        imported.release()
        raise _Refused(f"the {client.runtime} runtime has no {dtype.name}")
    shape = imported.shape
    strides = imported.strides if imported.strides is not None else _contiguous(shape)
    n = buffer_extent(shape, strides)
    memory = _HostMemory(imported.ptr, n, _HOST_TYPESTR[dtype.name],
                         _Release(imported.release, x))
    return _make_tensor(client, np.asarray(memory), shape, strides, dtype, n), None


class _HostMemory:
    """`n` elements at host address `ptr` as numpy sees them; the arrays made from it
    keep it (and through `owner` the producer's memory) alive."""

    def __init__(self, ptr: int, n: int, typestr: str, owner: Any):
        self.owner = owner
        self.__array_interface__ = {"data": (ptr, False), "shape": (n,),
                                    "typestr": typestr, "version": 3}


def _checked_import(capsule) -> dlpack.Import:
    """A consumed capsule with a dtype cubepy has and no negative strides."""
    imported = dlpack.import_capsule(capsule)
    if imported.dtype is None:
        imported.release()
        raise _Refused(f"its dtype ({imported.dtype_text}) has no cubepy equivalent")
    if imported.strides is not None and any(s < 0 for s in imported.strides):
        imported.release()
        raise _Refused("it has negative strides")
    return imported


def _torch_current_stream(index: int) -> int:
    torch = sys.modules["torch"]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(index) if raw is not None else torch.cuda.current_stream(index).cuda_stream


def _torch_cuda(client, t, owner=True):
    """A torch CUDA tensor: its pointer, shape and strides (torch has no negative
    strides); the launch goes on torch's current stream of the device. `owner=False`
    makes a view that does not keep t alive (the launch memo's, see import_arguments)."""
    if not t.is_cuda or t.get_device() != client.index:
        raise _Refused(f"it is a torch tensor on {t.device}, and this client is "
                       f"cuda:{client.index}: move it (x.to('cuda:{client.index}')) or use "
                       f"cubepy.client_for(x)")
    dtype = _TORCH_DTYPES.get(t.dtype) or _torch_dtype(t.dtype)
    shape = tuple(t.shape)
    strides = t.stride()
    n = t.numel() if t.is_contiguous() else buffer_extent(shape, strides)
    handle = client._wrap_pointer(t.data_ptr(), n * dtype.itemsize, t if owner else None)
    return _make_tensor(client, handle, shape, strides, dtype, n), _torch_current_stream


def _cupy_cuda(client, a, owner=True):
    """A CuPy array: its pointer, shape and strides, on CuPy's current stream. `owner`
    as for _torch_cuda."""
    if a.device.id != client.index:
        raise _Refused(f"it is a CuPy array on cuda:{a.device.id}, and this client is "
                       f"cuda:{client.index} (use cubepy.client_for(x))")
    dtype = _numpy_dtype(a.dtype)
    shape, strides = a.shape, _elem_strides(a.strides, a.itemsize)
    n = buffer_extent(shape, strides)
    handle = client._wrap_pointer(a.data.ptr, n * dtype.itemsize, a if owner else None)
    return _make_tensor(client, handle, shape, strides, dtype, n), _cupy_current_stream


def _cupy_current_stream(index: int) -> int:
    """CuPy's current stream of device `index` (0: the legacy default stream)."""
    cupy = sys.modules["cupy"]
    try:
        return cupy.cuda.get_current_stream(index).ptr  # CuPy >= 13 takes a device id
    except TypeError:
        with cupy.cuda.Device(index):
            return cupy.cuda.get_current_stream().ptr


def _cai_cuda(client, x):
    cai = x.__cuda_array_interface__
    ptr = cai["data"][0]
    from .runtime import cuda_driver
    if ptr and cuda_driver.pointer_device(ptr) != client.index:
        raise _Refused(f"it lives on another device than cuda:{client.index} "
                       f"(use cubepy.client_for(x))")
    typestr = cai["typestr"]
    dtype = _numpy_dtype(np.dtype(typestr))
    shape = tuple(cai["shape"])
    strides = (_elem_strides(cai["strides"], dtype.itemsize) if cai.get("strides")
               else _contiguous(shape))
    n = buffer_extent(shape, strides)
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    if stream is not None:  # the producer's work on `stream` must finish before ours
        cuda_driver.stream_wait(client.stream, _legacy(stream))
    handle = client._wrap_pointer(ptr, n * dtype.itemsize, x)
    return _make_tensor(client, handle, shape, strides, dtype, n), None


def _legacy(stream: int) -> int:
    """Protocol stream numbers: 1 is the legacy default stream (CUstream 0 in the driver's
    eyes), 2 the per-thread default stream (a valid driver handle as it is)."""
    return 0 if stream == 1 else stream


def _dlpack_cuda(client, x):
    kind, index = x.__dlpack_device__()
    if kind not in (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED) or index != client.index:
        raise _Refused(f"it lives on DLPack device {(kind, index)}, not cuda:{client.index} "
                       f"(use cubepy.client_for(x))")
    stream = client.stream
    imported = _checked_import(x.__dlpack__(stream=stream or 1))
    shape = imported.shape
    strides = imported.strides if imported.strides is not None else _contiguous(shape)
    n = buffer_extent(shape, strides)
    owner = _Release(imported.release, x)
    handle = client._wrap_pointer(imported.ptr, n * imported.dtype.itemsize, owner)
    return _make_tensor(client, handle, shape, strides, imported.dtype, n), None


class _Release:
    """Runs a DLPack deleter once the last view of the memory is gone."""

    def __init__(self, release: Callable[[], None], producer: Any):
        self.release, self.producer = release, producer

    def __del__(self):
        self.release()


def _refuse_wgpu(client, x):
    raise _Refused("WebGPU cannot import memory another library owns")


def _refuse_host_on_cuda(client, x):
    raise _Refused(f"it is host memory and this client is cuda:{client.index}; move it to "
                   f"the GPU or use cubepy.client('cpu')")


def _evaluate_lazy(client, x):
    return x.__cubepy_tensor__(client), None


def _classify(tp: type, runtime: str) -> Callable | None:
    """The adapter for arrays of type `tp` on `runtime`, or None for a non-array."""
    if issubclass(tp, _DeviceTensor or _device_tensor()):
        return None
    if hasattr(tp, "__cubepy_tensor__"):  # a fusion.LazyTensor: evaluated, then passed
        return _evaluate_lazy
    torch = sys.modules.get("torch")
    is_torch = torch is not None and issubclass(tp, torch.Tensor)
    is_numpy = issubclass(tp, np.ndarray)
    is_cupy = tp.__module__.split(".")[0] == "cupy" and hasattr(tp, "data")
    has_dlpack = hasattr(tp, "__dlpack__") and hasattr(tp, "__dlpack_device__")
    has_cai = hasattr(tp, "__cuda_array_interface__")
    if not (is_torch or is_numpy or is_cupy or has_dlpack or has_cai):
        return None
    if runtime == "wgpu":
        return _refuse_wgpu
    if runtime == "cpu":
        if is_torch:
            return _torch_cpu
        if is_numpy:
            return _from_numpy
        return _dlpack_cpu if has_dlpack else None
    if is_torch:
        return _torch_cuda
    if is_cupy:
        return _cupy_cuda
    if is_numpy:
        return _refuse_host_on_cuda
    return _cai_cuda if has_cai else _dlpack_cuda


def adapter_for(tp: type, runtime: str) -> Callable | None:
    key = (tp, runtime)
    try:
        return _ADAPTERS[key]
    except KeyError:
        found = _ADAPTERS[key] = _classify(tp, runtime)
        return found


def to_tensor(client, x, name: str):
    """(DeviceTensor viewing x, function device index -> the stream handle the launch
    should run on, or None); LaunchError naming parameter `name` when x cannot be used in
    place; (None, None) for a non-array."""
    adapter = adapter_for(type(x), client.runtime)
    if adapter is None:
        return None, None
    try:
        return adapter(client, x)
    except _Refused as e:
        raise LaunchError(f"parameter {name!r}: {type(x).__module__}.{type(x).__name__} "
                          f"cannot be used in place: {e}; {_HOW}", name) from None


def _torch_fingerprint(t) -> tuple:
    return t.data_ptr(), t.shape, t.stride()


def _torch_quick_fingerprint(t) -> tuple:
    # Every in-place torch op, metadata ones included (t_, resize_, set_, as_strided_),
    # bumps _version; a storage swapped in through `.data =` moves the pointer. Half the
    # cost of reading shape and strides, on every launch.
    return t._version, t.data_ptr()


def _cupy_fingerprint(a) -> tuple:
    return a.data.ptr, a.shape, a.strides


# Adapters whose views a launch may reuse, with what tells that the array still has the
# memory, shape and strides its view was made from: a quick test on every launch, and
# the full one when the quick one changed (an in-place op that kept the layout).
_MEMOIZED = {_torch_cuda: (_torch_quick_fingerprint, _torch_fingerprint),
             _cupy_cuda: (_cupy_fingerprint, _cupy_fingerprint)}


def import_arguments(client, buffer_params: tuple[tuple[int, str], ...], args: tuple,
                     memo: dict | None = None):
    """The launch arguments with every foreign array replaced by a DeviceTensor, and the
    stream the first stream-bearing array asks for (torch's / CuPy's current stream).

    `memo` (one per kernel: position -> last view) lets a launch that passes the same
    torch CUDA tensor or CuPy array again reuse its view after checking its pointer,
    shape and strides
    (in-place ops such as resize_, t_ or set_ change one of these): the training-loop
    case costs a weak reference test and three reads. Remembered views do not keep the
    tensor alive (the weak reference tells when it is gone)."""
    out = list(args)
    n = len(out)
    stream_of = None
    for i, name in buffer_params:
        if i >= n:
            continue
        a = out[i]
        if isinstance(a, _DeviceTensor or _device_tensor()):
            continue
        entry = memo.get(i) if memo is not None else None
        if entry is not None and entry[0]() is a and entry[1] is client \
                and entry[2](a) == entry[3]:
            out[i] = entry[4]
            wants = entry[5]
        else:
            tensor, wants = _convert(client, a, name, memo, i)
            if tensor is None:
                continue  # not an array: the launch's argument check explains
            out[i] = tensor
        if stream_of is None:
            stream_of = wants
    return tuple(out), (stream_of(client.index) if stream_of is not None else None)


def make_importer(buffer_params: tuple[tuple[int, str], ...], n_params: int) -> Callable:
    """import_arguments unrolled for one kernel's signature (generated once per kernel):
    (client, args, memo) -> (args, stream). Arguments of another count go through the
    generic import_arguments (the launch's argument check then names what is wrong)."""
    lines = ["def imp(c, a, memo):", f"    if len(a) != {n_params}:",
             "        return _generic(c, _bp, a, memo)", "    s = None"]
    for i, name in buffer_params:
        x = f"x{i}"
        lines += [f"    {x} = a[{i}]",
                  f"    if type({x}) is not _T:",
                  f"        e = memo.get({i})",
                  f"        if e is not None and e[0]() is {x} and e[1] is c and "
                  f"e[2]({x}) == e[3]:",
                  f"            {x}, w = e[4], e[5]",
                  "        else:",
                  f"            {x}, w = _slow(c, {x}, {name!r}, memo, {i})",
                  "        if s is None:",
                  "            s = w"]
    names = {i for i, _ in buffer_params}
    items = ", ".join(f"x{j}" if j in names else f"a[{j}]" for j in range(n_params))
    lines.append(f"    return ({items}{',' if n_params == 1 else ''}), "
                 f"(s(c.index) if s is not None else None)")
    scope = {"_T": _DeviceTensor or _device_tensor(), "_generic": import_arguments,
             "_bp": buffer_params, "_slow": _slow}
    exec("\n".join(lines), scope)
    return scope["imp"]


def _slow(client, a, name: str, memo: dict, position: int):
    """A buffer argument the memo does not know: converted, or returned as it is when it
    is not an array (or a DeviceTensor subclass)."""
    if isinstance(a, _DeviceTensor or _device_tensor()):
        return a, None
    tensor, wants = _convert(client, a, name, memo, position)
    return (a, None) if tensor is None else (tensor, wants)


def _convert(client, a, name: str, memo: dict | None, position: int):
    adapter = adapter_for(type(a), client.runtime)
    fingerprints = _MEMOIZED.get(adapter)
    if fingerprints is None or memo is None:
        return to_tensor(client, a, name)
    quick, full = fingerprints
    entry = memo.get(position)
    if entry is not None and entry[0]() is a and entry[1] is client \
            and full(a) == entry[6]:  # changed in place, same layout: the view holds
        entry[3] = quick(a)
        return entry[4], entry[5]
    try:
        ref = weakref.ref(a)
    except TypeError:  # an array type without weak references: never remembered
        return to_tensor(client, a, name)
    try:
        tensor, wants = adapter(client, a, False)
    except _Refused:
        return to_tensor(client, a, name)  # raises the LaunchError naming the parameter
    if len(memo) > 64:
        memo.clear()
    memo[position] = [ref, client, quick, quick(a), tensor, wants, full(a)]
    return tensor, wants


# -- which client -------------------------------------------------------------------------
def client_for(x):
    """The cubepy client of the device holding array `x` (a cubepy tensor, a torch tensor,
    a CuPy or numpy array, or anything exporting DLPack or __cuda_array_interface__)."""
    from .runtime import client
    from .runtime.base import DeviceTensor
    if isinstance(x, DeviceTensor):
        return x.client
    if isinstance(x, np.ndarray):
        return client("cpu")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if x.device.type == "cpu":
            return client("cpu")
        if x.device.type == "cuda":
            return client(f"cuda:{x.get_device()}")
        raise LaunchError(f"cubepy has no runtime for torch device {x.device}")
    if hasattr(x, "__dlpack_device__"):
        kind, index = x.__dlpack_device__()
        if kind == dlpack.KDL_CPU:
            return client("cpu")
        if kind in (dlpack.KDL_CUDA, dlpack.KDL_CUDA_MANAGED):
            return client(f"cuda:{index}")
        raise LaunchError(f"cubepy has no runtime for DLPack device type {kind}")
    if hasattr(x, "__cuda_array_interface__"):
        from .runtime import cuda_driver
        client("cuda")  # makes a context current for the pointer query
        return client(f"cuda:{cuda_driver.pointer_device(x.__cuda_array_interface__['data'][0])}")
    raise LaunchError(f"{type(x).__name__} is not an array cubepy knows (it exports neither "
                      f"DLPack nor __cuda_array_interface__)")


# -- export ------------------------------------------------------------------------------
def dlpack_device(t) -> tuple[int, int]:
    runtime = t.client.runtime
    if runtime == "cpu":
        return dlpack.KDL_CPU, 0
    if runtime == "cuda":
        return dlpack.KDL_CUDA, t.client.index
    raise BufferError(f"a {runtime} tensor cannot be shared through DLPack (WebGPU memory "
                      f"cannot be exported); use t.numpy() for a copy")


def dlpack_capsule(t, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule sharing t's memory. On cuda, `stream` is the consumer's stream
    (None or 1: legacy default, 2: per-thread default, -1: no synchronisation): work the
    client queued so far is made to precede what the consumer queues on it."""
    device = dlpack_device(t)
    if dl_device is not None and tuple(dl_device) != device:
        raise BufferError(f"cannot export a {t.client.runtime} tensor to device {dl_device}")
    if copy:
        raise BufferError("cubepy exports share memory; copy=True is not supported")
    if t.line_size != 1:
        raise BufferError("export the tensor before with_line_size(): DLPack sees elements")
    if t.client.runtime == "cuda" and stream != -1:
        t.client._make_stream_wait(_legacy(1 if stream is None else stream))
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    return dlpack.export_capsule(t.client._data_pointer(t.handle), t.shape, t.strides,
                                 t.dtype, device, t, versioned)


def cuda_array_interface(t) -> dict:
    """Version 3 of the CUDA array interface; `stream` is the client's stream, on which
    the data is being produced (consumers wait for it)."""
    if t.client.runtime != "cuda":
        raise AttributeError("__cuda_array_interface__ exists only for cuda tensors")
    typestr = _TYPESTR.get(t.dtype.name)
    if typestr is None:  # bf16 has no typestr: consumers fall back to DLPack
        raise AttributeError(f"__cuda_array_interface__ has no typestr for {t.dtype.name}")
    item = t.dtype.itemsize
    stream = t.client.stream
    return {"shape": t.shape, "typestr": typestr, "version": 3,
            "data": (t.client._data_pointer(t.handle), False),
            "strides": None if t.strides == _contiguous(t.shape) else
            tuple(s * item for s in t.strides),
            "stream": stream if stream else 1}


def array(t, dtype=None, copy=None) -> np.ndarray:
    """numpy's __array__: a view of t's memory on cpu (a copy when copy=True), elsewhere
    a download. numpy has no 8-bit float: an e4m3/e5m2 tensor gives a copy of its values
    as f32 (and copy=False is a ValueError)."""
    if t.dtype in FP8_DTYPES and copy is False:
        raise ValueError(f"an {t.dtype.name} tensor cannot be viewed as a numpy array: "
                         f"numpy has no 8-bit float (np.asarray(t) gives its values as "
                         f"float32)")
    if t.client.runtime == "cpu" and not copy and t.dtype not in FP8_DTYPES:
        out = host_view(t)
    elif copy is False:
        raise ValueError(f"a {t.client.runtime} tensor cannot be viewed as a numpy array "
                         f"without a copy")
    else:
        out = t.numpy()
    return out.astype(dtype, copy=False) if dtype is not None else out


def host_view(t) -> np.ndarray:
    """A cpu tensor's memory as a numpy array with its shape and strides (no copy)."""
    flat = t.handle
    return np.lib.stride_tricks.as_strided(
        flat, t.shape, tuple(s * flat.itemsize for s in t.strides),
        writeable=flat.flags.writeable)
