"""fusion.explain: the kernels a result needs, what each fused, and its source."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class KernelReport:
    """One kernel of a plan."""

    name: str
    kind: str  # "elementwise", "reduce" or "matmul"
    fused_ops: list[str]  # the operations it evaluates, in order
    inputs: list[tuple[int, ...]]  # shapes of the buffers it reads
    outputs: list[tuple[int, ...]]  # shapes of the buffers it writes
    cube_count: tuple[int, int, int]
    cube_dim: tuple[int, int, int]
    source: str  # generated for the client's target

    @property
    def bytes_moved(self) -> int:
        """Bytes the kernel reads and writes at least once (its memory traffic floor)."""
        return self._bytes

    def __str__(self) -> str:
        return (f"{self.name} [{self.kind}] fuses {', '.join(self.fused_ops) or 'a copy'}: "
                f"reads {', '.join(map(str, self.inputs)) or 'nothing'} -> writes "
                f"{', '.join(map(str, self.outputs))} (cube count {self.cube_count}, "
                f"cube dim {self.cube_dim})")


@dataclass
class Explanation:
    """What evaluating the tensors would run: `kernels` in launch order."""

    kernels: list[KernelReport]
    target: str

    @property
    def bytes_moved(self) -> int:
        return sum(k.bytes_moved for k in self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)

    def __str__(self) -> str:
        lines = [f"{len(self.kernels)} kernel(s) for {self.target}, "
                 f"{self.bytes_moved / 1e6:.3f} MB moved:"]
        lines += [f"  {i}. {k}" for i, k in enumerate(self.kernels, 1)]
        return "\n".join(lines)

    def sources(self) -> str:
        """Every kernel's generated source, one after the other."""
        return "\n\n".join(k.source for k in self.kernels)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython
        p.text(str(self))


def explain(*tensors, fuse: bool = True) -> Explanation:
    """The kernels evaluating `tensors` would launch (nothing runs): for each, the
    operations it fused, the buffers it reads and writes, and its generated source for
    the client's target."""
    from .runner import build_all, evaluated_now, source_of
    if not tensors:
        raise TypeError("explain needs at least one lazy tensor")
    client = tensors[0].client
    evaluated = evaluated_now()
    built = build_all([t.node for t in tensors], evaluated, fuse)
    reports = []
    for b in built:
        ins = [tuple(node.shape) for _, node in b.inputs]
        outs = [tuple(o.shape) for o in b.outputs]
        r = KernelReport(b.name, b.plan.kind, list(b.fused_ops), ins, outs, b.cube_count,
                         b.kernel.cube_dim, source_of(b.kernel, client.target))
        r._bytes = sum(_nbytes(node) for _, node in b.inputs) + \
            sum(_nbytes(o) for o in b.outputs)
        reports.append(r)
    return Explanation(reports, client.target)


def _nbytes(node) -> int:
    import math
    return math.prod(node.shape) * node.dtype.itemsize
