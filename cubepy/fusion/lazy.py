"""Lazy tensors: numpy-style operators that record a graph (graph.py) instead of
running a kernel each. Evaluation (runner.py) plans the graph into as few kernels as
it can.

Type rules (numpy's, for the types GPUs have): two tensors combine in
`np.result_type` of their types (f16 + f32 is f32); a Python number takes the tensor's
type when it fits its kind (`x * 2` keeps f16, `i * 2.5` makes f32); `/` of integers
gives f32 (not numpy's f64, which WebGPU lacks); comparisons give bool.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from ..errors import LaunchError
from ..ir.types import DType, bool_, dtype_from_numpy, f32, i32
from .graph import Leaf, Map, MatMul, Node, Reduce, Scalar, View

_MATH_UNARY = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
               "asin", "acos", "atan", "sinh", "cosh", "floor", "ceil", "round", "trunc",
               "erf")


class LazyTensor:
    """A tensor expression over one client, evaluated when a result is needed
    (`numpy()`, `eval()`, passing it to a kernel, `fusion.eval(...)`)."""

    __array_priority__ = 1000  # numpy scalars and arrays defer to our operators

    def __init__(self, node: Node, client) -> None:
        self.node = node
        self.client = client
        self._value = None  # the DeviceTensor once evaluated

    # -- metadata -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @property
    def dtype(self) -> DType:
        return self.node.dtype

    @property
    def ndim(self) -> int:
        return len(self.node.shape)

    @property
    def size(self) -> int:
        return self.node.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        state = "evaluated" if self._value is not None else "lazy"
        return f"LazyTensor(shape={self.shape}, dtype={self.dtype}, {state})"

    # -- evaluation -----------------------------------------------------------------
    def eval(self):
        """The value as a cubepy DeviceTensor (computed once)."""
        if self._value is None:
            from .runner import evaluate
            evaluate([self])
        return self._value

    def numpy(self) -> np.ndarray:
        return self.eval().numpy()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __cubepy_tensor__(self, client):
        """What a kernel launch passes for this tensor."""
        if client is not self.client:
            raise LaunchError("a lazy tensor belongs to another client")
        return self.eval()

    # -- element-wise operators -------------------------------------------------------
    def _bin(self, op: str, other, reverse: bool = False) -> "LazyTensor":
        a, b = (other, self) if reverse else (self, other)
        return binary(op, a, b)

    def __add__(self, o): return self._bin("add", o)  # noqa: E704
    def __radd__(self, o): return self._bin("add", o, True)  # noqa: E704
    def __sub__(self, o): return self._bin("sub", o)  # noqa: E704
    def __rsub__(self, o): return self._bin("sub", o, True)  # noqa: E704
    def __mul__(self, o): return self._bin("mul", o)  # noqa: E704
    def __rmul__(self, o): return self._bin("mul", o, True)  # noqa: E704
    def __truediv__(self, o): return self._bin("div", o)  # noqa: E704
    def __rtruediv__(self, o): return self._bin("div", o, True)  # noqa: E704
    def __floordiv__(self, o): return self._bin("floordiv", o)  # noqa: E704
    def __rfloordiv__(self, o): return self._bin("floordiv", o, True)  # noqa: E704
    def __mod__(self, o): return self._bin("mod", o)  # noqa: E704
    def __rmod__(self, o): return self._bin("mod", o, True)  # noqa: E704
    def __pow__(self, o): return self._bin("pow", o)  # noqa: E704
    def __rpow__(self, o): return self._bin("pow", o, True)  # noqa: E704
    def __and__(self, o): return self._bin("bitand", o)  # noqa: E704
    def __rand__(self, o): return self._bin("bitand", o, True)  # noqa: E704
    def __or__(self, o): return self._bin("bitor", o)  # noqa: E704
    def __ror__(self, o): return self._bin("bitor", o, True)  # noqa: E704
    def __xor__(self, o): return self._bin("bitxor", o)  # noqa: E704
    def __rxor__(self, o): return self._bin("bitxor", o, True)  # noqa: E704
    def __lt__(self, o): return compare("lt", self, o)  # noqa: E704
    def __le__(self, o): return compare("le", self, o)  # noqa: E704
    def __gt__(self, o): return compare("gt", self, o)  # noqa: E704
    def __ge__(self, o): return compare("ge", self, o)  # noqa: E704
    def __eq__(self, o): return compare("eq", self, o)  # type: ignore[override]  # noqa: E704
    def __ne__(self, o): return compare("ne", self, o)  # type: ignore[override]  # noqa: E704
    __hash__ = object.__hash__

    def __neg__(self):
        return _unary("neg", self)

    def __abs__(self):
        return _unary("abs", self)

    def __invert__(self):
        return _unary("not" if self.dtype is bool_ else "bitnot", self)

    def __matmul__(self, o):
        return matmul(self, o)

    def __rmatmul__(self, o):
        return matmul(o, self)

    def __bool__(self):
        raise TypeError("the truth value of a lazy tensor is ambiguous: evaluate it "
                        "(.numpy()) or use fusion.where")

    # -- views ----------------------------------------------------------------------
    def astype(self, dtype: DType) -> "LazyTensor":
        dtype = _as_dtype(dtype)
        if dtype is self.dtype:
            return self
        return self._new(Map(self.shape, dtype, kind="cast", op=dtype.name,
                             args=(self.node,)))

    def reshape(self, *shape) -> "LazyTensor":
        shape = _shape_arg(shape)
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape {self.shape} into {shape}")
        if shape == self.shape:
            return self
        return self._new(View(shape, self.dtype, kind="reshape", src=self.node))

    def transpose(self, *axes) -> "LazyTensor":
        axes = _shape_arg(axes) or tuple(reversed(range(self.ndim)))
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of {self.ndim} dims")
        shape = tuple(self.shape[a] for a in axes)
        return self._new(View(shape, self.dtype, kind="permute", src=self.node, axes=axes))

    @property
    def T(self) -> "LazyTensor":
        return self.transpose()

    def __getitem__(self, key) -> "LazyTensor":
        return _slice(self, key)

    def broadcast_to(self, shape: Sequence[int]) -> "LazyTensor":
        shape = tuple(int(s) for s in shape)
        if broadcast_shapes(self.shape, shape) != shape:
            raise ValueError(f"cannot broadcast {self.shape} to {shape}")
        if shape == self.shape:
            return self
        return self._new(View(shape, self.dtype, kind="broadcast", src=self.node))

    # -- reductions -----------------------------------------------------------------
    def sum(self, axis=None, keepdims: bool = False):
        return reduce("sum", self, axis, keepdims)

    def prod(self, axis=None, keepdims: bool = False):
        return reduce("prod", self, axis, keepdims)

    def max(self, axis=None, keepdims: bool = False):
        return reduce("max", self, axis, keepdims)

    def min(self, axis=None, keepdims: bool = False):
        return reduce("min", self, axis, keepdims)

    def mean(self, axis=None, keepdims: bool = False):
        total = reduce("sum", self.astype(_float_of(self.dtype)), axis, keepdims)
        count = self.size // max(total.size, 1)
        return total / count

    def _new(self, node: Node) -> "LazyTensor":
        return LazyTensor(node, self.client)


# ----------------------------------------------------------------------------- construction

def asarray(x, client=None) -> LazyTensor:
    """A lazy tensor over `x`: a cubepy DeviceTensor, a LazyTensor, or any array the
    client accepts (numpy on cpu, torch/CuPy on cuda: read in place where the client
    can)."""
    if isinstance(x, LazyTensor):
        return x
    from ..runtime.base import DeviceTensor
    if not isinstance(x, DeviceTensor):
        if client is None:
            import cubepy
            client = cubepy.client()
        from ..interop import to_tensor
        tensor, _ = to_tensor(client, x, "x")
        x = tensor if tensor is not None else client.tensor(np.asarray(x))
    if client is not None and x.client is not client:
        raise LaunchError("the tensor belongs to another client", "x")
    if x.line_size != 1:
        raise LaunchError("a lazy tensor reads elements: pass the tensor without "
                          "with_line_size", "x")
    return LazyTensor(Leaf(x.shape, x.dtype, tensor=x), x.client)


def _as_dtype(dtype) -> DType:
    if isinstance(dtype, DType):
        return dtype
    return dtype_from_numpy(np.dtype(dtype))


def _shape_arg(shape) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of `shapes` (ValueError naming them when they do not)."""
    first = shapes[0]
    if all(s == first or s == () for s in shapes[1:]):  # the common cases, quickly
        return first
    if first == () and len(shapes) == 2:
        return shapes[1]
    try:
        return tuple(int(s) for s in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"shapes {' and '.join(map(str, shapes))} do not "
                         f"broadcast") from None


def _float_of(dtype: DType) -> DType:
    return dtype if dtype.is_float else f32


def _operand(x, like: Optional[LazyTensor]) -> tuple[Node, Any]:
    """(node, client) of an operand: a LazyTensor, a Python number or an array."""
    tp = type(x)
    if tp is LazyTensor:
        return x.node, x.client
    if tp is float:
        dtype = like.dtype if like is not None and like.dtype.is_float else f32
        return Scalar((), dtype, value=x), None
    if isinstance(x, LazyTensor):
        return x.node, x.client
    if isinstance(x, (bool, np.bool_)):
        return Scalar((), bool_, value=bool(x)), None
    if isinstance(x, numbers.Integral):
        dtype = like.dtype if like is not None and not like.dtype.is_bool else i32
        return Scalar((), dtype, value=int(x)), None
    if isinstance(x, numbers.Real):
        dtype = like.dtype if like is not None and like.dtype.is_float else f32
        return Scalar((), dtype, value=float(x)), None
    t = asarray(x, like.client if like is not None else None)
    return t.node, t.client


def _combine(args: Iterable) -> tuple[list[Node], Any]:
    args = list(args)
    like = next((a for a in args if isinstance(a, LazyTensor)), None)
    nodes, client = [], None
    for a in args:
        node, c = _operand(a, like)
        if c is not None:
            if client is not None and c is not client:
                raise LaunchError("lazy tensors of different clients do not mix")
            client = c
        nodes.append(node)
    if client is None:
        raise TypeError("at least one operand must be a tensor")
    return nodes, client


def _result_type(nodes: list[Node]) -> DType:
    first = nodes[0].dtype
    if all(n.dtype is first for n in nodes):
        return first
    tensors = [n for n in nodes if not isinstance(n, Scalar)] or nodes
    dtypes = {n.dtype for n in tensors}
    if len(dtypes) == 1:
        return dtypes.pop()
    try:
        return dtype_from_numpy(np.result_type(*(d.numpy for d in dtypes)))
    except TypeError:  # bf16 has no numpy type: bf16 with f32 gives f32
        return f32


def _cast(node: Node, dtype: DType) -> Node:
    if node.dtype is dtype:
        return node
    if isinstance(node, Scalar):
        value = bool(node.value) if dtype.is_bool else (
            float(node.value) if dtype.is_float else int(node.value))
        return Scalar((), dtype, value=value)
    return Map(node.shape, dtype, kind="cast", op=dtype.name, args=(node,))


def binary(op: str, a, b) -> LazyTensor:
    (na, nb), client = _combine((a, b))
    dtype = _result_type([na, nb])
    if op == "div" and not dtype.is_float:
        dtype = f32
    if op in ("bitand", "bitor", "bitxor") and dtype.is_float:
        raise TypeError(f"{op} needs integer or bool tensors, not {dtype}")
    if dtype.is_bool and op in ("bitand", "bitor", "bitxor"):
        op = {"bitand": "and", "bitor": "or", "bitxor": "ne"}[op]
        na, nb = _cast(na, dtype), _cast(nb, dtype)
        shape = broadcast_shapes(na.shape, nb.shape)
        kind = "compare" if op == "ne" else "logical"
        return LazyTensor(Map(shape, bool_, kind=kind, op=op, args=(na, nb)), client)
    na, nb = _cast(na, dtype), _cast(nb, dtype)
    shape = broadcast_shapes(na.shape, nb.shape)
    return LazyTensor(Map(shape, dtype, kind="binary", op=op, args=(na, nb)), client)


def compare(op: str, a, b) -> LazyTensor:
    (na, nb), client = _combine((a, b))
    dtype = _result_type([na, nb])
    na, nb = _cast(na, dtype), _cast(nb, dtype)
    shape = broadcast_shapes(na.shape, nb.shape)
    return LazyTensor(Map(shape, bool_, kind="compare", op=op, args=(na, nb)), client)


def _unary(op: str, x) -> LazyTensor:
    (node,), client = _combine((x,))
    return LazyTensor(Map(node.shape, node.dtype, kind="unary", op=op, args=(node,)), client)


def math_fn(name: str, *args) -> LazyTensor:
    """`name` (a cubepy math function) applied element-wise; integers compute in f32."""
    nodes, client = _combine(args)
    dtype = _float_of(_result_type(nodes))
    nodes = [_cast(n, dtype) for n in nodes]
    shape = broadcast_shapes(*(n.shape for n in nodes))
    return LazyTensor(Map(shape, dtype, kind="math", op=name, args=tuple(nodes)), client)


def where(cond, a, b) -> LazyTensor:
    """`a` where `cond` holds, else `b` (numpy.where)."""
    (nc, na, nb), client = _combine((cond, a, b))
    nc = _cast(nc, bool_)
    dtype = _result_type([na, nb])
    na, nb = _cast(na, dtype), _cast(nb, dtype)
    shape = broadcast_shapes(nc.shape, na.shape, nb.shape)
    return LazyTensor(Map(shape, dtype, kind="where", op="select", args=(nc, na, nb)), client)


def maximum(a, b) -> LazyTensor:
    return binary("max", a, b)


def minimum(a, b) -> LazyTensor:
    return binary("min", a, b)


def reduce(op: str, x, axis=None, keepdims: bool = False) -> LazyTensor:
    (node,), client = _combine((x,))
    ndim = len(node.shape)
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(sorted({a % ndim if ndim else 0 for a in
                             (axis if isinstance(axis, (tuple, list)) else (axis,))}))
        if any(not -ndim <= a < ndim for a in (axis if isinstance(axis, (tuple, list))
                                                 else (axis,))):
            raise ValueError(f"axis {axis} is out of range for {ndim} dims")
    if any(node.shape[a] == 0 for a in axes) and op in ("max", "min"):
        raise ValueError(f"{op} of an empty axis")
    shape = tuple(1 if d in axes else s for d, s in enumerate(node.shape)) if keepdims \
        else tuple(s for d, s in enumerate(node.shape) if d not in axes)
    dtype = node.dtype
    if op in ("sum", "prod") and dtype.is_bool:
        node, dtype = _cast(node, i32), i32
    return LazyTensor(Reduce(shape, dtype, op=op, src=node, axes=axes, keepdims=keepdims),
                      client)


def matmul(a, b) -> LazyTensor:
    """numpy.matmul: [..., M, K] @ [..., K, N] with the batch dims broadcast (a 1-D
    operand is a row or column vector, its dim removed from the result)."""
    (na, nb), client = _combine((a, b))
    dtype = _result_type([na, nb])
    na, nb = _cast(na, dtype), _cast(nb, dtype)
    squeeze_a, squeeze_b = len(na.shape) == 1, len(nb.shape) == 1
    if squeeze_a:
        na = View((1,) + na.shape, dtype, kind="reshape", src=na)
    if squeeze_b:
        nb = View(nb.shape + (1,), dtype, kind="reshape", src=nb)
    if len(na.shape) < 2 or len(nb.shape) < 2:
        raise ValueError("matmul needs operands of at least one dimension")
    (m, k), (k2, n) = na.shape[-2:], nb.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: {na.shape} @ {nb.shape}: inner sizes {k} and {k2} "
                         f"differ")
    batch = broadcast_shapes(na.shape[:-2], nb.shape[:-2])
    out = LazyTensor(MatMul(batch + (m, n), dtype, a=na, b=nb), client)
    if squeeze_a or squeeze_b:
        shape = batch + ((m,) if not squeeze_a else ()) + ((n,) if not squeeze_b else ())
        out = out.reshape(shape)
    return out


def _slice(x: LazyTensor, key) -> LazyTensor:
    """Basic indexing: ints, slices with positive steps, `...` and None."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have one ellipsis")
    explicit = sum(1 for k in key if k is not None and k is not Ellipsis)
    if explicit > x.ndim:
        raise IndexError(f"too many indices for a {x.ndim}-d tensor")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (x.ndim - explicit) + key[i + 1:]
    key = key + (slice(None),) * (x.ndim - sum(1 for k in key if k is not None))
    starts, steps, shape, final = [], [], [], []
    dim = 0
    for k in key:
        if k is None:
            final.append(1)
            continue
        size = x.shape[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            if step <= 0:
                raise IndexError("negative or zero slice steps are not supported")
            n = max(0, -(-(stop - start) // step))
            starts.append(start), steps.append(step), shape.append(n), final.append(n)
        elif isinstance(k, numbers.Integral):
            i = int(k) + size if k < 0 else int(k)
            if not 0 <= i < size:
                raise IndexError(f"index {k} is out of range for size {size}")
            starts.append(i), steps.append(1), shape.append(1)
        else:
            raise IndexError(f"lazy tensors take ints, slices, ... and None as indices, "
                             f"not {type(k).__name__}")
        dim += 1
    node = View(tuple(shape), x.dtype, kind="slice", src=x.node, starts=tuple(starts),
                steps=tuple(steps))
    out = x._new(node)
    return out.reshape(tuple(final)) if tuple(final) != tuple(shape) else out


def _make_math(name: str):
    def fn(x):
        return math_fn(name, x)
    fn.__name__ = name
    fn.__doc__ = f"Element-wise {name} (the kernel math function)."
    return fn


MATH = {name: _make_math(name) for name in _MATH_UNARY}


def compile(fn=None, *, fuse: bool = True):  # noqa: A001 (torch.compile's name)
    """`fn` (a function of tensors written with lazy-tensor operations) traced once per
    argument signature (shape, strides, dtype and client of each argument) and replayed
    without recording: each call binds the new arguments and launches the planned
    kernels. Returns DeviceTensors. Tensors the function reads besides its arguments
    (weights in a closure) are captured at the first trace, as torch.compile captures
    them; Python numbers in it are constants of the kernels.

        fast = fusion.compile(lambda x, y: fusion.relu(x @ y))
        out = fast(a, b)          # a, b: cubepy tensors or arrays the client accepts
    """
    if fn is None:
        return lambda f: compile(f, fuse=fuse)
    import functools
    import threading

    from .runner import run_program, trace
    programs: dict = {}
    lock = threading.Lock()

    @functools.wraps(fn)
    def compiled(*args, client=None):
        tensors = [_as_tensor(a, client) for a in args]
        if not tensors:
            raise TypeError("a fusion.compile function takes at least one tensor")
        c = tensors[0].client
        key = tuple((t.shape, t.strides, t.dtype, id(t.client)) for t in tensors)
        program = programs.get(key)
        if program is None:
            with lock:
                program = programs.get(key)
                if program is None:
                    program = programs[key] = trace(fn, c, tensors, fuse)
        return run_program(program, c, tensors)

    compiled.programs = programs  # traced signatures (for tests and introspection)
    return compiled


def _as_tensor(x, client):
    from ..runtime.base import DeviceTensor
    if type(x) is DeviceTensor:
        return x
    if isinstance(x, LazyTensor):
        return x.eval()
    return asarray(x, client).node.tensor
