"""Kernels ported from the peers' own test suites and examples (Numba CUDA, cupyx.jit,
CubeCL, Triton), each with the original inputs and the original check.

Every case is a function `run(client)` that builds the original inputs, launches the
ported kernel and asserts what the original test asserts (the expected output it states,
or its reference computation). tests/test_ported_gallery.py runs every case on every
runtime present. A case lists the element types it needs; where the original computes in
float64 and the device has no f64 (WebGPU), the case runs in f32 with an f32 tolerance
(`best_float`), which the case says.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import cubepy
from cubepy import f32, f64


@dataclass(frozen=True)
class PortedCase:
    name: str
    origin: str  # "project: path::test" of the original
    run: Callable
    needs: tuple = field(default=())  # element types the device must have


CASES: list[PortedCase] = []


def ported(origin: str, needs: tuple = ()):
    """Registers `run(client)` as a ported case named after the function."""
    def register(fn):
        CASES.append(PortedCase(fn.__name__, origin, fn, tuple(needs)))
        return fn
    return register


def best_float(client) -> tuple[cubepy.DType, float]:
    """f64 where the device has it (as the originals use), else f32; with the relative
    tolerance to check at."""
    if f64 in client.limits.dtypes:
        return f64, 1e-12
    return f32, 2e-6


@cubepy.cube(launch=True)
def _plane_width(out: cubepy.Array[cubepy.u32]):
    out[0] = cubepy.PLANE_DIM


def plane_width(client) -> int:
    """The plane size kernels see on this client (32 on CUDA and cpu, 8 on llvmpipe)."""
    out = client.zeros(1, cubepy.u32)
    _plane_width.launch(client, cubepy.CubeCount(1), cubepy.CubeDim(32), out)
    return int(out.numpy()[0])
