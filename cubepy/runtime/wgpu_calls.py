"""The per-launch commands of the wgpu runtime, called as directly as wgpu-py allows.

wgpu-py wraps every wgpu-native function in a proxy that captures errors around the
call, and its `set_bind_group` builds a new C array of offsets each time: about 1 us a
command on a fast host, as much as the rest of a cached launch. The commands recorded
per launch (`set_pipeline`, `set_bind_group`, `dispatch_workgroups`) cannot fail there:
wgpu-native validates a compute pass when its encoder finishes, and `finish()` keeps
wgpu-py's error capture, so calling the three functions directly loses no error.

One PassCalls per client: its offsets array is shared by its calls, which run under
the client's lock.

Where the backend is not wgpu-native or its internals moved, `PassCalls` uses the public
methods instead (same behaviour, slower). `wait_idle` is `device._poll_wait()`
(wgpuDevicePoll with wait), half the cost of a mapped read on a software adapter; None
where that is absent.
"""
from __future__ import annotations

from typing import Any, Callable


class PassCalls:
    """`dispatch(h, x, y, z)`, `set_pipeline(h, pipeline)` and `set_bind_group(h, group,
    offset)` on the compute pass whose `handle(pass)` is h; `offset` is the info
    struct's dynamic offset or None."""

    def __init__(self, native: bool = True) -> None:
        """`native=False`: wgpu-py's public methods even where wgpu-native is there."""
        try:
            if not native:
                raise ImportError
            from wgpu.backends.wgpu_native._ffi import ffi, lib
            self.dispatch: Callable = lib.wgpuComputePassEncoderDispatchWorkgroups
            self._set_pipeline = lib.wgpuComputePassEncoderSetPipeline
            self._set_group = lib.wgpuComputePassEncoderSetBindGroup
            self._offsets = ffi.new("uint32_t[1]")  # wgpu-native copies it per call
            self._no_offsets = ffi.NULL
            self.native = True
        except (ImportError, AttributeError):
            self.native = False
            self.dispatch = lambda cpass, x, y, z: cpass.dispatch_workgroups(x, y, z)

    def handle(self, cpass: Any) -> Any:
        """What `dispatch`, `set_pipeline` and `set_bind_group` take for this pass."""
        return cpass._internal if self.native else cpass

    def set_pipeline(self, handle: Any, pipeline: Any) -> None:
        if self.native:
            self._set_pipeline(handle, pipeline._internal)
        else:
            handle.set_pipeline(pipeline)

    def set_bind_group(self, handle: Any, group: Any, offset: int | None) -> None:
        if not self.native:
            handle.set_bind_group(0, group, () if offset is None else (offset,))
        elif offset is None:
            self._set_group(handle, 0, group._internal, 0, self._no_offsets)
        else:
            self._offsets[0] = offset
            self._set_group(handle, 0, group._internal, 1, self._offsets)


def wait_idle(device: Any) -> Callable[[], None] | None:
    """A function that blocks until the work submitted to `device` is done, or None."""
    poll = getattr(device, "_poll_wait", None)
    return poll if callable(poll) else None
