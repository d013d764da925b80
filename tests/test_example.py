"""The showcase example runs and verifies itself on every runtime present."""
from __future__ import annotations

import pytest

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
