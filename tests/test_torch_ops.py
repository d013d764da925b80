"""cubepy kernels as PyTorch operations: examples/torch_autograd.py's differentiable seed
kernel against torch's reference (seed shapes and a 4-D broadcast), gradcheck in
float64, torch.compile, and the cubepy.torch helpers. CPU tensors on the cpu runtime
here; the `cuda` tests repeat the checks with CUDA tensors on the cuda runtime."""
from __future__ import annotations

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import cubepy  # noqa: E402
from cubepy import ABSOLUTE_POS, CubeCount, CubeDim, Float, Tensor, cube  # noqa: E402
from cubepy.torch import client_for_tensors, custom_op, launch, sum_to_shape  # noqa: E402
from examples_loader import load_example  # noqa: E402

example = load_example("torch_autograd")
sys.modules.setdefault(example.__name__, example)  # torch.compile imports it by name
fused = example.fused_matmul_add_relu

SEED_SHAPES = ((1, 32, 32), (32, 32, 32), (32, 32, 32))
BROADCAST_4D = ((2, 1, 5, 8), (1, 3, 8, 8), (8,))  # lhs/rhs batch dims broadcast, bias a row


def _device_params():
    return [pytest.param("cpu", id="cpu"),
            pytest.param("cuda", id="cuda", marks=pytest.mark.cuda)]


@pytest.fixture(params=_device_params())
def device(request):
    if request.param == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("torch without CUDA")
        if "cuda" not in cubepy.available_runtimes():
            pytest.skip("no cubepy cuda runtime")
    return request.param


def _inputs(shapes, device, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=gen, dtype=dtype).to(device).requires_grad_()
            for s in shapes]


@pytest.mark.parametrize("shapes", [SEED_SHAPES, BROADCAST_4D], ids=["seed", "broadcast4d"])
def test_forward_and_gradients_match_torch(device, shapes):
    lhs, rhs, bias = _inputs(shapes, device)
    got = fused(lhs, rhs, bias)
    want = torch.relu(lhs @ rhs + bias)
    assert got.shape == want.shape and got.device == want.device
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)  # no sync before the read
    grad = torch.randn(want.shape, generator=torch.Generator().manual_seed(1)).to(device)
    mine = torch.autograd.grad(got, (lhs, rhs, bias), grad)
    ref = torch.autograd.grad(want, (lhs, rhs, bias), grad)
    for g, r, x in zip(mine, ref, (lhs, rhs, bias)):
        assert g.shape == x.shape
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-3)


def test_example_script_prints_both_checks(capsys):
    assert example.main(["--runtime", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "inference OK" in out
    assert out.count("autodiff  OK") == 3


@pytest.mark.parametrize("runtime", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_example_script_exits_cleanly(runtime):
    """As a script, in a process of its own: on cuda the backward runs on torch's autograd
    thread, which must end without a CUDA context left pushed (PyCUDA aborts then)."""
    import subprocess
    import sys
    if runtime == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    run = subprocess.run([sys.executable, example.__file__, "--runtime", runtime],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-1000:] + run.stderr[-2000:]
    assert run.stdout.count("OK") == 4


def test_backward_masks_by_the_saved_output(monkeypatch):
    """The backward reads the saved output; it never launches the forward again."""
    lhs, rhs, bias = _inputs(SEED_SHAPES, "cpu")
    out = fused(lhs, rhs, bias)
    calls = []
    real = example.fused_matmul_add_relu_kernel.launch
    monkeypatch.setattr(example.fused_matmul_add_relu_kernel, "launch",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    out.sum().backward()
    assert calls == [] and bias.grad is not None


def test_gradcheck_float64(device):
    inputs = _inputs(((1, 3, 4), (2, 4, 4), (4,)), device, dtype=torch.float64, seed=3)
    assert torch.autograd.gradcheck(fused, tuple(inputs), eps=1e-6, atol=1e-5)


def test_torch_compile_keeps_the_op_opaque(device):
    torch._dynamo.reset()

    def model(lhs, rhs, bias):
        return fused(lhs, rhs, bias) * 2

    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    lhs, rhs, bias = _inputs(BROADCAST_4D, device)
    got = compiled(lhs, rhs, bias)
    want = torch.relu(lhs @ rhs + bias) * 2
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    got.sum().backward()
    grads = [x.grad.clone() for x in (lhs, rhs, bias)]
    for x in (lhs, rhs, bias):
        x.grad = None
    want.sum().backward()
    for g, x in zip(grads, (lhs, rhs, bias)):
        torch.testing.assert_close(g, x.grad, rtol=1e-4, atol=1e-3)


def test_dynamo_sees_one_opaque_node():
    torch._dynamo.reset()
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    f = torch.compile(lambda a, b, c: fused(a, b, c) + 1, backend=record, fullgraph=True)
    lhs, rhs, bias = _inputs(SEED_SHAPES, "cpu")
    torch.testing.assert_close(f(lhs, rhs, bias), torch.relu(lhs @ rhs + bias) + 1,
                               rtol=1e-4, atol=1e-4)
    targets = [str(n.target) for g in graphs for n in g.graph.nodes
               if n.op == "call_function"]
    # by name: loading the example again (the docs gallery does) registers the op anew
    assert targets.count("cubepy_examples.fused_matmul_add_relu.default") == 1


def test_opcheck_of_the_registered_op():
    lhs, rhs, bias = _inputs(BROADCAST_4D, "cpu")
    torch.library.opcheck(torch.ops.cubepy_examples.fused_matmul_add_relu.default,
                          (lhs, rhs, bias))


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match="rhs's last dimension"):
        fused(torch.zeros(2, 3), torch.zeros(3, 4), torch.zeros(4))
    with pytest.raises(ValueError, match="does not broadcast"):
        fused(torch.zeros(2, 3), torch.zeros(3, 3), torch.zeros(2, 2))
    with pytest.raises(ValueError, match="batch dimensions"):
        fused(torch.zeros(2, 4, 3), torch.zeros(3, 3, 3), torch.zeros(3))


# -- the helpers --------------------------------------------------------------------------
@cube(launch=True)
def scale_kernel(x: Tensor[Float], a: Float, out: Tensor[Float]):
    i = ABSOLUTE_POS
    if i < out.len():
        out[i] = x[i] * a


def _scale_impl(x: torch.Tensor, a: float) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    launch(scale_kernel, CubeCount(-(-x.numel() // 64)), CubeDim(64), x, a, out)
    return out


scale = custom_op("cubepy_tests::scale", _scale_impl,
                  fake=lambda x, a: torch.empty_like(x),
                  setup_context=lambda ctx, inputs, output: setattr(ctx, "a", inputs[1]),
                  backward=lambda ctx, grad: (scale(grad, ctx.a), None))


def test_custom_op_helper_with_autograd(device):
    x = torch.arange(100, dtype=torch.float32, device=device).requires_grad_()
    y = scale(x, 3.0)
    torch.testing.assert_close(y, x.detach() * 3)
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 3.0))
    compiled = torch.compile(lambda v: scale(v, 2.0) + 1, backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(compiled(x.detach()), x.detach() * 2 + 1)


def test_client_for_tensors():
    assert client_for_tensors(torch.zeros(1), 2.0) is cubepy.client("cpu")
    with pytest.raises(TypeError, match="no torch tensor"):
        client_for_tensors(np.zeros(2), 1)
    with pytest.raises(TypeError, match="setup_context without backward"):
        custom_op("cubepy_tests::bad", _scale_impl, setup_context=lambda *a: None)


_DEFINED_AGAIN = """
import torch
from torch._library import custom_ops

from cubepy.torch import custom_op


def first(x: torch.Tensor) -> torch.Tensor:
    return x + 1


def second(x: torch.Tensor) -> torch.Tensor:
    return x + 2


old = custom_op("cubepy_reload::op", first)
# torch frees the earlier definition's dispatcher entry (here, in the function that
# makes the new definition's library), then defines the new one; other operators defined
# in between take the freed memory, as other allocations may in a longer-running process
probes = []
make_library = custom_ops.get_library_allowing_overwrite


def library_after_others_took_the_memory(namespace, name):
    lib = make_library(namespace, name)
    for i in range(4):
        probes.append(torch.library.Library(f"cubepy_reload_probe{i}", "FRAGMENT"))
        probes[-1].define("probe(Tensor a, Tensor b, Tensor c) -> Tensor")
    return lib


custom_ops.get_library_allowing_overwrite = library_after_others_took_the_memory
new = custom_op("cubepy_reload::op", second)  # what reloading the defining module does
custom_ops.get_library_allowing_overwrite = make_library
x = torch.zeros(3)
print(old(x).tolist(), new(x).tolist(), torch.ops.cubepy_reload.op(x).tolist())
"""


def test_an_operator_defined_again_leaves_earlier_references_usable(tmp_path):
    """Defining an operator name again (a reloaded module; the docs gallery imports the
    examples a second time in the test process) makes torch free the earlier operator's
    dispatcher entry: calling the earlier object then read freed memory, which failed
    this file's tests with std::bad_alloc. In a process of its own, since that is a
    crash at worst."""
    import os
    import subprocess
    script = tmp_path / "defined_again.py"
    script.write_text(_DEFINED_AGAIN)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[0] == "[2.0, 2.0, 2.0] [2.0, 2.0, 2.0] [2.0, 2.0, 2.0]"


def test_sum_to_shape():
    g = torch.ones(2, 3, 4, 5)
    assert torch.equal(sum_to_shape(g, (3, 1, 5)), torch.full((3, 1, 5), 8.0))
    assert torch.equal(sum_to_shape(g, (5,)), torch.full((5,), 24.0))
    assert torch.equal(sum_to_shape(g, g.shape), g)
    assert sum_to_shape(torch.ones(3, 4), (1, 1, 4)).shape == (1, 1, 4)
