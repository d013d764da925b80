"""A readable text form of the IR (parsed back by cubepy/ir/parser.py)."""
from __future__ import annotations

from . import nodes as ir


def print_kernel(kernel: ir.Kernel) -> str:
    """The kernel as text."""
    params = ", ".join(f"{p.name}: {p.kind}<{p.dtype.name}>" for p in kernel.params)
    lines = [f"kernel {kernel.name}({params}) cube_dim{kernel.cube_dim} {{"]
    for d in kernel.shared:
        lines.append(f"  shared {d.buffer.name}: {d.buffer.elem.name}[{d.size}]")
    for s in kernel.body.stmts:
        lines.append(f"  {s!r}")
    lines.append("}")
    return "\n".join(lines) + "\n"
