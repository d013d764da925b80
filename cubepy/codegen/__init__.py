"""Code generators: one per target, sharing the C-like core (clike.py) where it fits.

`generate(kernel, target, abi, checked)` turns a specialised, legalised kernel into a
`Compiled` record (source, entry name, bindings, device features); runtimes take that
record, so the source is generated once. `emit(...)` is its source alone.
"""
from __future__ import annotations

from importlib import import_module

from ..abi import KernelABI
from ..ir.nodes import Kernel
from .compiled import Compiled, make_compiled

# The built-in targets' generators of full records ("module:function" in this package,
# imported on first use). The registry's `emitter` of these targets gives the source
# alone; any other registered target's emitter (a string or a Compiled) is used as is.
_GENERATORS = {"cuda": "cuda:generate_cuda", "wgsl": "wgsl:generate_wgsl",
               "metal": "metal:generate_metal", "cpu": "numpy_gen:generate_numpy"}


def generate(kernel: Kernel, target: str, abi: KernelABI, checked: bool) -> Compiled:
    """The generated code of `kernel` for `target` (a registered target: "cuda",
    "wgsl", "metal", or "cpu", the numpy code of the cpu runtime) as a Compiled record.
    An unknown target is an OptionError naming the registered ones."""
    from ..targets import get_target  # (the registry imports codegen/reserved.py)
    record = get_target(target)
    where = _GENERATORS.get(target)
    if where is not None:
        module, function = where.split(":")
        return getattr(import_module(f".{module}", __name__), function)(kernel, abi, checked)
    result = record.emit_function()(kernel, abi, checked)
    if isinstance(result, Compiled):
        return result
    # Text alone: the entry is taken to be the kernel's own name (an emitter that
    # renames it returns a Compiled saying so).
    return make_compiled(target, kernel, abi, result, kernel.name,
                         bool_bytes=record.bool_storage_bytes)


def emit(kernel: Kernel, target: str, abi: KernelABI, checked: bool) -> str:
    """Source code for a target that shows its source ("cuda", "wgsl", "metal", ...)."""
    from ..targets import source_targets
    if target not in source_targets():
        raise ValueError(f"unknown target {target!r}: expected one of "
                         f"{', '.join(source_targets())}")
    return generate(kernel, target, abi, checked).source
