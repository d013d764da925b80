"""CubeCount and CubeDim: the launch grid, as in CubeCL."""
from __future__ import annotations

from typing import NamedTuple


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
