"""The seed kernel as a differentiable PyTorch function.

    python examples/torch_autograd.py                  # best device: CUDA if present, else CPU
    python examples/torch_autograd.py --runtime cpu    # torch CPU tensors, cubepy's cpu runtime

`fused_matmul_add_relu(lhs, rhs, bias)` is relu(lhs @ rhs + bias) computed by the seed's
fused cubepy kernel on torch tensors in place (CUDA tensors on the cuda runtime, CPU
tensors on the cpu runtime), registered as the PyTorch operator
`cubepy_examples::fused_matmul_add_relu` (opaque to torch.compile, with a fake
implementation for shapes) with its own backward pass:

    grad_pre  = grad * (out > 0)        a cubepy kernel, masking by the SAVED output (the
                                        seed's compute_bound checkpoint: no recomputation)
    grad_lhs  = grad_pre @ rhs^T        torch matmul, summed over broadcast dimensions
    grad_rhs  = lhs^T @ grad_pre        likewise
    grad_bias = grad_pre                summed to bias's shape

Broadcasting as in the seed: lhs and rhs batch dimensions broadcast against each other;
bias has the output's shape or broadcasts to it. The seed kernel reads the reduction
length from rhs's last dimension, so rhs is square in its last two dimensions.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cubepy  # noqa: E402
from cubepy import CubeCount, CubeDim  # noqa: E402
from cubepy.torch import client_for_tensors, custom_op, launch, sum_to_shape  # noqa: E402
from fused_matmul_add_relu import (fused_matmul_add_relu_kernel,  # noqa: E402,F401
                                   launch_forward)
from fused_matmul_add_relu_backward import relu_backward  # noqa: E402


def output_shape(lhs_shape, rhs_shape, bias_shape) -> torch.Size:
    """The output shape of relu(lhs @ rhs + bias), or ValueError saying what is wrong."""
    if len(lhs_shape) < 2 or len(rhs_shape) < 2:
        raise ValueError(f"lhs and rhs need at least two dimensions, got {tuple(lhs_shape)} "
                         f"and {tuple(rhs_shape)}")
    if lhs_shape[-1] != rhs_shape[-2] or rhs_shape[-2] != rhs_shape[-1]:
        raise ValueError(f"lhs [..., M, K] @ rhs [..., K, K] expected (the seed kernel "
                         f"reads K from rhs's last dimension), got {tuple(lhs_shape)} and "
                         f"{tuple(rhs_shape)}")
    try:
        batch = torch.broadcast_shapes(lhs_shape[:-2], rhs_shape[:-2])
    except RuntimeError:
        raise ValueError(f"the batch dimensions of lhs {tuple(lhs_shape)} and rhs "
                         f"{tuple(rhs_shape)} do not broadcast") from None
    out = torch.Size(batch + (lhs_shape[-2], rhs_shape[-1]))
    try:
        fits = torch.broadcast_shapes(bias_shape, out) == out
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(f"bias {tuple(bias_shape)} does not broadcast to the output "
                         f"{tuple(out)}")
    return out


def _as_rank(t: torch.Tensor, rank: int) -> torch.Tensor:
    """t with leading size-1 dimensions up to `rank`, contiguous (the kernel reads rows
    and columns as contiguous and batches through shape/stride)."""
    return t.reshape((1,) * (rank - t.dim()) + tuple(t.shape)).contiguous()


@custom_op("cubepy_examples::fused_matmul_add_relu",
           fake=lambda lhs, rhs, bias: lhs.new_empty(output_shape(lhs.shape, rhs.shape,
                                                                  bias.shape)))
def _forward(lhs: torch.Tensor, rhs: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    shape = output_shape(lhs.shape, rhs.shape, bias.shape)
    out = torch.empty(shape, dtype=lhs.dtype, device=lhs.device)
    if out.numel() == 0:
        return out
    rank = len(shape)
    lhs, rhs = _as_rank(lhs, rank), _as_rank(rhs, rank)
    bias = bias.expand(shape).contiguous()
    launch_forward(client_for_tensors(out), lhs, rhs, bias, out)  # the seed's launch
    return out


@custom_op("cubepy_examples::relu_backward",
           fake=lambda grad, out: torch.empty_like(out))
def relu_grad(grad: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """grad where the saved forward output is positive, else 0 (a cubepy kernel)."""
    grad, out = grad.contiguous(), out.contiguous()
    result = torch.empty_like(out)
    n = out.numel()
    if n:
        launch(relu_backward, CubeCount(-(-n // 256)), CubeDim(256), grad, out, result)
    return result


def _setup_context(ctx, inputs, output) -> None:
    lhs, rhs, bias = inputs
    ctx.save_for_backward(lhs, rhs, output)  # the output, not the pre-activation
    ctx.bias_shape = bias.shape


def _backward(ctx, grad: torch.Tensor):
    lhs, rhs, out = ctx.saved_tensors
    grad_pre = relu_grad(grad, out)
    grad_lhs = sum_to_shape(grad_pre @ rhs.transpose(-1, -2), lhs.shape)
    grad_rhs = sum_to_shape(lhs.transpose(-1, -2) @ grad_pre, rhs.shape)
    return grad_lhs, grad_rhs, sum_to_shape(grad_pre, ctx.bias_shape)


_forward.register_autograd(_backward, setup_context=_setup_context)


def fused_matmul_add_relu(lhs: torch.Tensor, rhs: torch.Tensor,
                          bias: torch.Tensor) -> torch.Tensor:
    """relu(lhs @ rhs + bias) by the seed's fused cubepy kernel, differentiable."""
    return _forward(lhs, rhs, bias)


def best_device() -> str:
    """cuda when torch and cubepy both see a GPU, else cpu."""
    if torch.cuda.is_available() and "cuda" in cubepy.available_runtimes():
        return "cuda"
    return "cpu"


def check(device: str, shapes=((1, 32, 32), (32, 32, 32), (32, 32, 32)), seed: int = 0):
    """The seed's inference and autodiff checks against torch.relu(lhs @ rhs + bias);
    returns (ok, report lines)."""
    gen = torch.Generator().manual_seed(seed)
    lhs, rhs, bias = (torch.randn(s, generator=gen).to(device).requires_grad_()
                      for s in shapes)
    got = fused_matmul_add_relu(lhs, rhs, bias)
    want = torch.relu(lhs @ rhs + bias)
    lines, ok = [], True
    err = (got - want).abs().max().item()
    good = got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-4)
    ok &= good
    lines.append(f"inference {'OK' if good else 'MISMATCH'}: output {tuple(got.shape)}, "
                 f"max abs error {err:.2e}")
    grad = torch.randn(want.shape, generator=gen).to(device)
    mine = torch.autograd.grad(got, (lhs, rhs, bias), grad)
    ref = torch.autograd.grad(want, (lhs, rhs, bias), grad)
    for name, g, r in zip(("lhs", "rhs", "bias"), mine, ref):
        good = g.shape == r.shape and torch.allclose(g, r, rtol=1e-4, atol=1e-3)
        ok &= good
        lines.append(f"autodiff  {'OK' if good else 'MISMATCH'}: grad_{name:4} "
                     f"{str(tuple(g.shape)):14} max abs error {(g - r).abs().max().item():.2e}")
    return ok, lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runtime", "--device", dest="runtime", choices=("cuda", "cpu"),
                        default=os.environ.get("CUBEPY_RUNTIME") or None,
                        help="cuda: torch CUDA tensors on the cuda runtime; cpu: torch CPU "
                        "tensors on the cpu runtime (default: $CUBEPY_RUNTIME, else cuda if "
                        "present, else cpu; wgpu cannot use torch's memory)")
    args = parser.parse_args(argv)
    if args.runtime not in (None, "cuda", "cpu"):  # from $CUBEPY_RUNTIME
        parser.error(f"runtime {args.runtime!r}: torch tensors run on cuda or cpu")
    if args.runtime:
        cubepy.client(args.runtime)  # a missing runtime says what to install
    device = args.runtime or best_device()
    ok, lines = check(device)
    client = cubepy.client_for(torch.empty(0, device=device))
    print(f"runtime: {client.runtime}")
    print(f"device:  {client.device} (torch tensors on {device})")
    for line in lines:
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime: one message with the pip command
        raise SystemExit(main())
