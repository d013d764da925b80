"""Code generators: one per target, sharing the C-like core (clike.py) where it fits.

`generate(kernel, target, abi, checked)` turns a specialised, legalised kernel into a
`Compiled` record (source, entry name, bindings, device features); runtimes take that
record, so the source is generated once. `emit(...)` is its source alone.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..abi import KernelABI
from .compiled import Compiled, make_compiled

if TYPE_CHECKING:  # (runtimes load this package; the IR loads with the first compile)
    from ..ir.nodes import Kernel


def generate(kernel: Kernel, target: str, abi: KernelABI, checked: bool) -> Compiled:
    """The generated code of `kernel` for `target` (a registered target: "cuda",
    "wgsl", "metal", or "cpu", the numpy code of the cpu runtime) as a Compiled record.
    An unknown target is an OptionError naming the registered ones."""
    from ..targets import get_target  # (the registry imports codegen/reserved.py)
    record = get_target(target)
    emitter = record.emit_function()
    # A built-in emitter that returns text names its full-record twin (`emit_cuda.record
    # is generate_cuda`), so the record's entry, features and hooks come from the walk.
    result = getattr(emitter, "record", emitter)(kernel, abi, checked)
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
