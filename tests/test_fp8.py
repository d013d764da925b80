"""8-bit floats (e4m3, e5m2): storage types that kernels load, store, select and convert.

The cpu runtime holds their bits as uint8 and computes with the f32 values they stand
for; CUDA uses cuda_fp8.h's __nv_fp8_e4m3 / __nv_fp8_e5m2; WGSL and Metal have none (a
CompileError). Every conversion into fp8 rounds to nearest even and saturates, as
cubepy.fp8 does on the host (tests/test_fp8_host.py checks that against CUDA's own).
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CompileError, CubeCount, CubeDim, LaunchError,
                    Line, SharedMemory, UNIT_POS, bf16, cube, e4m3, e5m2, f16, f32, f64,
                    i32, select, sync_cube)
from cubepy import fp8
from error_markers import located_error_checker

error_at = located_error_checker(__file__)

VALUES = np.array([0.1, 1.0, 3.3, -500.0, 1000.0, 0.0013, 240.0, 449.0, 470.0, -0.0,
                   1e-9, 57344.0, 70000.0, 2.5e-5], np.float32)


@cube(launch=True)
def quantize(x: Array[f32], scale: f32, q: Array[e4m3], r: Array[e5m2]):
    i = ABSOLUTE_POS
    if i < len(q):
        v = e4m3(x[i] * scale)
        q[i] = v
        r[i] = e5m2(x[i] * scale)


@cube(launch=True)
def widen(q: Array[e4m3], s: e4m3, as_f16: Array[f16], as_i32: Array[i32],
          as_f64: Array[f64], picked: Array[f32], from_shared: Array[f32]):
    i = ABSOLUTE_POS
    staged = SharedMemory(e4m3, 64)
    staged[UNIT_POS] = q[i]
    sync_cube()
    if i < len(q):
        as_f16[i] = f16(q[i])
        as_i32[i] = i32(q[i])
        as_f64[i] = f64(q[i])
        picked[i] = f32(select(i % 2 == 0, q[i], s))
        from_shared[i] = f32(staged[63 - UNIT_POS])


@cube(launch=True)
def narrow(x: Array[f64], n: Array[i32], wide: Array[e5m2], q: Array[e4m3]):
    i = ABSOLUTE_POS
    if i < len(q):
        wide[i] = e5m2(x[i])      # f64 -> e5m2, rounded once from the double
        q[i] = e4m3(wide[i])      # e5m2 -> e4m3
        if n[i] != 0:
            q[i] = e4m3(n[i])     # an integer, through f32


@cube(launch=True)
def literal_store(q: Array[e4m3]):
    q[ABSOLUTE_POS] = 1.3         # a literal of the element type: rounded to 1.25


def _run_quantize(client, x: np.ndarray):
    q = client.zeros(len(x), e4m3)
    r = client.zeros(len(x), e5m2)
    quantize.launch(client, CubeCount(1), CubeDim(64), client.tensor(x), 1.0, q, r)
    return q.numpy(), r.numpy()


# ------------------------------------------------------------------ what kernels compute

def test_quantize_rounds_to_nearest_even_and_saturates_on_cpu():
    q, r = _run_quantize(cubepy.client("cpu"), VALUES)
    np.testing.assert_array_equal(q, fp8.round_to(VALUES, "e4m3"))
    np.testing.assert_array_equal(r, fp8.round_to(VALUES, "e5m2"))
    assert q[3] == -448.0 and q[4] == 448.0 and r[12] == 57344.0  # saturated
    assert q[2] == 3.25 and np.signbit(q[9])


def test_quantize_gives_the_same_bits_on_every_runtime(runtime_client):
    if e4m3 not in runtime_client.limits.dtypes:
        with pytest.raises(LaunchError, match="e4m3"):
            runtime_client.zeros(4, e4m3)
        return
    rng = np.random.default_rng(1)
    x = np.concatenate([VALUES, rng.normal(0, 100, 4000).astype(np.float32)])
    q = runtime_client.zeros(len(x), e4m3)
    r = runtime_client.zeros(len(x), e5m2)
    quantize.launch(runtime_client, CubeCount(len(x) // 64 + 1), CubeDim(64),
                    runtime_client.tensor(x), 0.5, q, r)
    np.testing.assert_array_equal(q.numpy(), fp8.round_to(x * np.float32(0.5), "e4m3"))
    np.testing.assert_array_equal(r.numpy(), fp8.round_to(x * np.float32(0.5), "e5m2"))


@pytest.mark.parametrize("name", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_conversions_out_of_fp8_are_exact(name):
    from conftest import client_or_none
    client = client_or_none(name)
    if client is None:
        pytest.skip(f"no {name} device")
    values = fp8.round_to(np.linspace(-300, 300, 64).astype(np.float32), "e4m3")
    q = client.zeros(64, e4m3).copy_(values)
    outs = [client.zeros(64, t) for t in (f16, i32, f64, f32, f32)]
    widen.launch(client, CubeCount(1), CubeDim(64), q, -7.4, *outs)
    as_f16, as_i32, as_f64, picked, from_shared = (o.numpy() for o in outs)
    np.testing.assert_array_equal(as_f16, values.astype(np.float16))
    np.testing.assert_array_equal(as_i32, np.trunc(values).astype(np.int32))
    np.testing.assert_array_equal(as_f64, values.astype(np.float64))
    s = fp8.round_to(-7.4, "e4m3")  # the scalar travels as f32, rounded on entry: -7.5
    assert s == -7.5
    np.testing.assert_array_equal(picked, np.where(np.arange(64) % 2 == 0, values, s))
    np.testing.assert_array_equal(from_shared, values[::-1])


def test_narrowing_from_f64_other_fp8_and_integers_on_cpu():
    client = cubepy.client("cpu")
    x = np.array([1.0 + 2.0 ** -30, 0.3, -1e6, 96.0, 0.0, 5.0], np.float64)
    n = np.array([0, 0, 0, 0, 300, 1000], np.int32)
    wide, q = client.zeros(6, e5m2), client.zeros(6, e4m3)
    narrow.launch(client, CubeCount(1), CubeDim(64), client.tensor(x), client.tensor(n),
                  wide, q)
    expect_wide = fp8.round_to(x, "e5m2")
    np.testing.assert_array_equal(wide.numpy(), expect_wide)
    expect_q = np.where(n != 0, fp8.round_to(n.astype(np.float32), "e4m3"),
                        fp8.round_to(expect_wide, "e4m3"))
    np.testing.assert_array_equal(q.numpy(), expect_q)
    assert q.numpy()[5] == 448.0 and q.numpy()[4] == 288.0


def test_a_literal_of_fp8_type_is_rounded_like_a_cast():
    client = cubepy.client("cpu")
    q = client.zeros(3, e4m3)
    literal_store.launch(client, CubeCount(1), CubeDim(3), q)
    np.testing.assert_array_equal(q.numpy(), [1.25, 1.25, 1.25])
    # (CUDA rounds the literal as it rounds a cast: with cuda_fp8.h's constructor)
    assert "__nv_fp8_e4m3(1.3f)" in literal_store.source("cuda", cube_dim=(3, 1, 1))


def test_a_checked_read_past_the_end_is_zero():
    client = cubepy.client("cpu")
    q = client.zeros(4, e4m3).copy_([1.0, 2.0, 3.0, 4.0])
    outs = [client.zeros(8, t) for t in (f16, i32, f64, f32, f32)]
    widen.launch(client, CubeCount(1), CubeDim(64), q, 1.0, *outs)
    np.testing.assert_array_equal(outs[3].numpy()[:4], [1.0, 1.0, 3.0, 1.0])
    np.testing.assert_array_equal(outs[4].numpy(), np.zeros(8))  # q[60..63]: past the end


def test_an_fp8_scalar_is_converted_on_entry_as_a_cast_converts():
    client = cubepy.client("cpu")
    q = client.zeros(4, e4m3).copy_([1.0, 1.0, 1.0, 1.0])
    outs = [client.zeros(4, t) for t in (f16, i32, f64, f32, f32)]
    for s, seen in [(500.0, 448.0), (-1e30, -448.0), (0.3, 0.3125)]:  # saturated, rounded
        widen.launch(client, CubeCount(1), CubeDim(64), q, s, *outs)
        assert outs[3].numpy()[1] == seen
    with pytest.raises(LaunchError, match="parameter 's'.*does not fit in e4m3"):
        widen.launch(client, CubeCount(1), CubeDim(64), q, 1e39, *outs)  # not even an f32


# ------------------------------------------------------------------ host side

def test_host_values_are_f32_and_numpy_gets_a_copy():
    client = cubepy.client("cpu")
    t = client.zeros((2, 3), e5m2).copy_(np.full((2, 3), 0.3, np.float32))
    assert t.numpy().dtype == np.float32 and t.numpy()[1, 2] == 0.3125
    assert np.asarray(t).dtype == np.float32 and np.asarray(t)[0, 0] == 0.3125
    with pytest.raises(ValueError, match="numpy has no 8-bit float"):
        t.__array__(copy=False)
    assert t.dtype is e5m2 and t.strides == (3, 1)


def test_torch_float8_tensors_are_used_in_place_on_cpu():
    torch = pytest.importorskip("torch")
    client = cubepy.client("cpu")
    x = VALUES[np.abs(VALUES) < 400]  # where torch's own cast agrees (it does not saturate)
    q = torch.zeros(len(x), dtype=torch.float8_e4m3fn)
    r = torch.zeros(len(x), dtype=torch.float8_e5m2)
    quantize.launch(client, CubeCount(1), CubeDim(64), client.tensor(x), 1.0, q, r)
    expect = torch.from_numpy(x)
    assert torch.equal(q.view(torch.uint8), expect.to(torch.float8_e4m3fn).view(torch.uint8))
    assert torch.equal(r.view(torch.uint8), expect.to(torch.float8_e5m2).view(torch.uint8))


def test_a_cpu_fp8_tensor_exports_through_dlpack_to_torch():
    torch = pytest.importorskip("torch")
    client = cubepy.client("cpu")
    t = client.zeros(5, e4m3).copy_([0.5, -2.0, 448.0, 0.0, 3.0])
    shared = torch.from_dlpack(t)
    assert shared.dtype == torch.float8_e4m3fn
    assert shared.float().tolist() == [0.5, -2.0, 448.0, 0.0, 3.0]
    shared[0] = 6.0  # the same memory
    assert t.numpy()[0] == 6.0


# ------------------------------------------------------------------ what is refused

@cube(launch=True)
def adds(q: Array[e4m3], out: Array[f32]):
    out[ABSOLUTE_POS] = f32(q[0] + q[1])  # E:add


@cube(launch=True)
def compares(q: Array[e4m3], out: Array[f32]):
    if q[0] < q[1]:  # E:compare
        out[0] = 1.0


@cube(launch=True)
def exp_of(q: Array[e4m3], out: Array[f32]):
    out[0] = f32(cubepy.math.exp(q[0]))  # E:math


@cube(launch=True)
def atomic_on(q: Array[e4m3]):
    cubepy.atomic_exchange(q, 0, q[1])  # E:atomic


@cube(launch=True)
def lines_of(q: Array[Line[e4m3]], out: Array[Line[e4m3]]):
    out[ABSOLUTE_POS] = q[ABSOLUTE_POS]  # a line moved whole


@cube(launch=True)
def line_widened(q: Array[Line[e4m3]], out: Array[Line[f32]]):
    out[ABSOLUTE_POS] = f32(q[ABSOLUTE_POS])  # E:line


def test_arithmetic_on_fp8_is_an_error_at_the_use():
    with pytest.raises(CompileError) as e:
        adds.source("cuda")
    error_at(e.value, "add", "e4m3 is an 8-bit storage type", "arithmetic", "f32(x)")


@pytest.mark.parametrize("kernel, tag, what", [(compares, "compare", "a comparison"),
                                               (exp_of, "math", "a math function")])
def test_comparisons_and_math_on_fp8_are_errors(kernel, tag, what):
    with pytest.raises(CompileError) as e:
        kernel.source("cuda")
    error_at(e.value, tag, "8-bit storage type", what)


def test_atomics_on_fp8_are_an_error():
    with pytest.raises(CompileError) as e:
        atomic_on.source("cuda")
    error_at(e.value, "atomic", "atomic_exchange() needs", "'q' holds e4m3")


def test_lines_of_fp8_move_whole_and_convert_element_by_element():
    client = cubepy.client("cpu")
    values = fp8.round_to(np.linspace(-9, 9, 8).astype(np.float32), "e4m3")
    q = client.tensor(values, e4m3).with_line_size(4)
    out = client.zeros(8, e4m3).with_line_size(4)
    lines_of.launch(client, CubeCount(1), CubeDim(2), q, out)
    np.testing.assert_array_equal(out.numpy(), values)
    with pytest.raises(CompileError) as e:
        line_widened.source("cuda", line_sizes={"q": 4, "out": 4})
    error_at(e.value, "line", "a Line of e4m3 converts element by element")


@pytest.mark.parametrize("target, title", [("wgsl", "WGSL"), ("metal", "Metal")])
def test_wgsl_and_metal_have_no_fp8(target, title):
    with pytest.raises(CompileError) as e:
        quantize.source(target, cube_dim=(64, 1, 1))
    assert f"{title} has no e4m3: variable 'v' is e4m3; use f16 or f32" in e.value.msg
    assert "v = e4m3(x[i] * scale)" in str(e.value)  # the line of its first use


# ------------------------------------------------------------------ CUDA C

def test_cuda_source_uses_cuda_fp8_types_and_converts_through_float():
    src = widen.source("cuda", cube_dim=(64, 1, 1))
    assert "#include <cuda_fp8.h>" in src
    assert "__nv_fp8_e4m3* __restrict__ q" in src and "__shared__ __nv_fp8_e4m3" in src
    assert "float s;" in src and "__nv_fp8_e4m3 s = __nv_fp8_e4m3(info.s);" in src
    assert "__float2half_rn(float(" in src and "__float2int_rz(float(" in src
    src = narrow.source("cuda", cube_dim=(64, 1, 1))
    assert "__nv_fp8_e5m2((" in src  # from the double itself
    assert "__nv_fp8_e4m3(float(" in src  # e5m2 -> e4m3 through float
    assert "__nv_fp8_e4m3((float)" in src  # an integer through float


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_fp8_kernels_compile_with_nvcc(tmp_path, arch):
    lines = {"line_sizes": {"q": 16, "out": 16}}
    for name, kernel, spec in [("quantize", quantize, {}), ("widen", widen, {}),
                               ("narrow", narrow, {}), ("literal_store", literal_store, {}),
                               ("lines_of", lines_of, lines)]:
        path = tmp_path / f"{name}.cu"
        path.write_text(kernel.source("cuda", cube_dim=(64, 1, 1), **spec))
        done = subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "-o", f"{path}.cubin",
                               str(path)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr.lower(), done.stderr


def test_bf16_is_not_an_fp8_and_both_fp8_are_exported():
    assert cubepy.e4m3 is e4m3 and cubepy.e5m2 is e5m2
    assert e4m3.itemsize == 1 and e4m3.is_float and bf16.bits == 16


# ------------------------------------------------------------------ fusion

def test_fused_fp8_operations_compute_in_f32_and_round_each_result(tmp_path):
    """As numpy does for float16: each operation's result has the operands' type."""
    import cubepy.fusion as fz
    from cubepy.fusion import runner
    client = cubepy.client("cpu")
    values = fp8.round_to(np.linspace(-6, 6, 40).astype(np.float32), "e4m3")
    a = fz.asarray(client.zeros(40, e4m3).copy_(values))
    square = a * a + 1.0  # e4m3 operands: f32 arithmetic, each result rounded to e4m3
    total = fz.sum(a)  # accumulated in f32, rounded once
    assert square.dtype is e4m3
    expect = fp8.round_to(fp8.round_to(values * values, "e4m3") + np.float32(1), "e4m3")
    np.testing.assert_array_equal(square.numpy(), expect)
    assert float(total.numpy()) == float(fp8.round_to(values.sum(dtype=np.float32), "e4m3"))
    import source_check
    if source_check.NVCC is None:
        return
    for built in runner.build_all([square.node, total.node], {}, True):
        src = runner.source_of(built.kernel, "cuda")
        assert "float(" in src  # the fp8 operands widened, never added as fp8
        source_check.check_cuda(src, tmp_path, name=built.name)


def test_client_tensor_converts_to_the_dtype_asked_for(runtime_client):
    x = np.array([[0.3, -1000.0], [2.0, 1e-4]], np.float64)
    t = runtime_client.tensor(x, "f32")
    assert t.dtype is f32 and t.shape == (2, 2)
    np.testing.assert_array_equal(t.numpy(), x.astype(np.float32))
    if e4m3 in runtime_client.limits.dtypes:
        q = runtime_client.tensor(x, e4m3)
        assert q.dtype is e4m3
        np.testing.assert_array_equal(q.numpy(), fp8.round_to(x, "e4m3"))
    else:
        with pytest.raises(LaunchError, match="does not support e4m3"):
            runtime_client.tensor(x, e4m3)


def test_the_row_quantize_example(runtime_client):
    from examples_loader import load_example
    example = load_example("fp8_quantize")
    if e4m3 not in runtime_client.limits.dtypes:
        pytest.skip(f"{runtime_client.runtime} has no 8-bit float")
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((37, 300)) * rng.uniform(0.1, 50, (37, 1))).astype(np.float32)
    x[5] = 0.0  # a row of zeros keeps the factor 1
    q, factors = example.quantize(runtime_client, x)
    assert factors[5] == 1.0 and np.isclose(factors[0], 448.0 / np.abs(x[0]).max(), rtol=1e-6)
    assert example.check(x, q.numpy(), factors) <= 2.0 ** -4
