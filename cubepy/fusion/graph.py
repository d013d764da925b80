"""The recorded tensor graph: what a lazy tensor stands for until it is evaluated.

Nodes are immutable and compared by identity (a node used twice is one node). Every node
knows its shape and element type; views (`View`) are index maps, so a transpose or a slice
of a computed value costs nothing until a kernel reads it.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..ir.types import DType


_SERIAL = itertools.count()


@dataclass(eq=False)
class Node:
    """A value of the graph: `shape` and `dtype` of the tensor it produces. `serial`
    orders nodes by creation, which is an order where inputs come first."""

    shape: tuple[int, ...]
    dtype: DType
    serial: int = field(default_factory=_SERIAL.__next__, init=False, repr=False)

    @property
    def inputs(self) -> tuple["Node", ...]:
        return ()

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(eq=False)
class Leaf(Node):
    """A tensor already in device memory (a cubepy DeviceTensor), read through its
    strides."""

    tensor: Any = None


@dataclass(eq=False)
class Scalar(Node):
    """A Python number, broadcast to any shape (shape ())."""

    value: Any = 0


@dataclass(eq=False)
class Map(Node):
    """An element-wise operation over broadcast operands.

    kind: "binary" (op a BinaryOp value), "compare" (CompareOp), "unary" (UnaryOp),
    "math" (a math function name), "where" (select), "cast"."""

    kind: str = ""
    op: str = ""
    args: tuple[Node, ...] = ()

    @property
    def inputs(self) -> tuple[Node, ...]:
        return self.args


@dataclass(eq=False)
class View(Node):
    """`src` seen through an index map, without copying.

    kind "permute" (`axes`: output dim d reads source dim axes[d]), "slice" (`starts`,
    `steps` per source dim; the shape is the result's), "broadcast" (the source shape
    right-aligned, size-1 dims read index 0), "reshape" (same elements in row-major
    order)."""

    kind: str = ""
    src: Optional[Node] = None
    axes: tuple[int, ...] = ()
    starts: tuple[int, ...] = ()
    steps: tuple[int, ...] = ()

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.src,)


@dataclass(eq=False)
class Reduce(Node):
    """`op` ("sum", "max", "min", "prod") of `src` over `axes` (sorted; kept as size 1
    when `keepdims`)."""

    op: str = "sum"
    src: Optional[Node] = None
    axes: tuple[int, ...] = ()
    keepdims: bool = False

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.src,)


@dataclass(eq=False)
class MatMul(Node):
    """`a @ b` with numpy's rules for stacks: [..., M, K] @ [..., K, N], batch dims
    broadcast."""

    a: Optional[Node] = None
    b: Optional[Node] = None

    @property
    def inputs(self) -> tuple[Node, ...]:
        return (self.a, self.b)


@dataclass(eq=False)
class Partials(Node):
    """The partial results of a reduction split across cubes: shape (outputs, chunks),
    in the accumulator's type. Made by the planner, never by users."""


COMPUTE = (Reduce, MatMul)  # nodes that get a kernel of their own shape


def topological(roots: list[Node], stop=()) -> list[Node]:
    """Every node the roots depend on, each after its inputs (by creation order, which
    puts inputs first; no recursion, so graphs of thousands of ops are fine). Nodes whose
    id is in `stop` (already evaluated) are listed but not entered."""
    seen: dict[int, Node] = {}
    stack = list(roots)
    while stack:
        node = stack.pop()
        key = id(node)
        if key in seen:
            continue
        seen[key] = node
        if key not in stop:
            stack.extend(node.inputs)
    return sorted(seen.values(), key=_serial)


def _serial(node: Node) -> int:
    return node.serial


@dataclass
class Uses:
    """For each node, the nodes that read it (within one evaluation)."""

    readers: dict[int, list[Node]] = field(default_factory=dict)

    @classmethod
    def of(cls, order: list[Node]) -> "Uses":
        uses = cls()
        for node in order:
            uses.readers.setdefault(id(node), [])
            for i in node.inputs:
                uses.readers.setdefault(id(i), []).append(node)
        return uses

    def of_node(self, node: Node) -> list[Node]:
        return self.readers.get(id(node), [])
