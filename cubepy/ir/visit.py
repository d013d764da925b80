"""Generic traversal of IR trees: iterate nodes, and rebuild trees bottom-up."""
from __future__ import annotations

import dataclasses
import sys
from typing import Callable, Iterator

from . import nodes as n

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(node) -> tuple[str, ...]:
    """The names of the fields of a node's class, as dataclasses.fields gives them, found
    once per class: the walks below ask for every node a pass visits, and
    dataclasses.fields filters the class's fields anew at each call."""
    cls = type(node)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_WALKED: dict[type, tuple[str, ...]] = {}
_PLAIN = {"str": str, "int": int, "bool": bool, "float": float, "None": type(None)}


def walked_names(node) -> tuple[str, ...]:
    """The fields of a node's class that may hold an expression, a tuple of them or a
    block: all but those whose annotation names only other types (a `Loc`, a `DType`, a
    `Var`, a str, an `Optional[Var]`...), found once per class. The walks below look at
    these only; a field whose annotation cannot be read is always looked at."""
    cls = type(node)
    names = _WALKED.get(cls)
    if names is None:
        scope = vars(sys.modules[cls.__module__])
        names = _WALKED[cls] = tuple(f.name for f in dataclasses.fields(cls)
                                     if not _holds_no_node(f.type, scope))
    return names


def _holds_no_node(annotation, scope: dict) -> bool:
    """Whether a field annotated `annotation` (a string, as `from __future__ import
    annotations` leaves it) can only hold values that are not expressions or blocks."""
    if not isinstance(annotation, str):
        return False
    text = annotation.replace(" ", "")
    for wrapper in ("Optional[", "tuple[", "Union["):
        if text.startswith(wrapper) and text.endswith("]"):
            parts = [p for p in text[len(wrapper):-1].split(",") if p != "..."]
            return all(_holds_no_node(p, scope) for p in parts)
    kind = _PLAIN.get(text) or scope.get(text)
    return isinstance(kind, type) and not issubclass(kind, (n.Expr, n.Block))


def child_exprs(node) -> Iterator[n.Expr]:
    """The expressions directly held by a statement or expression (not nested blocks)."""
    for name in walked_names(node):
        value = getattr(node, name)
        if isinstance(value, n.Expr):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, n.Expr):
                    yield item


def child_blocks(stmt: n.Stmt) -> Iterator[n.Block]:
    for name in walked_names(stmt):
        value = getattr(stmt, name)
        if isinstance(value, n.Block):
            yield value


def walk_exprs(expr: n.Expr) -> Iterator[n.Expr]:
    """`expr` and every expression below it, parents first."""
    yield expr
    for child in child_exprs(expr):
        yield from walk_exprs(child)


def reads_memory(expr: n.Expr) -> bool:
    """Whether `expr` reads a buffer (an `Index` anywhere in it): its value may change
    when memory is stored to, unlike that of constants, variables and builtins."""
    return any(isinstance(e, n.Index) for e in walk_exprs(expr))


def walk_stmts(block: n.Block) -> Iterator[n.Stmt]:
    """Every statement in `block` and its nested blocks, in source order."""
    for stmt in block.stmts:
        yield stmt
        for inner in child_blocks(stmt):
            yield from walk_stmts(inner)


def walk_all_exprs(block: n.Block) -> Iterator[n.Expr]:
    """Every expression anywhere in `block`."""
    for stmt in walk_stmts(block):
        for expr in child_exprs(stmt):
            yield from walk_exprs(expr)


_ALL_INIT: dict[type, bool] = {}


def replace(node, changes: dict):
    """`dataclasses.replace(node, **changes)`, without its checks for the IR's nodes,
    whose fields are all __init__ parameters (batched_dataclass): the passes replace
    tens of thousands of nodes in a large unrolled kernel."""
    cls = type(node)
    all_init = _ALL_INIT.get(cls)
    if all_init is None:
        all_init = _ALL_INIT[cls] = all(f.init for f in dataclasses.fields(cls))
    if not all_init:
        return dataclasses.replace(node, **changes)
    return cls(**{name: changes[name] if name in changes else getattr(node, name)
                  for name in field_names(node)})


def map_expr(expr: n.Expr, fn: Callable[[n.Expr], n.Expr]) -> n.Expr:
    """Rebuilds `expr` bottom-up: children first, then `fn` on the node, rebuilt when a
    child changed (a subtree `fn` leaves alone is kept, not copied)."""
    changes: dict[str, object] | None = None
    for name in walked_names(expr):
        value = getattr(expr, name)
        if isinstance(value, n.Expr):
            new = map_expr(value, fn)
            if new is not value:
                changes = changes or {}
                changes[name] = new
        elif isinstance(value, tuple) and value and isinstance(value[0], n.Expr):
            items = tuple(map_expr(v, fn) for v in value)
            if any(a is not b for a, b in zip(items, value)):
                changes = changes or {}
                changes[name] = items
    if changes:
        expr = replace(expr, changes)
    return fn(expr)


def map_stmt_exprs(stmt: n.Stmt, fn: Callable[[n.Expr], n.Expr]) -> n.Stmt:
    """A copy of `stmt` with `map_expr(e, fn)` applied to its own expressions (nested
    blocks untouched). A statement with expressions is always a new object, so copies
    of one statement (an unrolled body) become distinct objects, which the WGSL
    barrier analysis tells apart by identity."""
    changes: dict[str, object] = {}
    for name in walked_names(stmt):
        value = getattr(stmt, name)
        if isinstance(value, n.Expr):
            changes[name] = map_expr(value, fn)
        elif isinstance(value, tuple) and value and isinstance(value[0], n.Expr):
            changes[name] = tuple(map_expr(v, fn) for v in value)  # StoreLine's values
    return replace(stmt, changes) if changes else stmt


def map_blocks(stmt: n.Stmt, fn: Callable[[n.Block], n.Block]) -> n.Stmt:
    """A copy of `stmt` with `fn` applied to each nested block."""
    changes = {name: fn(getattr(stmt, name)) for name in walked_names(stmt)
               if isinstance(getattr(stmt, name), n.Block)}
    return replace(stmt, changes) if changes else stmt


def matrix_buffers(kernel: n.Kernel, space: str) -> frozenset[str]:
    """The buffers of `space` ("global" or "shared") some cmma load or store uses (not a
    warpgroup accumulator's store: each unit stores its own elements, wmma's alignment
    rules do not apply)."""
    return frozenset(s.buffer.name for s in walk_stmts(kernel.body)
                     if isinstance(s, (n.MatrixLoad, n.MatrixStore))
                     and s.buffer.space == space and not s.frag.matrix.warpgroup)


def warpgroup_buffers(kernel: n.Kernel) -> frozenset[str]:
    """The shared arrays some cmma.wg_mma reads (CUDA aligns them to 128 bytes)."""
    return frozenset(name for s in walk_stmts(kernel.body) if isinstance(s, n.WarpgroupMma)
                     for name in (s.a.name, s.b.name))


def swizzled_buffers(kernel: n.Kernel) -> frozenset[str]:
    """The shared arrays some cmma.wg_mma reads with the 128-byte swizzle (CUDA aligns
    them to 1024 bytes, the swizzle atom)."""
    return frozenset(name for s in walk_stmts(kernel.body)
                     if isinstance(s, n.WarpgroupMma) and s.swizzle
                     for name in (s.a.name, s.b.name))


def used_buffers(kernel: n.Kernel) -> set[str]:
    """Names of buffers read, written or used atomically anywhere in the kernel."""
    names = set(warpgroup_buffers(kernel))
    for stmt in walk_stmts(kernel.body):
        if isinstance(stmt, (n.Store, n.AtomicOp, n.MatrixLoad, n.MatrixStore, n.LoadLine,
                             n.StoreLine, n.MatrixScaleBy)):
            names.add(stmt.buffer.name)
        elif isinstance(stmt, n.AsyncCopy):
            names.update((stmt.dst.name, stmt.src.name))
    for expr in walk_all_exprs(kernel.body):
        if isinstance(expr, (n.Index, n.Meta)):
            names.add(expr.buffer.name)
    return names
