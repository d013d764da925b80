"""The L2 flush that GPU timers run before each timed repetition: a kernel reading a
zeroed scratch buffer whole (cubepy/timing.py; imported by the first GPU timer that
flushes, so `import cubepy` does not build the kernel).

Reading, not clearing: a cleared buffer leaves L2 full of dirty lines, which the timed
kernel's own traffic must write back first, and how much of that write-back is still
pending when it starts varies from repetition to repetition. On an H200 short kernels
timed after a clear ran 1-3 us slower at the median and at times spread by several
microseconds more (IQR up to 8.5 us), against an IQR of 0.1-0.5 us after a read
(benchmarks/results/flush_noise_h200.md). After a read L2 holds only clean lines of the
scratch buffer: none of the timed work's data, and nothing to write back.
"""
from __future__ import annotations

from . import ABSOLUTE_POS, Array, CubeCount, CubeDim, Line, cube, u32

CUBES, UNITS = 1024, 256  # enough loads in flight to read at the memory's speed


@cube(launch=True)
def read_scratch(x: Array[Line[u32]], found: Array[u32], stride: u32):
    """ORs every line of x, units `stride` lines apart. It stores only a set bit it
    found, which a zeroed buffer never has: the kernel only reads."""
    acc = u32(0)
    i = ABSOLUTE_POS
    while i < len(x):
        v = x[i]
        acc = acc | v[0] | v[1] | v[2] | v[3]
        i += stride
    if acc != u32(0):
        found[0] = acc


class ReadFlush:
    """Reads `nbytes` (rounded down to 16) of zeroed device memory on `client`'s stream
    (CUDA) or in its open batch (wgpu) each time it is called."""

    def __init__(self, client, nbytes: int) -> None:
        self.client = client
        self.nbytes = nbytes // 16 * 16
        self.scratch = client.zeros((self.nbytes // 4,), u32).with_line_size(4)
        self.found = client.zeros((1,), u32)

    def __call__(self) -> None:
        read_scratch.launch_unchecked(self.client, CubeCount(CUBES), CubeDim(UNITS),
                                      self.scratch, self.found, CUBES * UNITS)
