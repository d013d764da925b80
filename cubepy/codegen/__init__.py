"""Code generators: one per target, sharing the C-like core (clike.py) where it fits.

`generate(kernel, target, abi, checked)` turns a specialised, legalised kernel into a
`Compiled` record (source, entry name, bindings, device features); runtimes take that
record, so the source is generated once. `emit(...)` is its source alone.
"""
from __future__ import annotations

from importlib import import_module

from ..abi import KernelABI
from ..ir.nodes import Kernel
from .compiled import Compiled

TARGETS = ("cuda", "wgsl", "metal")
# Target -> "module:function" of its generator, imported on first use.
_GENERATORS = {"cuda": "cuda:generate_cuda", "wgsl": "wgsl:generate_wgsl",
               "metal": "metal:generate_metal", "cpu": "numpy_gen:generate_numpy"}


def generate(kernel: Kernel, target: str, abi: KernelABI, checked: bool) -> Compiled:
    """The generated code of `kernel` for `target` ("cuda", "wgsl", "metal" or "cpu",
    the numpy code of the cpu runtime) as a Compiled record."""
    where = _GENERATORS.get(target)
    if where is None:
        raise ValueError(f"unknown target {target!r}: expected one of "
                         f"{', '.join(_GENERATORS)}")
    module, function = where.split(":")
    return getattr(import_module(f".{module}", __name__), function)(kernel, abi, checked)


def emit(kernel: Kernel, target: str, abi: KernelABI, checked: bool) -> str:
    """Source code for `target` ("cuda", "wgsl" or "metal")."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}: expected one of {TARGETS}")
    return generate(kernel, target, abi, checked).source
