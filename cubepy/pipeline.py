"""Asynchronous copies from global to shared memory: CUDA's pipeline primitives
(`__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior`) and CubeCL's
`memcpy_async` with its pipeline.

Each unit issues its own copies and tracks its own groups of them. Inside a @cube
function:

    pipeline.memcpy_async(tile, i, a, j)   # tile[i] = a[j], in flight (tile: shared)
    pipeline.commit()                       # closes this unit's group of copies
    pipeline.wait(1)                        # until at most 1 of its groups is pending
    sync_cube()                             # then every unit sees every unit's copies

A copy moves one element or one line of 4, 8 or 16 bytes. A unit may read what its own
copies wrote once a `wait` covers their group; another unit's copies, after the copying
unit's `wait` and a `sync_cube()` both have passed. CUDA (sm_80 and later) issues
`cp.async`; other targets and older GPUs copy at once, which the rule above makes
indistinguishable. Details: docs/LANGUAGE.md, "Asynchronous copies". Calling these
outside a kernel raises a TypeError.
"""
from __future__ import annotations

from .lang import Intrinsic

memcpy_async = Intrinsic(
    "pipeline.memcpy_async", "pipeline.memcpy_async(dst, dst_index, src, src_index): "
    "dst[dst_index] = src[src_index] started asynchronously; dst is shared memory, src a "
    "tensor or array of the same element type and line size (4, 8 or 16 bytes).")
commit = Intrinsic("pipeline.commit", "pipeline.commit(): closes the calling unit's group "
                   "of asynchronous copies issued since its last commit.")
wait = Intrinsic("pipeline.wait", "pipeline.wait(n): waits until at most n (a compile-time "
                 "int) of the calling unit's committed groups are still in flight.")

# name -> intrinsic, for the frontend's registry (frontend/values.py)
PIPELINE_INTRINSICS: dict[str, Intrinsic] = {
    obj.name: obj for obj in (memcpy_async, commit, wait)}

__all__ = ["memcpy_async", "commit", "wait"]
