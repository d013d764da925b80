"""Reductions over a whole cube, shared by the benchmark kernels: `plane_sum` /
`plane_max` within each plane, then the planes' partials through shared memory. Every
unit gets the result. `row_sum` / `row_max` reduce over the units holding one row: the
cube, or (a plane per row) the plane; `group_sum` over a group of consecutive units
(one row of several in a cube)."""
from __future__ import annotations

import cubepy
from cubepy import CUBE_DIM, PLANE_DIM, UNIT_POS, UNIT_POS_PLANE, Comptime, SharedMemory, \
    cube, f32, sync_cube, u32

MAX_PLANES = 128  # room for planes of 8 units in a cube of 1024


@cube
def planes_total(s: f32, planes: u32, first: u32) -> f32:
    """The sum of the plane totals `s` (each plane's, from `plane_sum`) of the cube's
    planes `first` .. `first + planes - 1`, through shared memory; every unit gets it."""
    parts = SharedMemory(f32, MAX_PLANES)
    if UNIT_POS_PLANE == 0:
        parts[UNIT_POS // PLANE_DIM] = s
    sync_cube()
    total = f32(0.0)
    for p in range(planes):
        total += parts[first + p]
    sync_cube()  # everyone has read `parts` before a later call writes it again
    return total


@cube
def cube_sum(v: f32) -> f32:
    """The sum of `v` over every unit of the cube."""
    return planes_total(cubepy.plane_sum(v), CUBE_DIM // PLANE_DIM, 0)


@cube
def cube_max(v: f32) -> f32:
    """The maximum of `v` over every unit of the cube."""
    parts = SharedMemory(f32, MAX_PLANES)
    m = cubepy.plane_max(v)
    if UNIT_POS_PLANE == 0:
        parts[UNIT_POS // PLANE_DIM] = m
    sync_cube()
    best = parts[0]
    for p in range(1, CUBE_DIM // PLANE_DIM):
        best = max(best, parts[p])
    sync_cube()
    return best


@cube
def row_sum(v: f32, plane: Comptime[int]) -> f32:
    """The sum of `v` over the cube (`plane` 0: a cube per row) or over this unit's
    plane (a plane per row)."""
    total = v
    if plane == 0:
        total = cube_sum(v)
    else:
        total = cubepy.plane_sum(v)
    return total


@cube
def row_max(v: f32, plane: Comptime[int]) -> f32:
    """The maximum of `v` over the cube (`plane` 0) or over this unit's plane."""
    best = v
    if plane == 0:
        best = cube_max(v)
    else:
        best = cubepy.plane_max(v)
    return best


@cube
def group_sum(v: f32, group: Comptime[int], plane: Comptime[int]) -> f32:
    """The sum of `v` over this unit's group of `group` consecutive units: the whole cube
    when `group` is 0 (`cube_sum`), a plane sum when the group is one plane (`plane`, the
    PLANE_DIM the kernel runs with), else the sums of the group's planes through shared
    memory (`group` a multiple of the plane size)."""
    total = v
    if group == 0:
        total = cube_sum(v)
    else:
        total = cubepy.plane_sum(v)
        if group != plane:
            planes = group // PLANE_DIM
            total = planes_total(total, planes, (UNIT_POS // group) * planes)
    return total
