"""`Compiled`: what a code generator hands to a runtime, so source is generated once.

A runtime reads what it needs from the record (entry name, device features, the numpy
namespace, the re-rendering hook for aliased WGSL bindings) instead of generating the
source again or scanning the generated text.
"""
from __future__ import annotations

from dataclasses import field
from types import MappingProxyType
from typing import Callable, Mapping

from typing import TYPE_CHECKING

from ..ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)
from ..abi import BufferBinding, KernelABI

if TYPE_CHECKING:  # (a runtime loads this module without the IR: cached kernels)
    from ..ir import nodes as n

# Position builtins that read the plane (subgroup) a unit belongs to.
PLANE_POSITIONS = frozenset({"plane_dim", "unit_pos_plane"})


@dataclass(frozen=True)
class Compiled:
    """The generated code of one specialised kernel for one target.

    `features` names what the code needs from a device: "f16", "bf16", "subgroups",
    "atomics", "shared". `render(promote)`, where set (wgsl), gives the source again
    with the buffer bindings in `promote` (ABI indices) declared read_write: WebGPU needs
    that when one buffer is bound to a read-only and a written parameter at once.
    """

    target: str
    source: str
    entry: str
    bindings: tuple[BufferBinding, ...]
    features: frozenset[str]
    shared_bytes: int
    # Names the code runs with (cpu: helpers, dtypes and constants); read-only.
    namespace: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}),
                                            repr=False)
    positions: frozenset[str] = frozenset()  # position builtins the kernel reads
    render: Callable[[frozenset[int]], str] | None = field(default=None, repr=False,
                                                           compare=False)
    # False (`@cube(launch=True, fast_math=False)`): strict floats, a chain evaluated as
    # written; the runtime compiles accordingly (cuda: --fmad=false). codegen/float_mode.py
    fast_math: bool = True
    # cuda: bytes of dynamic shared memory the launch gives (shared arrays over the
    # static 48 KB are carved from one `extern __shared__` block); 0 for static arrays.
    dynamic_shared_bytes: int = 0


def kernel_features(kernel: n.Kernel) -> frozenset[str]:
    """The device features a kernel's code needs, read from its IR."""
    from ..ir import nodes as n
    from ..ir.visit import walk_all_exprs, walk_stmts
    found: set[str] = set()
    types = {p.dtype.name for p in kernel.params} | {s.buffer.elem.name for s in kernel.shared}
    types |= {d.buffer.elem.name for d in kernel.local_arrays}
    for e in walk_all_exprs(kernel.body):
        types.add(e.ty.name)
        if isinstance(e, n.Plane) or (isinstance(e, n.Builtin) and e.name in PLANE_POSITIONS):
            found.add("subgroups")
    for s in walk_stmts(kernel.body):
        if isinstance(s, n.AtomicOp):
            found.add("atomics")
        var = getattr(s, "var", None)
        if var is not None:
            types.add(var.ty.name)
    found |= types & {"f16", "bf16"}
    if kernel.shared:
        found.add("shared")
    return frozenset(found)


def shared_bytes(kernel: n.Kernel, bool_bytes: int = 1) -> int:
    """Bytes of shared memory the kernel declares (a bool takes `bool_bytes`)."""
    return sum(s.size * (bool_bytes if s.buffer.elem.is_bool else s.buffer.elem.itemsize)
               for s in kernel.shared)


def make_compiled(target: str, kernel: n.Kernel, abi: KernelABI, source: str, entry: str,
                  features: frozenset[str] | None = None, bool_bytes: int = 1,
                  **extra) -> Compiled:
    """A record for `source` with the facts every target shares filled in from the IR."""
    namespace = extra.pop("namespace", None)
    if namespace is not None:
        extra["namespace"] = MappingProxyType(dict(namespace))
    return Compiled(target, source, entry, tuple(abi.buffers),
                    kernel_features(kernel) if features is None else features,
                    shared_bytes(kernel, bool_bytes), **extra)
