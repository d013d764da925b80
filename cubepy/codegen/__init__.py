"""Code generators: one per target, sharing the C-like core (clike.py) where it fits.

`emit(kernel, target, abi, checked)` turns a specialised, legalised kernel into source.
"""
from __future__ import annotations

from ..abi import KernelABI
from ..ir.nodes import Kernel

TARGETS = ("cuda", "wgsl", "metal")


def emit(kernel: Kernel, target: str, abi: KernelABI, checked: bool) -> str:
    """Source code for `target` ("cuda", "wgsl" or "metal")."""
    if target == "cuda":
        from .cuda import emit_cuda
        return emit_cuda(kernel, abi, checked)
    if target == "wgsl":
        from .wgsl import emit_wgsl
        return emit_wgsl(kernel, abi, checked)
    if target == "metal":
        from .metal import emit_metal
        return emit_metal(kernel, abi, checked)
    from ..targets import get_target, source_targets  # other targets name their emitter
    if target in TARGETS or target not in source_targets():
        raise ValueError(f"unknown target {target!r}: expected one of {TARGETS}")
    return get_target(target).emit_function()(kernel, abi, checked)
