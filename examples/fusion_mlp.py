"""An MLP forward pass written as plain tensor code with cubepy.fusion: each layer's
matmul, bias add and activation become one generated kernel, and the final softmax three.

    python examples/fusion_mlp.py [--runtime cpu|wgpu|cuda] [--batch 64] [--show-source]

Prints the kernels the forward pass became (fusion.explain) and checks the result
against numpy.
"""
from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import cubepy
import cubepy.fusion as fz

LAYERS = (784, 256, 128, 10)  # an MNIST-sized MLP


def init_params(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """He-initialised weights and small biases, one (w, b) per layer."""
    return [((rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32),
             (rng.standard_normal(n_out) * 0.01).astype(np.float32))
            for n_in, n_out in zip(LAYERS[:-1], LAYERS[1:])]


def forward(x: Any, params: list) -> Any:
    """relu(x @ w + b) per hidden layer, then softmax of the last layer's logits; works
    on lazy tensors and, unchanged, on numpy arrays (the reference)."""
    lib = fz if isinstance(x, fz.LazyTensor) else np
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = lib.maximum(h, 0.0)
    e = lib.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or '').splitlines()[0])
    parser.add_argument("--runtime", default=None, choices=("cuda", "wgpu", "cpu"),
                        help="where to run (default: $CUBEPY_RUNTIME, else the best present: "
                             "cuda, then wgpu on a GPU, then cpu)")
    parser.add_argument("--batch", type=int, default=64,
                        help="rows of the input batch (default 64)")
    parser.add_argument("--show-source", action="store_true",
                        help="print the generated source of every kernel")
    args = parser.parse_args(argv)
    client = cubepy.client(args.runtime)
    rng = np.random.default_rng(0)
    x = rng.random((args.batch, LAYERS[0]), dtype=np.float32)
    params = init_params(rng)

    lazy_x = fz.asarray(client.tensor(x))
    lazy_params = [(fz.asarray(client.tensor(w)), fz.asarray(client.tensor(b)))
                   for w, b in params]
    probs = forward(lazy_x, lazy_params)
    plan = fz.explain(probs)
    print(f"runtime: {client.runtime} ({client.device})")
    print(plan)
    if args.show_source:
        print(plan.sources())
    got = probs.numpy()
    expect = forward(x, params)
    ok = np.allclose(got, expect, rtol=1e-4, atol=1e-6)
    print(f"check:   {'OK' if ok else 'MISMATCH'} (max abs error "
          f"{np.abs(got - expect).max():.2e}; {len(plan)} kernels for "
          f"{len(params)} layers and a softmax)")
    return 0 if ok else 1


if __name__ == "__main__":
    with cubepy.exit_on_error():  # a missing runtime or a rejected kernel: one message
        raise SystemExit(main())
