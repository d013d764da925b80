"""cubepy.fusion: lazy tensor expressions against numpy on every runtime present, the
plans they become (through explain), caching, and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cubepy
import cubepy.fusion as fz
from cubepy import CubeCount, CubeDim, f32
from cubepy.fusion import runner
from cubepy.fusion.graph import Leaf

import corpus

RNG = np.random.default_rng(7)


def lazy(client, a: np.ndarray) -> fz.LazyTensor:
    return fz.asarray(client.tensor(a))


def rand(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ----------------------------------------------------------------------------- random graphs

_UNARY = {
    "neg": (lambda x: -x, lambda x: -x),
    "abs": (abs, np.abs),
    "tanh": (fz.tanh, np.tanh),
    "exp_clip": (lambda x: fz.exp(fz.minimum(x, 3.0)), lambda x: np.exp(np.minimum(x, 3.0))),
    "sqrt_abs": (lambda x: fz.sqrt(abs(x)), lambda x: np.sqrt(np.abs(x))),
    "sin": (fz.sin, np.sin),
}
_BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "max": (fz.maximum, np.maximum),
    "min": (fz.minimum, np.minimum),
    "where_gt": (lambda a, b: fz.where(a > b, a, b * 0.5),
                 lambda a, b: np.where(a > b, a, b * np.float32(0.5))),
    "scale": (lambda a, b: a * 1.5 + 0.25, lambda a, b: a * np.float32(1.5) + np.float32(0.25)),
}
SHAPES = [(4, 5, 6), (5, 6), (6,), (1, 6), (4, 1, 6), (5, 1)]


@st.composite
def expressions(draw, depth: int = 4):
    """(build(lazy leaves), evaluate(numpy leaves)) of a random element-wise tree over
    three leaves of broadcast-compatible shapes."""
    def tree(d):
        if d == 0 or draw(st.integers(0, 3)) == 0:
            k = draw(st.integers(0, 2))
            return (lambda L: L[k]), (lambda N: N[k])
        if draw(st.booleans()):
            name = draw(st.sampled_from(sorted(_UNARY)))
            (fl, fn), (sl, sn) = _UNARY[name], tree(d - 1)
            return (lambda L: fl(sl(L))), (lambda N: fn(sn(N)))
        name = draw(st.sampled_from(sorted(_BINARY)))
        (fl, fn), (al, an), (bl, bn) = _BINARY[name], tree(d - 1), tree(d - 1)
        return (lambda L: fl(al(L), bl(L))), (lambda N: fn(an(N), bn(N)))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(3)]
    return shapes, tree(depth)


def _check_random(client, data):
    shapes, (build, evaluate) = data
    arrays = [rand(*s) for s in shapes]
    with np.errstate(all="ignore"):
        expect = evaluate(arrays)
    got = build([lazy(client, a) for a in arrays])
    if isinstance(got.node, Leaf):  # the tree is one of the inputs
        assert len(fz.explain(got)) == 0
        return
    assert len(fz.explain(got)) == 1  # every element-wise tree is one kernel
    np.testing.assert_allclose(got.numpy(), np.broadcast_to(expect, got.shape),
                               rtol=2e-5, atol=2e-5)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(expressions())
def test_random_elementwise_graphs_cpu(data):
    _check_random(cubepy.client("cpu"), data)


@pytest.mark.wgpu
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(expressions(depth=3))
def test_random_elementwise_graphs_wgpu(data):
    try:
        client = cubepy.client("wgpu")
    except cubepy.LaunchError:
        pytest.skip("no wgpu adapter")
    _check_random(client, data)


# ----------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), (2, False),
                                           ((0, 2), True), (-1, False)])
@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
def test_reductions_with_fused_producers(runtime_client, op, axis, keepdims):
    x = rand(6, 7, 33)
    X = lazy(runtime_client, x)
    got = getattr(X * 2.0 - 1.0, op)(axis=axis, keepdims=keepdims)
    expect = getattr(x * 2.0 - 1.0, op)(axis=axis, keepdims=keepdims)
    plan = fz.explain(got)
    assert len(plan) == 1 and plan.kernels[0].kind == "reduce"
    assert {"mul", "sub"} <= set(plan.kernels[0].fused_ops)
    np.testing.assert_allclose(got.numpy(), expect, rtol=1e-5, atol=1e-5)


def test_prod_and_integer_sums(runtime_client):
    x = (RNG.random((5, 9)) + 0.5).astype(np.float32)
    i = RNG.integers(-50, 50, (5, 9)).astype(np.int32)
    np.testing.assert_allclose(lazy(runtime_client, x).prod(axis=1).numpy(), x.prod(1),
                               rtol=1e-5)
    assert (lazy(runtime_client, i).sum(axis=0).numpy() == i.sum(0)).all()
    assert (lazy(runtime_client, i).max().numpy() == i.max()).all()


def test_softmax_is_three_kernels_and_exact(runtime_client):
    x = rand(37, 300)
    X = lazy(runtime_client, x)
    e = fz.exp(X - X.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    kinds = [k.kind for k in fz.explain(y).kernels]
    assert kinds == ["reduce", "reduce", "elementwise"]
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y.numpy(), ref / ref.sum(1, keepdims=True), rtol=1e-5,
                               atol=1e-7)


def test_layernorm_fuses_the_mean_into_the_variance(runtime_client):
    x = rand(16, 64)
    X = lazy(runtime_client, x)
    mu = X.mean(axis=1, keepdims=True)
    var = ((X - mu) * (X - mu)).mean(axis=1, keepdims=True)
    y = (X - mu) / fz.sqrt(var + 1e-5)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-4, atol=1e-5)
    # mean (sum + divide on write), variance (sum over the fused square), normalise
    assert len(fz.explain(lazy(runtime_client, x).mean(axis=1))) == 1


# ----------------------------------------------------------------------------- matmul

@pytest.mark.parametrize("sa,sb", [((20, 19), (19, 7)), ((3, 5, 8), (8, 4)),
                                   ((1, 5, 8), (3, 8, 4)), ((2, 1, 5, 8), (3, 8, 6)),
                                   ((8,), (8, 5)), ((5, 8), (8,)), ((33, 40), (40, 17))])
def test_matmul_broadcasting(runtime_client, sa, sb):
    a, b = rand(*sa), rand(*sb)
    got = (lazy(runtime_client, a) @ lazy(runtime_client, b)).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_reads_fused_producers_and_transposed_views(runtime_client):
    a, w = rand(24, 16), rand(24, 10)
    A, W = lazy(runtime_client, a), lazy(runtime_client, w)
    y = fz.relu(A).T @ (W * 0.5)
    plan = fz.explain(y)
    assert len(plan) == 1 and plan.kernels[0].kind == "matmul"
    assert {"max", "mul"} <= set(plan.kernels[0].fused_ops)  # relu and the scale, on read
    np.testing.assert_allclose(y.numpy(), np.maximum(a, 0).T @ (w * 0.5), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("batch,m,n,count", [(32, 32, 32, (2, 2, 32)), (3, 20, 19, (2, 2, 3))])
def test_seed_expression_is_one_kernel_equal_to_the_seed_kernel(runtime_client, batch, m, n,
                                                                  count):
    """relu(lhs @ rhs + bias) with the seed's shapes: one kernel (matmul with the add and
    the max fused on write), equal to the hand-written seed kernel's output."""
    c = runtime_client
    rng = np.random.default_rng(batch * 100 + m)
    lhs = rng.random((1, m, n)).astype(np.float32)
    rhs = rng.random((batch, n, n)).astype(np.float32)
    bias = (rng.random((batch, m, n)) - 0.5 * n / 2).astype(np.float32)
    y = fz.relu(lazy(c, lhs) @ lazy(c, rhs) + lazy(c, bias))
    plan = fz.explain(y)
    assert len(plan) == 1
    assert plan.kernels[0].kind == "matmul"
    assert plan.kernels[0].fused_ops == ["matmul", "add", "max"]
    seed_out = c.empty((batch, m, n), f32)
    corpus.fused_matmul_add_relu_kernel.launch(c, CubeCount(*count), CubeDim(16, 16, 1),
                                               c.tensor(lhs), c.tensor(rhs), c.tensor(bias),
                                               seed_out)
    np.testing.assert_allclose(y.numpy(), seed_out.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.numpy(), np.maximum(lhs @ rhs + bias, 0), rtol=1e-5,
                               atol=1e-5)


# ----------------------------------------------------------------------------- views, outputs

def test_views_of_computed_values(runtime_client):
    x = rand(6, 8)
    X = lazy(runtime_client, x)
    y = (X * 3.0).T[1:7:2, ::3].reshape(-1) + 1.0
    assert len(fz.explain(y)) == 1
    # atol: CUDA fuses x * 3 + 1 into one fma (one rounding), numpy rounds twice
    np.testing.assert_allclose(y.numpy(), (x * 3).T[1:7:2, ::3].reshape(-1) + 1, rtol=1e-6,
                               atol=1e-6)
    z = (X + 1.0).reshape(4, 12)[:, 5] * X[0, 0]
    np.testing.assert_allclose(z.numpy(), (x + 1).reshape(4, 12)[:, 5] * x[0, 0], rtol=1e-6)
    np.testing.assert_allclose((X[:, None, :] - X[None]).sum(axis=2).numpy(),
                               (x[:, None, :] - x[None]).sum(axis=2), rtol=1e-4, atol=1e-4)


def test_several_results_of_one_shape_share_a_kernel(runtime_client):
    a, b = rand(10, 10), rand(10)
    A, B = lazy(runtime_client, a), lazy(runtime_client, b)
    s, p, q = A + B, A * B, (A - B).sum(axis=1)
    assert [k.kind for k in fz.explain(s, p, q).kernels] == ["reduce", "elementwise"]
    assert fz.explain(s, p).kernels[0].outputs == [(10, 10), (10, 10)]
    ts, tp, tq = fz.eval(s, p, q)
    np.testing.assert_allclose(ts.numpy(), a + b)
    np.testing.assert_allclose(tp.numpy(), a * b)
    np.testing.assert_allclose(tq.numpy(), (a - b).sum(1), rtol=1e-5, atol=1e-5)


def test_unfused_runs_one_kernel_per_operation_with_the_same_result(runtime_client):
    x = rand(50)
    X = lazy(runtime_client, x)
    chain = fz.tanh(X * 2.0 + 1.0) - X
    assert len(fz.explain(chain)) == 1
    assert len(fz.explain(chain, fuse=False)) == 4
    unfused = fz.eval(chain, fuse=False).numpy()
    np.testing.assert_allclose(unfused, np.tanh(x * 2 + 1) - x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(chain.numpy(), unfused, rtol=1e-6, atol=1e-6)


def test_evaluated_values_are_reused_not_recomputed(runtime_client):
    X = lazy(runtime_client, rand(30))
    y = fz.exp(X) * 2.0
    y.eval()
    assert len(fz.explain(y)) == 0
    z = y + 1.0
    plan = fz.explain(z)
    assert len(plan) == 1 and plan.kernels[0].fused_ops == ["add"]


def test_a_training_loop_compiles_once(runtime_client):
    def step(x, w, b):
        return fz.relu(fz.asarray(x) @ fz.asarray(w) + fz.asarray(b)).sum(axis=1)
    c = runtime_client
    shapes = ((8, 16), (16, 4), (4,))
    step(*(c.tensor(rand(*s)) for s in shapes)).eval()
    kernels, plans = len(runner._KERNELS), len(runner._PLANS)
    for _ in range(3):
        args = [rand(*s) for s in shapes]
        got = step(*(c.tensor(a) for a in args)).numpy()
        np.testing.assert_allclose(got, np.maximum(args[0] @ args[1] + args[2], 0).sum(1),
                                   rtol=1e-4, atol=1e-4)
    assert (len(runner._KERNELS), len(runner._PLANS)) == (kernels, plans)


def test_a_lazy_tensor_is_a_kernel_argument(runtime_client):
    c = runtime_client
    x = rand(64)
    out = c.zeros(5, f32)
    y = fz.exp(lazy(c, x))
    corpus.shared_reduce.launch(c, CubeCount(1), CubeDim(64), y, out)
    np.testing.assert_allclose(out.numpy()[0], np.exp(x).sum(), rtol=1e-5)


def test_integer_and_bool_expressions(runtime_client):
    i = RNG.integers(-100, 100, (7, 9)).astype(np.int32)
    I = lazy(runtime_client, i)
    assert (((I // 7) * 3 + I % 5).numpy() == (i // 7) * 3 + i % 5).all()
    m = (I > 0) & (I < 50)
    assert m.dtype == cubepy.bool_
    assert (fz.where(m, I, -I).numpy() == np.where((i > 0) & (i < 50), i, -i)).all()
    assert ((I ** 2).numpy() == i ** 2).all()
    np.testing.assert_allclose((I / 4).numpy(), i / 4, rtol=1e-6)
    assert (I.astype(f32) * 0.5).dtype is f32


# ----------------------------------------------------------------------------- errors

def test_errors_are_raised_when_recorded(runtime_client):
    X = lazy(runtime_client, rand(4, 5))
    with pytest.raises(ValueError, match="do not broadcast"):
        X + lazy(runtime_client, rand(3))
    with pytest.raises(ValueError, match="inner sizes 5 and 4"):
        X @ X
    with pytest.raises(ValueError, match="cannot reshape"):
        X.reshape(3, 7)
    with pytest.raises(IndexError, match="out of range"):
        X[9]
    with pytest.raises(IndexError, match="slice steps"):
        X[::-1]
    with pytest.raises(TypeError, match="ambiguous"):
        bool(X > 0)
    with pytest.raises(TypeError, match="integer or bool"):
        X & X


def test_tensors_of_two_clients_do_not_mix():
    """cubepy keeps one client per runtime, so the second client is a stand-in object:
    what is checked is that operands of two clients are refused where they meet."""
    c = cubepy.client("cpu")
    a = fz.asarray(c.tensor(rand(3)))
    b = fz.LazyTensor(a.node, object())
    with pytest.raises(cubepy.LaunchError, match="different clients"):
        a + b
    with pytest.raises(cubepy.LaunchError, match="another client"):
        a.__cubepy_tensor__(object())


def test_numpy_and_torch_arrays_are_accepted():
    c = cubepy.client("cpu")
    x = rand(5)
    np.testing.assert_allclose(fz.exp(fz.asarray(x, c)).numpy(), np.exp(x), rtol=1e-6)
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32)
    np.testing.assert_allclose((fz.asarray(t, c) * 2).numpy(), np.arange(6) * 2)


# ----------------------------------------------------------------------------- sources

@pytest.mark.nvcc
def test_fused_kernels_compile_with_nvcc_naga_and_clang(tmp_path):
    import source_check
    c = cubepy.client("cpu")
    a, b, bias = lazy(c, rand(5, 8)), lazy(c, rand(8, 6)), lazy(c, rand(6))
    y = fz.relu(a @ b + bias)
    s = (fz.exp(a) * 2.0).sum(axis=0)
    e = fz.tanh(a) - 1.0
    checked = 0
    for built in runner.build_all([y.node, s.node, e.node], {}, True):
        for target, check in (("cuda", source_check.check_cuda),
                              ("metal", source_check.check_metal)):
            tool = source_check.NVCC if target == "cuda" else source_check.CLANG
            if tool is None:
                continue
            sub = tmp_path / f"{built.name}_{target}"
            sub.mkdir()
            check(runner.source_of(built.kernel, target), sub)
            checked += 1
        if source_check._wgpu_device() is not None:
            lowered, abi, artefact = runner._generate(built.kernel, "wgsl")
            source_check.check_wgsl(artefact.source, abi)
            checked += 1
    if checked == 0:
        pytest.skip("no nvcc, clang++ or wgpu here")


def test_fusion_mlp_example(runtime_client, capsys):
    from examples_loader import load_example
    example = load_example("fusion_mlp")
    assert example.main(["--runtime", runtime_client.runtime, "--batch", "20"]) == 0
    out = capsys.readouterr().out
    assert "check:   OK" in out
    assert out.count("[matmul]") == 3 and "fuses matmul, add, max" in out


def test_compile_traces_once_per_signature_and_replays(runtime_client):
    c = runtime_client
    calls = []

    def mlp_layer(x, w, b):
        calls.append(1)
        return fz.relu(x @ w + b), (x * 2.0).sum(axis=1)

    fast = fz.compile(mlp_layer)
    for rows in (8, 8, 5):
        x, w, b = rand(rows, 16), rand(16, 4), rand(4)
        y, s = fast(c.tensor(x), c.tensor(w), c.tensor(b))
        np.testing.assert_allclose(y.numpy(), np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(s.numpy(), (x * 2).sum(1), rtol=1e-5, atol=1e-5)
    assert len(calls) == 2 and len(fast.programs) == 2  # rows 8 (twice), then 5
    unfused = fz.compile(lambda x: fz.exp(x) * 2.0 + 1.0, fuse=False)
    x = rand(40)
    np.testing.assert_allclose(unfused(c.tensor(x)).numpy(), np.exp(x) * 2 + 1, rtol=1e-5)
    assert len(unfused.programs[next(iter(unfused.programs))].steps) == 3


def test_compile_captures_closure_tensors_and_refuses_non_tensor_results(runtime_client):
    c = runtime_client
    w = rand(6, 3)
    W = lazy(c, w)
    project = fz.compile(lambda x: x @ W)
    x = rand(2, 6)
    np.testing.assert_allclose(project(c.tensor(x)).numpy(), x @ w, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="must return lazy tensors"):
        fz.compile(lambda x: 3.0)(c.tensor(x))


@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
def test_long_reductions_with_few_outputs_are_split_across_cubes(runtime_client, op):
    """A whole-tensor or few-row reduction over many elements runs in two kernels: many
    cubes write partial results, a second reduction combines them (with the epilogue)."""
    x = rand(3, 70000)
    X = lazy(runtime_client, x)
    y = getattr(X * 0.5, op)(axis=1)
    plan = fz.explain(y)
    assert [k.kind for k in plan.kernels] == ["reduce", "reduce"]
    assert plan.kernels[0].cube_count[0] > 3 * 8
    np.testing.assert_allclose(y.numpy(), getattr(x * 0.5, op)(axis=1), rtol=1e-4, atol=1e-3)
    total = (X * X).sum()
    np.testing.assert_allclose(total.numpy(), (x * x).sum(), rtol=1e-4)
