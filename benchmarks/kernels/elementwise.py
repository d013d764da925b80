"""Elementwise with lines: out = max(x + y, 0), one line per unit.

The same source serves every line size (chosen at launch with `with_line_size`); the
benchmark runs it checked and unchecked. It moves 3 f32 per element (two reads, one
write), so its bandwidth compares directly with a device copy's.
"""
from __future__ import annotations

import numpy as np

import cubepy
from cubepy import ABSOLUTE_POS, CubeCount, CubeDim, Float, Line, Tensor, cube, select

UNITS = 256


@cube(launch=True)
def add_relu(x: Tensor[Line[Float]], y: Tensor[Line[Float]], out: Tensor[Line[Float]]):
    """out = max(x + y, 0) elementwise."""
    i = ABSOLUTE_POS
    if i < out.len():
        v = x[i] + y[i]
        out[i] = select(v > Float(0.0), v, Float(0.0))


def line_size_for(n: int, dtype) -> int:
    """The widest line of at most 16 bytes (one vector access: 4 f32, 8 f16) dividing n."""
    for size in (8, 4, 2):
        if size * dtype.itemsize <= 16 and n % size == 0:
            return size
    return 1


def run(client, x, y, out, checked: bool = True, line_size: int | None = None) -> None:
    """out = max(x + y, 0); the last dimension must be a multiple of `line_size` (by
    default the widest line of 16 bytes that divides it)."""
    if line_size is None:
        line_size = line_size_for(out.shape[-1], out.dtype)
    xl, yl, ol = (t.with_line_size(line_size) for t in (x, y, out))
    launch = add_relu.launch if checked else add_relu.launch_unchecked
    launch(client, CubeCount(-(-ol.len // UNITS)), CubeDim(UNITS), xl, yl, ol)


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.maximum(x + y, 0)


def example(client, n: int = 10_000, line_size: int | None = None, checked: bool = True,
            seed: int = 0) -> None:
    """Runs the kernel at a small size and checks it against numpy (raises if wrong)."""
    rng = np.random.default_rng(seed)
    x_h = rng.standard_normal(n).astype(np.float32)
    y_h = rng.standard_normal(n).astype(np.float32)
    x, y, out = client.tensor(x_h), client.tensor(y_h), client.zeros((n,), cubepy.f32)
    run(client, x, y, out, checked=checked, line_size=line_size)
    np.testing.assert_array_equal(out.numpy(), reference(x_h, y_h))


if __name__ == "__main__":
    example(cubepy.client())
    print("elementwise: OK")
