"""Submitting the wgpu runtime's batches, in the launching thread or in one of their own.

A batch's submit is where wgpu-native does most of its work for the batch's dispatches
(`finish()` validates the recorded pass and encodes it for the driver; the submit hands
it over): about 3 us a dispatch on an H200's Vulkan driver, about as much as recording
one. Both calls release the GIL. A batch closed because it reached its bound
(`MAX_BATCH` dispatches or `BATCH_SECONDS`) is therefore handed to a thread that
submits it while the launching thread records the next batch, and a loop of tiny
launches pays for the longer of the two rather than for both.

Order is kept by having one submitting thread, which takes the batches in the order
they were handed over, and by `drain()`: everything else that reaches the queue (a
submit in the launching thread, a write into a tensor, a wait) first waits for the
handed batches. At most `MAX_IN_FLIGHT` batches wait for the thread; the next hand-off
waits for the oldest, so a host that records faster than the driver takes batches does
not pile up command buffers.

A batch that fails in the thread (a validation error only `finish()` finds, a lost
device) is dropped, as a failed submit is in the launching thread, and its error is
raised by the next `drain()` or hand-off.
"""
from __future__ import annotations

from collections import deque
from typing import Any

MAX_IN_FLIGHT = 2  # batches handed to the submitting thread and not yet submitted


class Submitter:
    """Writes a batch's info structs into `info_buffer` and submits its encoder on
    `queue`: at once (`submit`) or from the submitting thread (`hand`)."""

    def __init__(self, queue: Any, info_buffer: Any) -> None:
        self._queue = queue
        self._info_buffer = info_buffer
        self._executor = None  # the submitting thread, started at the first hand-off
        self._handed: deque = deque()  # futures of the handed batches, oldest first

    def submit(self, encoder: Any, info: Any) -> None:
        """Writes `info` (bytes, or None when the device holds them already) at the
        info buffer's start, then submits the encoder, in this thread."""
        if info is not None:
            self._queue.write_buffer(self._info_buffer, 0, info)
        self._queue.submit([encoder.finish()])

    def hand(self, encoder: Any, info: bytes | None) -> None:
        """`submit` from the submitting thread. `info` must not change afterwards."""
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="cubepy-wgpu-submit")
        self._handed.append(self._executor.submit(self.submit, encoder, info))
        while len(self._handed) > MAX_IN_FLIGHT:
            self._handed.popleft().result()

    def drain(self) -> None:
        """Waits until every handed batch is submitted; raises the first one's error
        (every one is waited for even so)."""
        error = None
        while self._handed:
            failure = self._handed.popleft().exception()
            if error is None:
                error = failure
        if error is not None:
            raise error

    @property
    def in_flight(self) -> int:
        """Handed batches the thread may not have submitted yet."""
        return len(self._handed)
