"""The fusion planner: which kernels a set of requested results needs, and what each
one fuses.

- A reduction or a matmul gets a kernel of its own. The element-wise expression it reads
  is evaluated inside it, where it reads (fuse on read), and the chain of element-wise
  consumers that only it feeds, of its own shape, is evaluated where it writes (fuse on
  write): `relu(a @ b + bias)` is one kernel.
- The requested results that remain are element-wise: those of one shape are written by
  one kernel (several outputs sharing their inputs).
- Element-wise values read by several kernels are recomputed in each rather than stored
  (a memory round trip costs more than the arithmetic).
- With `fuse=False` every operation is its own kernel (the unfused baseline).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .graph import COMPUTE, Leaf, Map, MatMul, Node, Reduce, Scalar, Uses, View, topological


@dataclass
class PlannedKernel:
    """One kernel: its kind ("elementwise", "reduce", "matmul"), the compute node (for
    reduce/matmul) and the nodes it writes."""

    kind: str
    outputs: list[Node]
    compute: Node | None = None
    reads: list[Node] = field(default_factory=list)  # nodes computed by earlier kernels


def _epilogue(node: Node, uses: Uses, roots: set[int]) -> Node:
    """The last node of the chain of element-wise consumers only `node` feeds, of its
    shape (the value the kernel computing `node` writes)."""
    end = node
    while id(end) not in roots:
        readers = uses.of_node(end)
        if len(readers) != 1:
            break
        reader = readers[0]
        if not isinstance(reader, Map) or reader.shape != node.shape:
            break
        if any(_depends_on(arg, end) for arg in reader.args if arg is not end):
            break  # the other operand reads `end` too (through a view): keep it stored
        end = reader
    return end


def _depends_on(node: Node, target: Node) -> bool:
    return any(n is target for n in topological([node]))


def plan(roots: list[Node], evaluated: dict, fuse: bool = True) -> list[PlannedKernel]:
    """The kernels computing `roots` in an order that runs each after what it reads.
    `evaluated` maps id(node) -> tensor for nodes already in memory."""
    order = [n for n in topological(roots, evaluated) if id(n) not in evaluated]
    if not fuse:
        return _unfused(order, roots, evaluated)
    uses = Uses.of(order)
    root_ids = {id(r) for r in roots}
    kernels: list[PlannedKernel] = []
    writes: dict[int, PlannedKernel] = {}  # id(node) -> the kernel that stores it
    for node in order:
        if isinstance(node, COMPUTE):
            end = _epilogue(node, uses, root_ids)
            k = PlannedKernel("reduce" if isinstance(node, Reduce) else "matmul", [end], node)
            kernels.append(k)
            writes[id(end)] = k
    by_shape: dict[tuple, PlannedKernel] = {}
    for r in roots:
        if id(r) in writes or id(r) in evaluated or isinstance(r, Leaf):
            continue
        k = by_shape.get(r.shape)
        if k is None:
            k = by_shape[r.shape] = PlannedKernel("elementwise", [])
            kernels.append(k)
        if all(o is not r for o in k.outputs):
            k.outputs.append(r)
            writes[id(r)] = k
    return _ordered(kernels, writes, evaluated)


def _reads(k: PlannedKernel, writes: dict, evaluated: dict) -> list[Node]:
    """The stored nodes kernel `k` reads (stopping at them: what is stored is read)."""
    found, seen = [], set()
    start = list(k.outputs) + ([k.compute] if k.compute is not None else [])
    stack = []
    for s in start:
        stack.extend(s.inputs)
    inside = {id(o) for o in k.outputs}
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in evaluated or isinstance(node, (Leaf, Scalar)):
            continue
        owner = writes.get(id(node))
        if owner is not None and owner is not k and id(node) not in inside:
            found.append(node)
            continue
        if node is k.compute:
            continue
        stack.extend(node.inputs)
    return found


def _ordered(kernels: list[PlannedKernel], writes: dict, evaluated: dict
             ) -> list[PlannedKernel]:
    for k in kernels:
        k.reads = _reads(k, writes, evaluated)
    done: set[int] = set()
    out: list[PlannedKernel] = []
    pending = list(kernels)
    while pending:
        ready = [k for k in pending if all(id(writes[id(r)]) in done for r in k.reads)]
        if not ready:
            raise AssertionError("fusion plan has a cycle")
        for k in ready:
            out.append(k)
            done.add(id(k))
            pending.remove(k)
    return out


def _unfused(order: list[Node], roots: list[Node], evaluated: dict) -> list[PlannedKernel]:
    """One kernel per operation (every intermediate stored)."""
    kernels, writes = [], {}
    for node in order:
        if isinstance(node, (Leaf, Scalar)):
            continue
        if isinstance(node, View) and node not in roots:
            continue  # a view costs nothing: the next kernel reads through it
        kind = "reduce" if isinstance(node, Reduce) else \
            "matmul" if isinstance(node, MatMul) else "elementwise"
        k = PlannedKernel(kind, [node], node if kind != "elementwise" else None)
        kernels.append(k)
        writes[id(node)] = k
    for k in kernels:
        k.reads = [i for i in _inputs_through_views(k) if id(i) in writes]
    return kernels


def _inputs_through_views(k: PlannedKernel) -> list[Node]:
    out, stack = [], list((k.compute or k.outputs[0]).inputs)
    while stack:
        node = stack.pop()
        if isinstance(node, View):
            stack.append(node.src)
        else:
            out.append(node)
    return out
