"""Plane votes, product scans, barriers and fences as a type checker sees them
(tests/test_typing.py runs mypy and pyright here; each assert_type pins a type). Not
collected by pytest."""
from typing import assert_type

import cubepy
from cubepy import (ABSOLUTE_POS, UNIT_POS_PLANE, Array, Line, cube, f32,
                    fence_cube, fence_device, plane_ballot, plane_elect,
                    plane_exclusive_prod, plane_inclusive_prod, sync_plane, u32)


@cube(launch=True)
def votes_and_fences(x: Array[f32], words: Array[u32], out: Array[f32]):
    i = ABSOLUTE_POS
    mask = plane_ballot(x[i] > 0.0)
    assert_type(mask, Line[u32])
    words[i] = mask[UNIT_POS_PLANE // 32]
    first = plane_elect()
    assert_type(first, bool)
    p = plane_inclusive_prod(x[i]) + plane_exclusive_prod(x[i])
    assert_type(p, f32)
    sync_plane()
    fence_cube()
    out[i] = cubepy.select(first, p, f32(0.0))
    fence_device()

