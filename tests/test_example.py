"""The showcase example runs and verifies itself on every runtime present."""
from __future__ import annotations

import pytest

import cubepy

from examples_loader import load_example


def test_example_verifies_against_numpy(runtime_client, capsys):
    example = load_example("fused_matmul_add_relu")
    assert example.main(["--runtime", runtime_client.runtime]) == 0
    out = capsys.readouterr().out
    assert f"runtime: {runtime_client.runtime}" in out
    assert "check:   OK" in out


@pytest.mark.parametrize("shape", [["--batches", "3", "--rows", "33", "--cols", "17"],
                                   ["--batches", "1", "--rows", "5", "--cols", "40"]])
def test_example_odd_shapes(runtime_client, capsys, shape):
    example = load_example("fused_matmul_add_relu")
    assert example.main(["--runtime", runtime_client.runtime, *shape]) == 0
    assert "check:   OK" in capsys.readouterr().out


def test_example_shows_source(capsys):
    example = load_example("fused_matmul_add_relu")
    assert example.main(["--show-source", "metal"]) == 0
    assert "kernel void" in capsys.readouterr().out


@pytest.mark.parametrize("shape", [[], ["--batches", "3", "--rows", "20", "--cols", "17"]])
def test_backward_example_gradients_match_numpy(runtime_client, capsys, shape):
    example = load_example("fused_matmul_add_relu_backward")
    assert example.main(["--runtime", runtime_client.runtime, *shape]) == 0
    out = capsys.readouterr().out
    for grad in ("grad_lhs", "grad_rhs", "grad_bias"):
        assert any(line.startswith(grad) and "OK" in line for line in out.splitlines())


def test_backward_handles_rhs_broadcast_too(runtime_client):
    """lhs batched and rhs broadcast: the gradient of rhs sums over the batches."""
    import numpy as np
    fwd = load_example("fused_matmul_add_relu")
    bwd = load_example("fused_matmul_add_relu_backward")
    c = runtime_client
    rng = np.random.default_rng(3)
    lhs_h = rng.standard_normal((4, 9, 12)).astype(np.float32)
    rhs_h = rng.standard_normal((1, 12, 12)).astype(np.float32)
    bias_h = rng.standard_normal((4, 9, 12)).astype(np.float32)
    grad_out_h = rng.standard_normal((4, 9, 12)).astype(np.float32)
    lhs, rhs, bias = c.tensor(lhs_h), c.tensor(rhs_h), c.tensor(bias_h)
    out = c.empty((4, 9, 12), cubepy.f32)
    fwd.launch_forward(c, lhs, rhs, bias, out)
    got = [g.numpy() for g in bwd.launch_backward(c, lhs, rhs, out, c.tensor(grad_out_h))]
    for g, e in zip(got, bwd.numpy_backward(lhs_h, rhs_h, bias_h, grad_out_h)):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-3)
