"""Sum of a large f32 vector with plane operations and one atomic per plane.

A fixed number of cubes walks the vector in a grid-stride loop over lines (line size 4
when the length allows it), each unit keeping one running line of sums; `plane_sum`
combines the units of each plane and lane 0 of every plane adds the plane's total into
the result with `atomic_add`. No shared memory, no second kernel: a few thousand atomics
for the whole vector. The result buffer must be zeroed before each launch.
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import (ABSOLUTE_POS, CUBE_COUNT, CUBE_DIM, UNIT_POS_PLANE, Array, CubeCount,
                    CubeDim, Float, Line, Tensor, cube, f32, unroll)

UNITS = 256
CUBES = 1056  # 8 cubes of 256 units per SM of an H200 (132 SMs): every SM stays busy


@cube
def zeros_like(v: Float) -> Float:
    """A zero of v's type: a zero line for a line (x[0] * 0.0 would be NaN for an inf)."""
    return Float(0.0)


@cube(launch=True)
def reduce_sum(x: Tensor[Line[f32]], total: Array[f32]):
    """total[0] += the sum of every element of x."""
    acc = zeros_like(x[0])
    for i in range(ABSOLUTE_POS, x.len(), CUBE_COUNT * CUBE_DIM):
        acc += x[i]
    s = f32(0.0)
    for k in unroll(range(x.line_size())):
        s += acc[k]
    s = cubepy.plane_sum(s)
    if UNIT_POS_PLANE == 0:
        cubepy.atomic_add(total, 0, s)


def line_size_for(n: int) -> int:
    return 4 if n % 4 == 0 else (2 if n % 2 == 0 else 1)


def run(client, x, total, checked: bool = True, cubes: int = CUBES) -> None:
    """total[0] += sum(x) (zero `total` first for the plain sum)."""
    xl = x.with_line_size(line_size_for(x.shape[-1]))
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
