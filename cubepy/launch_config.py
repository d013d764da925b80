"""CubeCount and CubeDim: the launch grid, as in CubeCL."""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np


class CubeDim(NamedTuple):
    """Units per cube (threads per block / invocations per workgroup)."""

    x: int = 1
    y: int = 1
    z: int = 1

    @property
    def num_units(self) -> int:
        return self.x * self.y * self.z


class CubeCount(NamedTuple):
    """Cubes per launch (blocks per grid / workgroups per dispatch)."""

    x: int = 1
    y: int = 1
    z: int = 1

    @property
    def num_cubes(self) -> int:
        return self.x * self.y * self.z

    @classmethod
    def cover(cls, shape: int | Sequence[int], cube_dim: int | Sequence[int]) -> "CubeCount":
        """The smallest cube count whose cubes of `cube_dim` units cover `shape` (1 to 3
        sizes, x first): `ceil(shape[i] / cube_dim[i])` per axis.

            CubeCount.cover(1000, CubeDim(256))               # CubeCount(4, 1, 1)
            CubeCount.cover((100, 30), CubeDim(16, 16))       # CubeCount(7, 2, 1)

        An empty axis still gets one cube, which the kernel's bounds check leaves idle
        (a cube count of 0, which launches nothing, is for the caller to choose).
        """
        sizes = _axes(shape, "shape", minimum=0)
        dims = _axes(cube_dim, "cube_dim", minimum=1)
        return cls(*(max(1, -(-s // d)) for s, d in zip(sizes, dims)))


def _axes(value: int | Sequence[int], what: str, minimum: int) -> tuple[int, int, int]:
    """1 to 3 integer sizes >= minimum, padded with 1 to three axes."""
    items = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{what} must have 1 to 3 sizes, got {value!r}")
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
            raise ValueError(f"{what} sizes must be integers >= {minimum}, got {value!r}")
    return tuple(int(v) for v in items) + (1,) * (3 - len(items))  # type: ignore[return-value]
