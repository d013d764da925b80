"""DLPack capsules through ctypes: export memory cubepy owns, import memory others own.

The same code serves the cpu and cuda runtimes (only the device code differs), so the
cpu tests exercise the exact capsule handling the cuda runtime uses.

Lifetimes:
- export: the capsule keeps the producer (a cubepy tensor) alive in `_EXPORTED` until the
  consumer calls the DLManagedTensor's deleter, or, when nobody consumed the capsule,
  until the capsule itself is destroyed.
- import: the capsule is renamed "used_dltensor" (we own it) and its deleter runs when
  the last cubepy view of the memory goes away (`Import.release`).
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

from .ir.batched_dataclass import build_pending, dataclass  # (cheap to create)
from .ir.types import DType, dtype_from_name

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13

# (type code, bits) -> cubepy dtype name. Codes: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool,
# 10 float8_e4m3fn, 12 float8_e5m2 (DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2).
_CODES = {(2, 32): "f32", (2, 64): "f64", (2, 16): "f16", (4, 16): "bf16",
          (0, 32): "i32", (0, 64): "i64", (1, 32): "u32", (1, 64): "u64", (6, 8): "bool",
          (10, 8): "e4m3", (12, 8): "e5m2"}
_CODE_OF = {name: code_bits for code_bits, name in _CODES.items()}


def _code_of(dtype: DType) -> tuple[int, int]:
    return _CODE_OF[dtype.name]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]

class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_USED = b"used_dltensor"
_api = ctypes.pythonapi
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
# The capsule destructor sees a dying object: these take it as a raw pointer (no refcount).
_is_valid = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))

_EXPORTED: dict[int, tuple] = {}  # DLManagedTensor address -> what must stay alive


@_DELETER
def _delete_exported(address: int) -> None:
    _EXPORTED.pop(address, None)


def _capsule_destructor(name: bytes):
    @_CAPSULE_DESTRUCTOR
    def destroy(capsule: int) -> None:
        if _is_valid(capsule, name):  # never consumed: release what the export holds
            address = _get_pointer_raw(capsule, name)
            if address:
                _EXPORTED.pop(address, None)
    return destroy


_DESTROY = {_NAME: _capsule_destructor(_NAME),
            _NAME_VERSIONED: _capsule_destructor(_NAME_VERSIONED)}


def export_capsule(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...],
                   dtype: DType, device: tuple[int, int], owner: Any,
                   versioned: bool = False) -> Any:
    """A capsule for the elements at `ptr` (strides in elements) that keeps `owner` alive
    until the consumer is done with it: "dltensor_versioned" (DLPack 1.0, writable) when
    `versioned` (the consumer passed max_version >= (1, 0)), else legacy "dltensor"."""
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    if versioned:
        managed.version = DLPackVersion(1, 0)
        managed.flags = 0  # writable, not a copy
    code, bits = _code_of(dtype)
    managed.dl_tensor = DLTensor(ptr or None, DLDevice(*device), ndim,
                                 DLDataType(code, bits, 1),
                                 ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64)),
                                 ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64)), 0)
    managed.deleter = _delete_exported
    address = ctypes.addressof(managed)
    _EXPORTED[address] = (managed, shape_arr, strides_arr, owner)
    name = _NAME_VERSIONED if versioned else _NAME
    return _api.PyCapsule_New(address, name, _DESTROY[name])


@dataclass(frozen=False)
class Import:
    """What a consumed capsule describes; call `release()` once the memory is unused."""

    ptr: int  # address of element 0 (data + byte_offset)
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # in elements; None: C-contiguous
    dtype: DType | None  # None: a dtype cubepy lacks (described by `dtype_text`)
    dtype_text: str
    device: tuple[int, int]
    release: Callable[[], None]


def import_capsule(capsule: Any) -> Import:
    """Takes ownership of a "dltensor" capsule (renaming it "used_dltensor")."""
    address = _api.PyCapsule_GetPointer(capsule, _NAME)  # raises if not a fresh dltensor
    managed = DLManagedTensor.from_address(address)
    t = managed.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    name = _CODES.get((code, bits)) if lanes == 1 else None
    deleter = managed.deleter
    _api.PyCapsule_SetName(capsule, _USED)

    def release(done=[]) -> None:  # noqa: B006 - runs once
        if not done and deleter:
            done.append(True)
            deleter(address)

    return Import((t.data or 0) + t.byte_offset, shape, strides,
                  dtype_from_name(name) if name else None,
                  f"DLPack type code {code} with {bits} bits x {lanes} lanes",
                  (t.device.device_type, t.device.device_id), release)


build_pending()  # (the dataclasses above)
