"""Kernel fusion: lazy tensor expressions compiled into as few generated kernels as
possible.

    import cubepy.fusion as fz
    a, b, bias = (fz.asarray(t) for t in (a_np, b_np, bias_np))
    y = fz.maximum(a @ b + bias, 0.0)     # nothing runs yet
    print(fz.explain(y))                  # one kernel: matmul with add and max fused
    y.numpy()                             # runs it

Element-wise chains become one kernel; element-wise producers are evaluated inside the
reads of a reduction or matmul and their consumers inside its writes; results of one
shape are written by one kernel. Kernels are built as IR and go through the same passes
and code generators as @cube kernels, cached by structure (docs/FUSION.md).
"""
from __future__ import annotations

from .explain import Explanation, KernelReport, explain
from .lazy import (MATH, LazyTensor, asarray, binary, broadcast_shapes, compare, compile,
                   math_fn, matmul, maximum, minimum, reduce, where)


def eval(*tensors, fuse: bool = True):  # noqa: A001 (the numpy-style name)
    """Evaluates several lazy tensors together (one plan: kernels shared, results of one
    shape written by one kernel); returns their DeviceTensors. `fuse=False` runs one
    kernel per operation (the unfused baseline)."""
    from .runner import evaluate
    pending = [t for t in tensors if t._value is None]
    if pending:
        evaluate(pending, fuse)
    return tuple(t._value for t in tensors) if len(tensors) != 1 else tensors[0]._value


def sum(x, axis=None, keepdims: bool = False):  # noqa: A001
    return reduce("sum", x, axis, keepdims)


def max(x, axis=None, keepdims: bool = False):  # noqa: A001
    return reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims: bool = False):  # noqa: A001
    return reduce("min", x, axis, keepdims)


def prod(x, axis=None, keepdims: bool = False):
    return reduce("prod", x, axis, keepdims)


def mean(x, axis=None, keepdims: bool = False):
    return asarray(x).mean(axis, keepdims)


def relu(x):
    return maximum(x, 0)


def sigmoid(x):
    return 1.0 / (1.0 + exp(-x))


def pow(x, y):  # noqa: A001
    return binary("pow", x, y)


def abs(x):  # noqa: A001
    return x.__abs__()


def transpose(x, axes=None):
    return x.transpose(*(axes or ()))


def reshape(x, shape):
    return x.reshape(shape)


exp = MATH["exp"]
exp2 = MATH["exp2"]
log = MATH["log"]
log2 = MATH["log2"]
sqrt = MATH["sqrt"]
rsqrt = MATH["rsqrt"]
sin = MATH["sin"]
cos = MATH["cos"]
tan = MATH["tan"]
tanh = MATH["tanh"]
asin = MATH["asin"]
acos = MATH["acos"]
atan = MATH["atan"]
sinh = MATH["sinh"]
cosh = MATH["cosh"]
floor = MATH["floor"]
ceil = MATH["ceil"]
round = MATH["round"]  # noqa: A001
trunc = MATH["trunc"]
erf = MATH["erf"]

__all__ = ["LazyTensor", "asarray", "eval", "compile", "explain", "Explanation", "KernelReport",
           "where", "maximum", "minimum", "matmul", "sum", "max", "min", "prod", "mean",
           "relu", "sigmoid", "pow", "abs", "transpose", "reshape", "broadcast_shapes",
           "compare", "math_fn", *MATH]
