"""The pass pipeline: small named IR -> IR passes run in order by `run_pipeline`."""
from __future__ import annotations

from . import nodes as ir


def run_pipeline(kernel: ir.Kernel, target: str | None) -> ir.Kernel:
    """Runs the target-independent passes, then (when `target` is given) the target's
    legalisation. Returns a new kernel; `kernel` is left untouched."""
    return kernel
