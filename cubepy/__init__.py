"""cubepy: write GPU kernels as Python functions; emit CUDA C, WGSL and Metal; run them
on CUDA, WebGPU or the CPU.

    from cubepy import cube, Tensor, Float, ABSOLUTE_POS

    @cube(launch=True)
    def double(x: Tensor[Float], out: Tensor[Float]):
        out[ABSOLUTE_POS] = x[ABSOLUTE_POS] * Float(2.0)
"""
from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import math
from . import cmma
from . import pipeline
from .errors import CompileError, CubepyError, LaunchError, OptionError, exit_on_error
from .ir.types import (DType, Generic, Float, Int, UInt, Numeric, generic,
                       f16, bf16, f32, f64, i32, i64, u32, u64, bool_, e4m3, e5m2)
from .kernel import CubeFunction, cube
from .lang import (Tensor, Array, Line, Comptime,
                   ABSOLUTE_POS, ABSOLUTE_POS_X, ABSOLUTE_POS_Y, ABSOLUTE_POS_Z,
                   UNIT_POS, UNIT_POS_X, UNIT_POS_Y, UNIT_POS_Z,
                   CUBE_POS, CUBE_POS_X, CUBE_POS_Y, CUBE_POS_Z,
                   CUBE_DIM, CUBE_DIM_X, CUBE_DIM_Y, CUBE_DIM_Z,
                   CUBE_COUNT, CUBE_COUNT_X, CUBE_COUNT_Y, CUBE_COUNT_Z,
                   PLANE_DIM, UNIT_POS_PLANE,
                   terminate, sync_cube, SharedMemory, unroll, select,
                   atomic_add, atomic_sub, atomic_min, atomic_max, atomic_and, atomic_or,
                   atomic_xor, atomic_exchange, atomic_compare_exchange,
                   atomic_load, atomic_store, atomic_inc, atomic_dec,
                   plane_sum, plane_prod, plane_min, plane_max, plane_all, plane_any,
                   plane_broadcast, plane_shuffle, plane_shuffle_xor, plane_shuffle_up,
                   plane_shuffle_down, plane_inclusive_sum, plane_exclusive_sum,
                   LocalArray, DynamicSharedMemory,
                   popcount, clz, ctz, ffs, reverse_bits, mul_hi, saturating_add,
                   saturating_sub, bitcast, count_ones, popc, leading_zeros,
                   trailing_zeros, find_first_set, brev, mulhi,
                   plane_inclusive_prod, plane_exclusive_prod, plane_ballot, plane_elect,
                   sync_plane, fence_cube, fence_device, tf32)
from .launch_config import CubeCount, CubeDim
from .timing import BenchResult, bench
from .autotune import Autotuned, autotune
from .interop import client_for
from .math import clamp
from .records import struct
from .log import configure_from_env as _configure_logging

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)

_configure_logging()

# The runtime layer (device discovery, pycuda/wgpu bindings) loads on first use of one of
# these names, so importing cubepy or compiling a kernel to source touches no device.
_LAZY_RUNTIME = ("client", "available_runtimes")
if _TYPE_CHECKING:  # what type checkers and the API reference see; loaded on first use
    from .runtime import available_runtimes, client


def __getattr__(name: str):
    if name in _LAZY_RUNTIME:
        from . import runtime
        value = getattr(runtime, name)
        globals()[name] = value  # later reads skip this hook
        return value
    raise AttributeError(f"module 'cubepy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_RUNTIME))
