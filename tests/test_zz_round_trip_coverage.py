"""The session-wide IR round-trip check (tests/conftest.py) really ran."""
from conftest import CHECKED_KERNELS

from corpus import axpy
import cubepy


def test_round_trip_check_sees_built_kernels():
    before = len(CHECKED_KERNELS)
    axpy.ir(cube_dim=(32, 1, 1), Float=cubepy.f16)  # a specialisation no other test uses
    assert len(CHECKED_KERNELS) >= before + 2  # after the frontend and after the passes
    assert CHECKED_KERNELS[-1] == "axpy"
