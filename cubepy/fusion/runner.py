"""Evaluation: plan the graph, build each kernel's IR, compile, launch.

Two caches keep a training loop cheap: the compiled kernels are keyed by their IR (same
ops, shapes, strides and dtypes give an equal kernel, so it compiles once), and whole
plans are keyed by the graph's structure (a tuple describing every node by position),
so an iteration that records the same graph again skips planning and IR building and
only binds its tensors and launches.
"""
from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from ..errors import LaunchError
from ..ir import nodes as n
from ..lru import LRU
from .graph import Leaf, Map, MatMul, Node, Partials, Reduce, Scalar, View, topological
from .irgen import (accumulator_type, contiguous_strides, elementwise_kernel, matmul_kernel,
                    reduce_kernel)
from .planner import PlannedKernel, plan

# Nodes already evaluated -> their tensor (weak: forgotten with the node).
_EVALUATED: "weakref.WeakKeyDictionary[Node, Any]" = weakref.WeakKeyDictionary()
_KERNELS = LRU(512)  # (IR kernel, target) -> _Compiled
_PLANS = LRU(256)  # (structure, target, fuse) -> tuple[_Step, ...]
_LOCK = threading.RLock()


@dataclass
class _Compiled:
    kernel: n.Kernel
    abi: Any
    artefact: Any
    executables: "weakref.WeakKeyDictionary" = field(default_factory=weakref.WeakKeyDictionary)


@dataclass
class BuiltKernel:
    """A planned kernel with its IR: what explain() shows and evaluate() launches."""

    plan: PlannedKernel
    kernel: n.Kernel
    inputs: list[tuple[str, Node]]  # (parameter, node read)
    outputs: list[Node]
    fused_ops: list[str]
    cube_count: tuple[int, int, int]

    @property
    def name(self) -> str:
        return self.kernel.name


@dataclass(eq=False)
class _Step:
    """A cached kernel launch: parameters bound by node position in the graph (positions
    past the graph's nodes are the plan's temporaries, such as a split reduction's
    partial results)."""

    kernel: n.Kernel
    params: tuple[tuple[str, int], ...]  # (parameter, position of the node it reads)
    outputs: tuple[tuple[str, int, tuple, Any], ...]  # (parameter, position, shape, dtype)
    cube_count: tuple[int, int, int]
    # target -> its _Compiled, remembered so that a launch does not hash the IR again
    compiled: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- structure

def evaluated_now() -> dict:
    """id(node) -> tensor of every node evaluated so far and still alive."""
    return {id(node): t for node, t in list(_EVALUATED.items())}


def structure(order: list[Node], roots: list[Node], evaluated: dict) -> tuple:
    """A hashable description of the graph: equal for graphs that plan alike."""
    pos = {id(node): i for i, node in enumerate(order)}
    parts: list[tuple] = []
    for node in order:
        tensor = evaluated.get(id(node))
        if tensor is None and isinstance(node, Leaf):
            tensor = node.tensor
        if tensor is not None:
            parts.append(("t", node.shape, node.dtype, tuple(tensor.strides)))
        elif isinstance(node, Scalar):
            parts.append(("s", node.dtype, node.value, type(node.value)))
        elif isinstance(node, Map):
            parts.append(("m", node.kind, node.op, node.shape, node.dtype,
                          tuple(pos[id(i)] for i in node.args)))
        elif isinstance(node, View):
            parts.append(("v", node.kind, node.shape, node.axes, node.starts, node.steps,
                          pos[id(node.src)]))
        elif isinstance(node, Reduce):
            parts.append(("r", node.op, node.axes, node.keepdims, node.shape, node.dtype,
                          pos[id(node.src)]))
        elif isinstance(node, MatMul):
            parts.append(("x", node.shape, node.dtype, pos[id(node.a)], pos[id(node.b)]))
    parts.append(tuple(pos[id(r)] for r in roots))
    return tuple(parts)


# ----------------------------------------------------------------------------- building

def _name(kind: str, ops: list[str]) -> str:
    seen: list[str] = []
    for op in ops:
        if op not in seen:
            seen.append(op)
    return "_".join(["fused", kind] + seen[:6])


def _elements_per_unit(total: int) -> int:
    """Elements each unit of an element-wise kernel writes: 4 where the size allows
    (fewer, larger cubes; the same access pattern as a line of 4)."""
    for v in (4, 2):
        if total % v == 0 and total >= v * 256 * 8:
            return v
    return 1


def reduction_split(node: Reduce) -> int:
    """How many cubes share each output of a reduction: 1, unless there are few outputs
    (under 1024) and long rows (64Ki elements or more), where one cube per output would
    leave the GPU idle; then enough chunks of at least 4096 elements for about 1024
    cubes."""
    outputs = max(1, math.prod(node.shape))
    length = math.prod(node.src.shape[d] for d in node.axes)
    if outputs >= 1024 or length < 65536:
        return 1
    return max(2, min(-(-1024 // outputs), length // 4096))


def build(k: PlannedKernel, materialized: dict) -> list[BuiltKernel]:
    """The kernels of a planned kernel: one, or two for a split reduction."""
    if k.kind == "elementwise":
        total = math.prod(k.outputs[0].shape)
        kb, kernel, units = elementwise_kernel("fused", k.outputs, materialized,
                                               _elements_per_unit(total))
        return [_built(k, kb, kernel, (-(-units // kernel.cube_dim[0]), 1, 1))]
    if k.kind == "matmul":
        kb, kernel, count = matmul_kernel("fused", k.compute, k.outputs[0], materialized)
        return [_built(k, kb, kernel, count)]
    node = k.compute
    split = reduction_split(node)
    if split == 1:
        kb, kernel, cubes = reduce_kernel("fused", node, k.outputs[0], materialized)
        return [_built(k, kb, kernel, (cubes, 1, 1))]
    outputs = max(1, math.prod(node.shape))
    partials = Partials((outputs, split), accumulator_type(node.dtype))
    kb, kernel, cubes = reduce_kernel("fused", node, None, materialized, split=split)
    first = _built(PlannedKernel("reduce", [partials], node), kb, kernel, (cubes, 1, 1))
    materialized[id(partials)] = _Placeholder(partials)
    combine = Reduce((outputs,), node.dtype, op=node.op, src=partials, axes=(1,))
    kb, kernel, cubes = reduce_kernel("fused", combine, k.outputs[0], materialized,
                                      binds=(node,))
    return [first, _built(k, kb, kernel, (cubes, 1, 1))]


def _built(k: PlannedKernel, kb, kernel: n.Kernel, count) -> BuiltKernel:
    name = _name(k.kind, [op for op in kb.fused_ops if op != "matmul"])
    kernel = n.Kernel(name, kernel.params, kernel.shared, kernel.body, kernel.cube_dim)
    return BuiltKernel(k, kernel, kb.inputs, list(k.outputs), kb.fused_ops, count)


class _Placeholder:
    """Stands for a tensor an earlier kernel of the plan will write (contiguous)."""

    def __init__(self, node: Node) -> None:
        self.shape = node.shape
        self.strides = contiguous_strides(node.shape)


def build_all(roots: list[Node], evaluated: dict, fuse: bool) -> list[BuiltKernel]:
    """Plans and builds every kernel evaluating `roots` (nothing runs)."""
    materialized: dict = dict(evaluated)
    built = []
    for k in plan(roots, evaluated, fuse):
        for b in build(k, materialized):
            built.append(b)
            for node in b.outputs:
                materialized[id(node)] = _Placeholder(node)
    return built


def _compile(kernel: n.Kernel, client) -> tuple[_Compiled, Any]:
    key = (kernel, client.target)
    compiled = _KERNELS.get(key)
    if compiled is None:
        with _LOCK:
            compiled = _KERNELS.get(key)
            if compiled is None:
                lowered, abi, artefact = _generate(kernel, client.target)
                compiled = _Compiled(lowered, abi, artefact)
                _KERNELS.put(key, compiled)
    executable = compiled.executables.get(client)
    if executable is None:
        with _LOCK:
            executable = compiled.executables.get(client)
            if executable is None:
                executable = client.compile(compiled.kernel, compiled.abi, False,
                                            compiled=compiled.artefact)
                compiled.executables[client] = executable
    return compiled, executable


def _generate(kernel: n.Kernel, target: str):
    from ..abi import compute_abi
    from ..codegen import generate
    from ..kernel import run_pipeline
    from ..targets import get_target
    lowered = run_pipeline(kernel, target)
    abi = compute_abi(lowered, False, needs_cube_count=get_target(target).needs_cube_count)
    return lowered, abi, generate(lowered, target, abi, False)


def source_of(kernel: n.Kernel, target: str) -> str:
    """The generated source of a fused kernel for `target`."""
    return _generate(kernel, target)[2].source


# ----------------------------------------------------------------------------- running

def _steps(order: list[Node], roots: list[Node], evaluated: dict, fuse: bool
           ) -> tuple[tuple[_Step, ...], int]:
    """The plan's launches, and how many value slots they use."""
    pos = {id(node): i for i, node in enumerate(order)}
    steps = []
    for b in build_all(roots, evaluated, fuse):
        for o in b.outputs:
            if id(o) not in pos:  # a temporary of the plan
                pos[id(o)] = len(pos)
        params = tuple((name, pos[id(node)]) for name, node in b.inputs)
        outputs = tuple((f"out{k}", pos[id(o)], o.shape, o.dtype)
                        for k, o in enumerate(b.outputs))
        steps.append(_Step(b.kernel, params, outputs, b.cube_count))
    return tuple(steps), len(pos)


def _launch(step: _Step, client, values: list) -> None:
    from ..kernel import _make_packer
    compiled = step.compiled.get(client.target)
    executable = compiled.executables.get(client) if compiled is not None else None
    if executable is None:
        compiled, executable = _compile(step.kernel, client)
        step.compiled[client.target] = compiled
    by_name = {name: values[p] for name, p in step.params}
    for name, p, _, _ in step.outputs:
        by_name[name] = values[p]
    args = tuple(by_name[p.name] for p in step.kernel.params)
    packer = getattr(compiled, "packer", None)
    if packer is None:
        packer = compiled.packer = _make_packer(
            compiled.abi, {p.name: i for i, p in enumerate(step.kernel.params)})
    info = packer(args, step.cube_count)
    buffers = [by_name[b.name] for b in compiled.abi.buffers]
    client.dispatch(executable, step.cube_count, step.kernel.cube_dim, buffers, info)


def evaluate(tensors: list, fuse: bool = True) -> None:
    """Computes every LazyTensor in `tensors` (one plan) and records the results."""
    client = tensors[0].client
    if any(t.client is not client for t in tensors):
        raise LaunchError("fusion.eval: the tensors belong to different clients")
    roots = [t.node for t in tensors]
    evaluated = evaluated_now()
    order = topological(roots, evaluated)
    key = (structure(order, roots, evaluated), client.target, fuse)
    cached = _PLANS.get(key)
    if cached is None:
        cached = _steps(order, roots, evaluated, fuse)
        _PLANS.put(key, cached)
    steps, size = cached
    values: list = [evaluated.get(id(node)) or (node.tensor if isinstance(node, Leaf)
                                                 else None) for node in order]
    values += [None] * (size - len(values))
    for step in steps:
        for _, p, shape, dtype in step.outputs:
            values[p] = client._empty_uninitialised(shape, dtype)
        if math.prod(step.cube_count) > 0:
            _launch(step, client, values)
        for _, p, _, _ in step.outputs:
            if p < len(order):
                _EVALUATED[order[p]] = values[p]
    pos = {id(node): i for i, node in enumerate(order)}
    for t in tensors:
        t._value = values[pos[id(t.node)]]


# ----------------------------------------------------------------------------- compile

@dataclass(eq=False)
class _Program:
    """A traced function: its kernels, and where each value of the graph comes from."""

    steps: tuple[_Step, ...]
    size: int  # number of graph positions
    fixed: dict  # position -> a tensor the function captured (weights, constants)
    args: tuple[tuple[int, int], ...]  # (argument index, position)
    outputs: tuple[int, ...]  # positions of the results
    allocations: tuple[tuple[int, tuple, Any], ...]  # (position, shape, dtype) per output
    single: bool  # the function returned one tensor, not a tuple


def trace(fn, client, tensors: list, fuse: bool) -> _Program:
    """Runs `fn` on lazy leaves over `tensors` and plans what it returns."""
    from .lazy import LazyTensor
    leaves = [LazyTensor(Leaf(t.shape, t.dtype, tensor=t), client) for t in tensors]
    result = fn(*leaves)
    single = not isinstance(result, (tuple, list))
    results = [result] if single else list(result)
    if not results or not all(isinstance(r, LazyTensor) for r in results):
        raise TypeError("a fusion.compile function must return lazy tensors (one, or a "
                        "tuple of them)")
    roots = [r.node for r in results]
    evaluated = evaluated_now()
    order = topological(roots, evaluated)
    pos = {id(node): i for i, node in enumerate(order)}
    steps, size = _steps(order, roots, evaluated, fuse)
    arg_pos = tuple((i, pos[id(leaf.node)]) for i, leaf in enumerate(leaves)
                    if id(leaf.node) in pos)
    args_at = {p for _, p in arg_pos}
    fixed = {}
    for p, node in enumerate(order):
        if p in args_at:
            continue
        tensor = evaluated.get(id(node))
        if tensor is None and isinstance(node, Leaf):
            tensor = node.tensor
        if tensor is not None:
            fixed[p] = tensor
    allocations = tuple((p, shape, dtype)
                        for step in steps for _, p, shape, dtype in step.outputs)
    return _Program(steps, size, fixed, arg_pos, tuple(pos[id(r)] for r in roots),
                    allocations, single)


def run_program(program: _Program, client, tensors: list):
    values: list = [None] * program.size
    for p, t in program.fixed.items():
        values[p] = t
    for i, p in program.args:
        values[p] = tensors[i]
    for p, shape, dtype in program.allocations:
        values[p] = client._empty_uninitialised(shape, dtype)
    for step in program.steps:
        if step.cube_count[0] * step.cube_count[1] * step.cube_count[2] > 0:
            _launch(step, client, values)
    outs = tuple(values[p] for p in program.outputs)
    return outs[0] if program.single else outs
