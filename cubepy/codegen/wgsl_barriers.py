"""Which of a kernel's sync_cube() barriers need WGSL's storageBarrier().

`workgroupBarrier()` orders workgroup memory only; storage buffers need
`storageBarrier()` as well, which naga lowers with device-scope memory semantics (a
device-wide memory fence on Vulkan, MEMBAR.GPU on NVIDIA, where CUDA's __syncthreads
orders memory for the block only). Emitting it at every barrier of a kernel that writes
any buffer made each cube-wide reduction of softmax or layernorm pay that fence.

A barrier needs it only when storage accesses of different units could be ordered by
it: some access to a writable buffer may run before the barrier and another after it,
one of them a write. "Before" and "after" are the statements in source order, plus
every statement of each loop around the barrier (its other iterations run on both
sides). All writable buffers are treated as one, since one buffer may be bound to
several writable parameters; read-only bindings cannot alias a writable one in the
same dispatch (WebGPU's usage rules), except in the runtime's alias variant, where a
read-only parameter shares a written buffer and `promoted=True` counts every buffer.
"""
from __future__ import annotations

from dataclasses import field, fields

from ..ir import nodes as n
from ..ir.batched_dataclass import dataclass  # (cheap to create)
from ..ir.visit import child_blocks, child_exprs, walk_exprs

# Statements whose `buffer` field is written (an atomic reads and writes it).
_WRITES = (n.Store, n.StoreLine, n.AtomicOp, n.MatrixStore)


@dataclass(frozen=False)
class _Access:
    buffer: str
    write: bool


@dataclass(frozen=False)
class _Event:
    """An access or a barrier, at a position in source order, inside `loops`."""

    position: int
    loops: tuple[int, ...]
    access: _Access | None = None
    barrier: n.Barrier | None = None


@dataclass(frozen=False)
class _Trace:
    events: list[_Event] = field(default_factory=list)
    loop_count: int = 0
    # loop id -> (first, last) position of its events
    loop_spans: dict[int, tuple[int, int]] = field(default_factory=dict)


def _stmt_accesses(stmt: n.Stmt) -> list[_Access]:
    """The global-buffer accesses a statement makes itself (its expressions included,
    nested blocks not)."""
    out = []
    for f in fields(stmt):
        value = getattr(stmt, f.name)
        if isinstance(value, n.BufferRef) and value.space == "global":
            written = f.name == "buffer" and isinstance(stmt, _WRITES)
            out.append(_Access(value.name, written))
            if written and isinstance(stmt, n.AtomicOp):
                out.append(_Access(value.name, False))
    for expr in child_exprs(stmt):
        for e in walk_exprs(expr):
            if isinstance(e, n.Index) and e.buffer.space == "global":
                out.append(_Access(e.buffer.name, False))
    return out


def _trace(block: n.Block, loops: tuple[int, ...], trace: _Trace) -> None:
    for stmt in block.stmts:
        if isinstance(stmt, n.Barrier):
            trace.events.append(_Event(len(trace.events), loops, barrier=stmt))
            continue
        inner = loops
        if isinstance(stmt, (n.For, n.While)):
            trace.loop_count += 1
            inner = loops + (trace.loop_count,)
        start = len(trace.events)
        for access in _stmt_accesses(stmt):  # a loop's bounds and condition belong to it
            trace.events.append(_Event(len(trace.events), inner, access=access))
        for child in child_blocks(stmt):
            _trace(child, inner, trace)
        if inner != loops:
            trace.loop_spans[inner[-1]] = (start, len(trace.events))


def storage_barriers(kernel: n.Kernel) -> tuple[set[int], set[int]]:
    """The ids of the kernel's sync_cube() Barrier statements that need storageBarrier()
    (fence_cube always does; the caller handles it): those every launch needs, and
    those only the runtime's alias variant needs, where every global buffer may share a
    written one."""
    trace = _Trace()
    _trace(kernel.body, (), trace)
    written = {e.access.buffer for e in trace.events if e.access and e.access.write}
    if not written:
        return set(), set()
    always = _ordering_barriers(trace, written)
    every_buffer = {p.name for p in kernel.params if p.kind != "scalar"}
    return always, _ordering_barriers(trace, every_buffer) - always


def _ordering_barriers(trace: _Trace, writable: set[str]) -> set[int]:
    """The barriers with an access to `writable` on each side, one of them a write."""
    needed = set()
    for event in trace.events:
        if event.barrier is None:
            continue
        around: set[int] = set()
        for loop in event.loops:
            first, last = trace.loop_spans.get(loop, (0, 0))
            around.update(range(first, last))
        before = [e.access for e in trace.events
                  if e.access and (e.position < event.position or e.position in around)
                  and e.access.buffer in writable]
        after = [e.access for e in trace.events
                 if e.access and (e.position > event.position or e.position in around)
                 and e.access.buffer in writable]
        if (any(a.write for a in before) and after) or (before and any(a.write for a in after)):
            needed.add(id(event.barrier))
    return needed
