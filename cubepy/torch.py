"""PyTorch operations backed by cubepy kernels (`pip install "cubepy[torch]"`).

    from cubepy.torch import custom_op, launch

    @custom_op("mylib::scale", fake=lambda x, a: torch.empty_like(x))
    def scale(x: torch.Tensor, a: float) -> torch.Tensor:
        out = torch.empty_like(x)
        launch(scale_kernel, CubeCount(-(-x.numel() // 256)), CubeDim(256), x, a, out)
        return out

`custom_op` registers the function with `torch.library.custom_op` (so `torch.compile`
keeps it as one opaque node, using `fake` for output shapes) and, given `backward`, with
`register_autograd`; the backward may itself call cubepy-backed operations. `launch`
runs a kernel on the client of its torch arguments' device: CUDA tensors on the cuda
runtime (on torch's current stream), CPU tensors on the cpu runtime, in place.

No `from __future__ import annotations` here: torch.library reads the annotations of the
functions it registers.
"""
import weakref
from typing import Any, Callable, Iterable, Optional, overload

import torch

from .interop import client_for

__all__ = ["client_for_tensors", "launch", "launch_unchecked", "custom_op", "sum_to_shape"]


def client_for_tensors(*values: Any):
    """The cubepy client of the device holding the torch tensors among `values` (all must
    be on one device)."""
    devices = {v.device for v in values if isinstance(v, torch.Tensor)}
    if not devices:
        raise TypeError("no torch tensor among the arguments: pass a client to "
                        "kernel.launch(client, ...) instead")
    if len(devices) > 1:
        raise ValueError(f"the tensors are on several devices ({sorted(map(str, devices))}); "
                         f"a launch runs on one")
    first = next(v for v in values if isinstance(v, torch.Tensor))
    return client_for(first)


def launch(kernel, cube_count, cube_dim, *args: Any, **kwargs: Any) -> None:
    """`kernel.launch` on the client of the torch tensors among the arguments; the
    tensors are used in place (no copies), on torch's current stream on CUDA."""
    client = client_for_tensors(*args, *kwargs.values())
    kernel.launch(client, cube_count, cube_dim, *args, **kwargs)


def launch_unchecked(kernel, cube_count, cube_dim, *args: Any, **kwargs: Any) -> None:
    """As `launch`, without bounds checks (`kernel.launch_unchecked`)."""
    client = client_for_tensors(*args, *kwargs.values())
    kernel.launch_unchecked(client, cube_count, cube_dim, *args, **kwargs)


# Typed overloads so type checkers know the decorated name is a torch operator (callable,
# with register_fake/register_autograd), used directly or as a decorator.
@overload
def custom_op(name: str, fn: Callable, *, mutates_args: Iterable[str] = (),
              fake: Optional[Callable] = None, backward: Optional[Callable] = None,
              setup_context: Optional[Callable] = None,
              device_types: Optional[Iterable[str]] = None) -> "torch.library.CustomOpDef": ...
@overload
def custom_op(name: str, fn: None = None, *, mutates_args: Iterable[str] = (),
              fake: Optional[Callable] = None, backward: Optional[Callable] = None,
              setup_context: Optional[Callable] = None, device_types: Optional[Iterable[str]] = None
              ) -> "Callable[[Callable], torch.library.CustomOpDef]": ...
def custom_op(name: str, fn: Optional[Callable] = None, *, mutates_args: Iterable[str] = (),
              fake: Optional[Callable] = None, backward: Optional[Callable] = None,
              setup_context: Optional[Callable] = None,
              device_types: Optional[Iterable[str]] = None) -> Any:
    """Registers `fn` as the PyTorch operator `name` ("namespace::op_name").

    `fn` takes and returns torch tensors (annotated, as torch.library requires) and
    launches cubepy kernels. `fake(*args)` returns empty outputs of the right shapes,
    dtypes and devices (what `torch.compile` traces with). `backward(ctx, *grads)` and
    `setup_context(ctx, inputs, output)` follow `torch.library.register_autograd`.
    Usable as a decorator: `@custom_op("mylib::op", fake=...)`.
    """
    if fn is None:
        return lambda f: custom_op(name, f, mutates_args=mutates_args, fake=fake,
                                   backward=backward, setup_context=setup_context,
                                   device_types=device_types)
    if setup_context is not None and backward is None:
        raise TypeError("setup_context without backward: pass both, or neither")
    op = torch.library.custom_op(name, mutates_args=tuple(mutates_args),
                                 device_types=device_types)(fn)
    if fake is not None:
        op.register_fake(fake)
    if backward is not None:
        op.register_autograd(backward, setup_context=setup_context)
    _redirect_earlier_definitions(name, op)
    return op


# operator name -> the operators custom_op registered under it, weakly held
_DEFINED: dict = {}


def _redirect_earlier_definitions(name: str, op: Any) -> None:
    """Points every earlier, still referenced operator of this name at `op`.

    Registering a name again (a module reloaded: importlib.reload, a notebook's
    autoreload, a docs build that imports the examples) makes torch free the earlier
    operator's dispatcher entry, while the earlier operator object keeps the handle to it:
    calling it then reads freed memory (a crash, std::bad_alloc, or another operator
    that took the memory runs). Calls through an earlier object now reach the operator
    registered last, as `torch.ops.<namespace>.<name>` does."""
    earlier = [ref() for ref in _DEFINED.get(name, ())]
    for old in earlier:
        if old is not None and old is not op:
            old._opoverload = op._opoverload
    _DEFINED[name] = [weakref.ref(o) for o in earlier if o is not None] + [weakref.ref(op)]


def sum_to_shape(grad: torch.Tensor, shape) -> torch.Tensor:
    """Sums `grad` over the dimensions a broadcast to grad's shape added or expanded from
    size 1: the gradient of an input of `shape` that was broadcast."""
    shape = tuple(shape)
    extra = grad.dim() - len(shape)
    if extra < 0:  # shape has leading size-1 dimensions grad lacks
        grad = grad.reshape((1,) * -extra + tuple(grad.shape))
    elif extra > 0:
        grad = grad.sum(dim=tuple(range(extra)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape)
