"""Sum of a large f32 vector with plane operations and one atomic per plane.

A fixed number of cubes walks the vector in a grid-stride loop over lines (line size 4
when the length allows it), each unit keeping one running line of sums; `plane_sum`
combines the units of each plane and lane 0 of every plane adds the plane's total into
the result with `atomic_add`. No shared memory, no second kernel: a few thousand atomics
for the whole vector. The result buffer must be zeroed before each launch.

On wgpu the planes' totals go through shared memory to one partial sum per cube and a
second one-cube kernel adds the partials (`reduce_sum_partials`, `sum_partials`): WGSL
has no float atomics (a compare-exchange loop, or a device feature), and thousands of
them on one address serialise (11 ms for 256M floats on an H200 through Vulkan).
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (ABSOLUTE_POS, CUBE_COUNT, CUBE_DIM, CUBE_POS, UNIT_POS, UNIT_POS_PLANE,
                    Array, CubeCount, CubeDim, Float, Line, Tensor, cube, f32, unroll)

from .cube_reduce import cube_sum

UNITS = 256
CUBES = 1056  # 8 cubes of 256 units per SM of an H200 (132 SMs): every SM stays busy


@cube
def zeros_like(v: Float) -> Float:
    """A zero of v's type: a zero line for a line (x[0] * 0.0 would be NaN for an inf)."""
    return Float(0.0)


@cube(launch=True)
def reduce_sum(x: Tensor[Line[f32]], total: Array[f32]):
    """total[0] += the sum of every element of x."""
    s = cubepy.plane_sum(unit_total(x))
    if UNIT_POS_PLANE == 0:
        cubepy.atomic_add(total, 0, s)


@cube
def unit_total(x: Tensor[Line[f32]]) -> f32:
    """This unit's grid-stride sum over x, its line's elements added up."""
    acc = zeros_like(x[0])
    for i in range(ABSOLUTE_POS, x.len(), CUBE_COUNT * CUBE_DIM):
        acc += x[i]
    s = f32(0.0)
    for k in unroll(range(x.line_size())):
        s += acc[k]
    return s


@cube(launch=True)
def reduce_sum_partials(x: Tensor[Line[f32]], partials: Array[f32]):
    """partials[cube] = this cube's share of the sum of x (no atomics)."""
    total = cube_sum(unit_total(x))
    if UNIT_POS == 0:
        partials[CUBE_POS] = total


@cube(launch=True)
def sum_partials(partials: Array[f32], total: Array[f32]):
    """total[0] += the sum of the partials (one cube)."""
    s = f32(0.0)
    for i in range(UNIT_POS, len(partials), CUBE_DIM):
        s += partials[i]
    acc = cube_sum(s)
    if UNIT_POS == 0:
        total[0] = total[0] + acc


_PARTIALS: dict = {}  # (client id, cubes) -> the partial sums buffer


def line_size_for(n: int) -> int:
    return 4 if n % 4 == 0 else (2 if n % 2 == 0 else 1)


def run(client, x, total, checked: bool = True, cubes: int = CUBES) -> None:
    """total[0] += sum(x) (zero `total` first for the plain sum)."""
    xl = x.with_line_size(line_size_for(x.shape[-1]))
    if client.runtime == "wgpu":
        key = (id(client), cubes)
        partials = _PARTIALS.get(key)
        if partials is None or partials.client is not client:
            partials = _PARTIALS[key] = client.zeros((cubes,), f32)
        first = reduce_sum_partials.launch if checked else \
            reduce_sum_partials.launch_unchecked
        first(client, CubeCount(cubes), CubeDim(UNITS), xl, partials)
        second = sum_partials.launch if checked else sum_partials.launch_unchecked
        second(client, CubeCount(1), CubeDim(UNITS), partials, total)
        return
    launch = reduce_sum.launch if checked else reduce_sum.launch_unchecked
    launch(client, CubeCount(cubes), CubeDim(UNITS), xl, total)


def reference(x: np.ndarray) -> np.float64:
    return x.astype(np.float64).sum()


def example(client, n: int = 100_003, seed: int = 0) -> None:
    """Runs the kernel at a small size and checks it against numpy (raises if wrong)."""
    rng = np.random.default_rng(seed)
    x_h = rng.random(n).astype(np.float32)
    x, total = client.tensor(x_h), client.zeros((1,), f32)
    run(client, x, total, cubes=16)
    np.testing.assert_allclose(total.numpy()[0], reference(x_h), rtol=1e-5)


if __name__ == "__main__":
    example(cubepy.client())
    print("reduce_sum: OK")
