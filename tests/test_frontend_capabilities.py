"""The frontend's capability checks (atomic element types, plane element types, line
sizes of shared memory) read `cubepy.targets.PORTABLE`, the capabilities every built-in
target shares, instead of tables of their own."""
from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

import cubepy
from cubepy import Array, Line, SharedMemory, f32, i32, u32
from cubepy.frontend import intrinsics
from cubepy.targets import PORTABLE


@pytest.fixture
def portable(monkeypatch):
    """Replaces what the frontend allows for one test."""
    def use(**changes):
        monkeypatch.setattr(intrinsics, "PORTABLE", dataclasses.replace(PORTABLE, **changes))
    return use


def test_the_frontend_allows_what_every_built_in_target_shares():
    assert PORTABLE.atomic_dtypes["add"] == {"i32", "u32", "f32"}
    assert PORTABLE.atomic_dtypes["and"] == {"i32", "u32"}
    assert PORTABLE.plane_dtypes == {"i32", "u32", "f32", "f16", "bool"}
    assert PORTABLE.line_sizes == (1, 2, 4, 8)
    assert intrinsics.PORTABLE is PORTABLE


@cubepy.cube(launch=True)
def _atomic_i32(a: Array[i32]):
    cubepy.atomic_max(a, 0, i32(1))


@cubepy.cube(launch=True)
def _atomic_f32(a: Array[f32]):
    cubepy.atomic_add(a, 0, f32(1.0))


def test_atomic_element_types_come_from_the_registry(portable):
    assert "atomicAdd" in _atomic_f32.source("cuda")
    assert "atomicAdd" in _f16_atomic().source("cuda")  # CUDA's own: f16 add
    portable(atomic_dtypes=MappingProxyType({**PORTABLE.atomic_dtypes,
                                             "max": frozenset({"u32"})}),
             atomic_dtypes_anywhere=MappingProxyType({**PORTABLE.atomic_dtypes_anywhere,
                                                      "max": frozenset({"u32"})}))
    with pytest.raises(cubepy.CompileError,
                       match=r"atomic_max\(\) needs u32 elements, but 'a' holds i32"):
        _atomic_i32.source("cuda")


def _f16_atomic():
    @cubepy.cube(launch=True)
    def k(a: Array[cubepy.f16]):
        cubepy.atomic_add(a, 0, cubepy.f16(1.0))
    return k


def test_plane_element_types_come_from_the_registry(portable):
    @cubepy.cube(launch=True)
    def k(x: Array[u32], out: Array[u32]):
        out[cubepy.UNIT_POS] = cubepy.plane_sum(x[cubepy.UNIT_POS])

    assert "plane_sum" in k.ir()
    portable(plane_dtypes=frozenset({"i32", "f32", "bool"}),
             plane_dtypes_any=frozenset({"i32", "f32", "bool"}))
    with pytest.raises(cubepy.CompileError,
                       match=r"plane_sum\(\) takes i32 or f32 values, not u32"):
        k.ir()


def test_shared_line_sizes_come_from_the_registry(portable):
    @cubepy.cube(launch=True)
    def k(x: Array[Line[f32]]):
        tile = SharedMemory(Line[f32], 4, 8)
        tile[0] = x[0]
        x[0] = tile[0]

    assert "tile" in k.ir(line_sizes={"x": 8})
    portable(line_sizes=(1, 2, 4))
    with pytest.raises(cubepy.CompileError,
                       match="the line size of SharedMemory must be 1, 2 or 4, known at "
                             "compile time"):
        k.ir(line_sizes={"x": 8})
