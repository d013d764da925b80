"""A cpu kernel loaded from its generated numpy code. Apart from codegen/numpy_gen.py so
that a kernel whose code comes from the disk cache runs without the code generator or
the IR (spec_cache.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..abi import KernelABI
    from ..codegen.compiled import Compiled
    from ..ir import nodes as ir


@dataclass
class CpuProgram:
    """A kernel compiled to Python: `fn(_L, _B, _bufs, _F, _bi, _cl)` runs one batch."""

    fn: object
    source: str
    builtins: frozenset  # position builtins the kernel reads
    kernel: ir.Kernel
    abi: KernelABI


def load_program(compiled: Compiled, kernel: ir.Kernel, abi: KernelABI) -> CpuProgram:
    """Runs generated numpy source (generate_numpy) into its kernel function."""
    namespace = dict(compiled.namespace)
    code = compile(compiled.source, f"<cubepy cpu {kernel.name}>", "exec")
    exec(code, namespace)
    return CpuProgram(namespace[compiled.entry], compiled.source, compiled.positions,
                      kernel, abi)
