"""The cpu runtime: runs kernels with numpy. It is the reference every GPU runtime is
tested against.

A kernel compiles (codegen/numpy_gen.py) into a Python function that runs all units of a batch
of cubes at once as numpy vectors. The grid runs in batches of whole cubes (cubes are
independent, so running batches one after another is a valid schedule), each with at
most `MAX_LANES` units.

Buffer accesses are always bounds-checked on cpu, also in `launch_unchecked`: an
out-of-range read gives 0 and an out-of-range write is dropped instead of corrupting
host memory.
"""
from __future__ import annotations

import platform
import struct
import weakref
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..abi import KernelABI
from ..codegen.compiled import Compiled
from ..errors import LaunchError
from ..ir.types import FP8_DTYPES, DType
from .base import Client, DeviceLimits, DeviceTensor
from .cpu_program import CpuProgram, load_program
from .cpu_plane import PLANE_DIM

if TYPE_CHECKING:  # (cached kernels run without the IR)
    from ..ir import nodes as ir

MAX_LANES = 1 << 18  # units per batch: large enough to amortise Python, small for caches
LOCAL_ARRAY_BYTES = 64 << 20  # LocalArray memory of one batch (one row per lane)


def _fp8():
    """cubepy.fp8, imported when a tensor of 8-bit floats first moves."""
    from .. import fp8
    return fp8


def _storage(dtype: DType) -> type:
    """The numpy type of the cpu runtime's memory for `dtype` (an 8-bit float's bits
    as uint8, as a GPU and torch store them)."""
    return np.uint8 if dtype in FP8_DTYPES else dtype.numpy.type


def _scalar_value(v, dtype: DType):
    """A scalar parameter's value as the kernel sees it (an fp8 scalar travels as f32
    and is rounded on entry, as CUDA's constructor rounds it)."""
    if dtype.is_bool:
        return np.bool_(v != 0)
    if dtype in FP8_DTYPES:
        return _fp8().round_to(v, dtype.name)[()]
    return dtype.numpy.type(v)


class CpuExecutable:
    """A compiled kernel plus what a launch needs to call it."""

    def __init__(self, program: CpuProgram):
        self.program = program
        self.abi = program.abi
        self._unpack = struct.Struct(self.abi.struct_format).unpack if self.abi.has_info \
            else None
        self._scalar_types = {}
        for f in self.abi.fields:
            if f.kind == "scalar":
                self._scalar_types[f.name] = program.kernel.param(f.param).dtype
        self._unit_cache: dict = {}
        # bytes of LocalArray per unit: a batch holds one row per lane of each array
        self.local_bytes = sum(d.size * d.buffer.elem.itemsize
                               for d in program.kernel.local_arrays)

    @property
    def source(self) -> str:
        """The generated Python source (for debugging)."""
        return self.program.source

    def info_fields(self, info: bytes) -> list:
        """The info struct's fields as numpy values, in ABI order."""
        if self._unpack is None:
            return []
        flat = self._unpack(info)
        values, pos = [], 0
        for f in self.abi.fields:
            chunk = flat[pos:pos + f.count]
            pos += f.count
            if f.kind in ("shape", "stride"):
                values.append(np.array(chunk + (0,), np.uint32))  # trailing 0: see meta()
            elif f.kind == "cube_count":
                values.append(tuple(chunk))
            elif f.kind == "scalar":
                dtype = self._scalar_types[f.name]
                v = chunk[0]
                values.append(_scalar_value(v, dtype))
            else:
                values.append(np.uint32(chunk[0]))
        return values

    def _units(self, dim: tuple[int, int, int], cubes: int):
        """Per-lane unit positions for `cubes` cubes (cached: identical every batch)."""
        key = (dim, cubes)
        found = self._unit_cache.get(key)
        if found is None:
            units = dim[0] * dim[1] * dim[2]
            unit = np.tile(np.arange(units, dtype=np.uint32), cubes)
            cl = np.repeat(np.arange(cubes, dtype=np.int64), units)
            found = (unit, cl)
            if len(self._unit_cache) >= 4:  # full batches plus a last, shorter one
                self._unit_cache.clear()
            self._unit_cache[key] = found
        return found

    def builtins(self, count, dim, first: int, cubes: int) -> tuple[dict, np.ndarray]:
        """The position builtins the kernel reads, for cubes first..first+cubes-1."""
        need = self.program.builtins
        unit, cl = self._units(dim, cubes)
        dx, dy, dz = dim
        cx, cy, cz = count
        out: dict[str, Any] = {}
        u32t = np.uint32
        lin = cl + first  # linear cube index (int64: the grid may exceed 2**32 cubes)
        wants = lambda *names: any(n in need for n in names)  # noqa: E731
        cpos = {}
        if wants("cube_pos_x", "absolute_pos_x", "absolute_pos"):
            cpos["x"] = (lin % cx).astype(u32t)
        if wants("cube_pos_y", "absolute_pos_y", "absolute_pos"):
            cpos["y"] = (lin // cx % cy).astype(u32t)
        if wants("cube_pos_z", "absolute_pos_z", "absolute_pos"):
            cpos["z"] = (lin // (cx * cy)).astype(u32t)
        upos = {}
        if wants("unit_pos_x", "absolute_pos_x", "absolute_pos", "unit_pos_plane"):
            upos["x"] = unit % u32t(dx)
        if wants("unit_pos_y", "absolute_pos_y", "absolute_pos"):
            upos["y"] = unit // u32t(dx) % u32t(dy)
        if wants("unit_pos_z", "absolute_pos_z", "absolute_pos"):
            upos["z"] = unit // u32t(dx * dy)
        apos = {}
        for axis, d in zip("xyz", dim):
            if wants(f"absolute_pos_{axis}", "absolute_pos"):
                apos[axis] = cpos[axis] * u32t(d) + upos[axis]
        for axis in "xyz":
            out[f"cube_pos_{axis}"] = cpos.get(axis)
            out[f"unit_pos_{axis}"] = upos.get(axis)
            out[f"absolute_pos_{axis}"] = apos.get(axis)
        if "absolute_pos" in need:
            with np.errstate(over="ignore"):
                out["absolute_pos"] = (apos["x"] + apos["y"] * u32t(cx * dx & 0xFFFFFFFF)
                                       + apos["z"] * u32t(cx * dx * cy * dy & 0xFFFFFFFF))
        if "unit_pos" in need:
            out["unit_pos"] = unit
        if "cube_pos" in need:
            out["cube_pos"] = lin.astype(u32t)
        if "unit_pos_plane" in need:
            out["unit_pos_plane"] = unit % u32t(PLANE_DIM)
        out["plane_dim"] = u32t(PLANE_DIM)
        for axis, c, d in zip("xyz", count, dim):
            out[f"cube_count_{axis}"] = u32t(c)
            out[f"cube_dim_{axis}"] = u32t(d)
        out["cube_count"] = u32t(cx * cy * cz & 0xFFFFFFFF)
        out["cube_dim"] = u32t(dx * dy * dz)
        return out, cl

    def run(self, count, dim, buffers: Sequence[np.ndarray], info: bytes) -> None:
        fields = self.info_fields(info)
        units = dim[0] * dim[1] * dim[2]
        total = count[0] * count[1] * count[2]
        per_batch = max(1, min(total, MAX_LANES // units))
        if self.local_bytes:
            per_batch = max(1, min(per_batch, LOCAL_ARRAY_BYTES // (units * self.local_bytes)))
        fn = self.program.fn
        with np.errstate(all="ignore"):
            for first in range(0, total, per_batch):
                cubes = min(per_batch, total - first)
                bi, cl = self.builtins(count, dim, first, cubes)
                fn(cubes * units, cubes, buffers, fields, bi, cl)


# Shared memory per cube: what an H100/H200 allows a CUDA kernel (its opt-in maximum),
# so a kernel written for such a GPU runs here as well.
CPU_MAX_SHARED_BYTES = 227 * 1024


class CpuClient(Client):
    """Runs kernels on the host with numpy; buffers are 1-D numpy arrays."""

    runtime = "cpu"
    target = "cpu"

    def __init__(self):
        super().__init__()
        from ..targets import get_target
        self.device = f"numpy on {platform.processor() or platform.machine() or 'cpu'}"
        record = get_target(self.target)  # its types and atomics are the target's
        self.limits = DeviceLimits(
            max_cube_dim=(1024, 1024, 64), max_units_per_cube=1024,
            max_cube_count=(2**31 - 1, 65535, 65535), dtypes=record.dtype_set(),
            atomic_dtypes=record.atomic_dtype_set(), plane_dim=PLANE_DIM,
            max_shared_bytes=CPU_MAX_SHARED_BYTES)
        # id(kernel) -> executable; weak, so an executable (and the kernel it holds)
        # goes when the kernel's own caches drop it.
        self._programs: weakref.WeakValueDictionary[int, CpuExecutable] = \
            weakref.WeakValueDictionary()

    def _alloc(self, size: int, dtype: DType) -> np.ndarray:
        return np.zeros(size, _storage(dtype))

    def _upload(self, flat: np.ndarray, dtype: DType) -> np.ndarray:
        if dtype in FP8_DTYPES:
            return _fp8().encode(flat, dtype.name)
        return np.array(flat, dtype=dtype.numpy, copy=True)

    def _download(self, tensor: DeviceTensor) -> np.ndarray:
        if tensor.dtype in FP8_DTYPES:  # numpy has no 8-bit float: the f32 values
            return _fp8().decode(tensor.handle, tensor.dtype.name)
        return tensor.handle.copy()

    def _write_view(self, tensor: DeviceTensor, values: np.ndarray) -> None:
        from ..interop import host_view
        if tensor.dtype in FP8_DTYPES:
            values = _fp8().encode(values, tensor.dtype.name)
        host_view(tensor)[...] = values

    def _write(self, handle: np.ndarray, flat: np.ndarray, dtype: DType) -> None:
        handle[:flat.size] = _fp8().encode(flat, dtype.name) if dtype in FP8_DTYPES else flat

    def _view_handle(self, handle: np.ndarray, offset: int, length: int,
                     dtype: DType) -> np.ndarray:
        return handle[offset:offset + length]

    def _data_pointer(self, handle: np.ndarray) -> int:
        return handle.__array_interface__["data"][0]

    def compile(self, kernel: ir.Kernel, abi: KernelABI, checked: bool,
                compiled: Compiled | None = None) -> CpuExecutable:
        """Runs the kernel's numpy code (generated now unless `compiled` carries it) into
        a Python function once; later calls with the same kernel object (the caller
        caches specialisations) reuse it. Accesses are always checked."""
        with self._lock:
            found = self._programs.get(id(kernel))
            if found is not None and found.program.kernel is kernel and found.abi == abi:
                return found
            if compiled is None:
                from ..codegen.numpy_gen import generate_numpy
                compiled = generate_numpy(kernel, abi, checked)
            exe = CpuExecutable(load_program(compiled, kernel, abi))
            self._programs[id(kernel)] = exe
            return exe

    def dispatch(self, executable: CpuExecutable, cube_count: tuple[int, int, int],
                 cube_dim: tuple[int, int, int], buffers: Sequence[DeviceTensor],
                 info: bytes) -> None:
        # No lock: a run only reads the executable and writes the launch's own buffers,
        # so threads launching on one cpu client run their kernels concurrently.
        handles = [b.handle for b in buffers]
        for h, spec in zip(handles, executable.abi.buffers):
            if not (spec.read_only or h.flags.writeable):  # a read-only numpy array
                raise LaunchError(f"parameter {spec.name!r} is written by the kernel, but "
                                  f"the array passed is read-only", spec.name)
        executable.run(tuple(cube_count), tuple(cube_dim), handles, info)

    def sync(self) -> None:
        """Nothing to wait for: launches run to completion in dispatch."""
