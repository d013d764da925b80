"""Line types in the IR: the frontend's line IR and scalarize_lines' output, line size 1
giving the scalar kernel, source()/ir()/CLI line sizes, hoisted line indices, line
indices of local and shared arrays, and random expression kernels on lines against the
scalar kernel (tests/fuzz_kernels.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, UNIT_POS, Array, CompileError, CubeCount, CubeDim, Float,
                    Line, LocalArray, SharedMemory, Tensor, cube, f32, sync_cube, u32, unroll)
from cubepy.frontend import build_kernel
from cubepy.ir.parser import parse_kernel
from cubepy.ir.printer import print_kernel
from cubepy.ir.types import LineType, type_from_name
from cubepy.ir.visit import walk_all_exprs

import corpus

# ----------------------------------------------------------------------------- IR

def _frontend_ir(kernel, line_sizes, **generics):
    spec = kernel._specialization((16, 1, 1), generics, line_sizes)
    return build_kernel(kernel._parse(), spec)


def test_frontend_types_lines_and_the_pass_removes_them():
    k = _frontend_ir(corpus.line_mix, {"x": 4, "y": 4, "out": 4})
    text = print_kernel(k)
    assert "@x: tensor<f32, 4>" in text and "let %v: f32x4" in text
    assert any(isinstance(e.ty, LineType) for e in walk_all_exprs(k.body))
    assert print_kernel(parse_kernel(text)) == text
    after = corpus.line_mix.ir(cube_dim=(16, 1, 1), line_sizes={"x": 4, "y": 4, "out": 4})
    assert "x4" not in after and "tensor<f32, 4>" not in after
    for part in ("%v_0: f32", "%v_3: f32", "%acc_3: f32", "floordiv(buffer_len(@x), 4:u32)"):
        assert part in after, part
    assert "%v_4" not in after


@cube(launch=True)
def scalar_axpy(a: Float, x: Tensor[Float], y: Tensor[Float]):
    i = ABSOLUTE_POS
    if i < y.len():
        y[i] = a * x[i] + y[i]


def test_line_size_one_is_exactly_the_scalar_kernel():
    def body(text):
        return [ln.split("  #")[0] for ln in text.splitlines()[1:]]
    scalar = scalar_axpy.ir(cube_dim=(64, 1, 1), Float=f32)
    lined = corpus.line_axpy.ir(cube_dim=(64, 1, 1), Float=f32, line_sizes={"x": 1, "y": 1})
    assert body(lined) == body(scalar) and len(body(scalar)) > 3
    assert lined.splitlines()[0].split("#")[0].replace("line_axpy", "scalar_axpy") == \
        scalar.splitlines()[0].split("#")[0]
    assert corpus.line_axpy.source("cuda", Float=f32) == \
        corpus.line_axpy.source("cuda", Float=f32, line_sizes={"x": 1})


def test_seed_kernel_unaffected():
    from cubepy.ir.passes import scalarize_lines
    k = _frontend_ir(corpus.fused_matmul_add_relu_kernel, {}, Float=f32)
    assert not any(isinstance(e.ty, LineType) for e in walk_all_exprs(k.body))
    assert scalarize_lines(k) is k  # nothing to do: the very same kernel
    lined = _frontend_ir(corpus.line_axpy, {"x": 2, "y": 2}, Float=f32)
    assert scalarize_lines(lined) is not lined


def test_line_type_names():
    t = LineType(f32, 4)
    assert t is LineType(f32, 4) and t.name == "f32x4" and t.is_float and not t.is_int
    assert type_from_name("bf16x2") is LineType(cubepy.bf16, 2)
    assert type_from_name("u32") is u32
    with pytest.raises(KeyError):
        type_from_name("f32x1")


@pytest.mark.parametrize("target", ["cuda", "wgsl", "metal"])
def test_source_with_line_sizes(target):
    src = corpus.line_axpy.source(target, cube_dim=(64, 1, 1), Float=f32,
                                  line_sizes={"x": 4, "y": 4})
    one = corpus.line_axpy.source(target, cube_dim=(64, 1, 1), Float=f32)
    assert src != one
    assert src.count("4u") >= 4 or src.count("* 4") >= 4  # element index i * 4 + k


def test_cli_line_size(capsys):
    from cubepy.cli import main
    path = corpus.__file__
    assert main(["ir", f"{path}:line_axpy", "-D", "Float=f32", "--line-size", "x=4",
                 "--line-size", "y=4"]) == 0
    out = capsys.readouterr().out
    # the line index is computed once per statement, clamped, and shared by x and y;
    # the aligned lines are read and stored whole
    assert out.count("min(%i, 1073741823:u32)") == 1 and "load_line @x[%y_line]" in out
    assert "store_line @y[%y_line] = (" in out
    assert main(["ir", f"{path}:line_axpy", "-D", "Float=f32", "--line-size", "x=4",
                 "--line-size", "y=4", "--unchecked"]) == 0
    out = capsys.readouterr().out
    assert " unchecked {" in out and "min(" not in out and "load_line @x[%i]" in out
    assert main(["ir", f"{path}:line_axpy", "-D", "Float=f32", "--line-size", "x=3"]) == 2
    assert "line size" in capsys.readouterr().err


@cube(launch=True)
def guarded_indirect(idx: Array[u32], x: Array[Line[f32]], out: Array[Line[f32]], n: u32):
    i = ABSOLUTE_POS
    if i < n and idx[i] < u32(4):
        out[i] = x[idx[i]]
    j = u32(0)
    while j < n and x[j % u32(4)][0] > -100.0:
        j += u32(1)
    out[u32(5)] = out[u32(5)] * 0.0 + f32(j)


def test_line_indices_that_read_memory_are_not_hoisted():
    text = guarded_indirect.ir(line_sizes={"x": 2, "out": 2})
    assert "@x[mul(min(@idx[%i], 2147483647:u32), 2:u32)]" in text  # not hoisted
    assert "while and(" in text and "%x_line" not in text.split("while")[1].split("{")[0]
    c = cubepy.client("cpu")
    x = c.tensor(np.arange(8, dtype=np.float32)).with_line_size(2)
    out = c.zeros((12,), f32).with_line_size(2)
    idx = c.tensor(np.array([3, 0, 9, 1], np.uint32))
    guarded_indirect.launch(c, CubeCount(1), CubeDim(4), idx, x, out, 4)
    np.testing.assert_array_equal(out.numpy(), [6, 7, 0, 1, 0, 0, 2, 3, 0, 0, 4, 4])


@cube(launch=True)
def unrolled_line_sums(x: Tensor[Line[f32]], y: Tensor[Line[f32]]):
    acc = LocalArray(Line[f32], 4, 4)
    for i in unroll(range(2)):
        acc[2 * i] += x[UNIT_POS + i]
    y[UNIT_POS] = acc[0] + acc[2]


def test_a_constant_line_index_of_a_local_array_stays_constant():
    """`acc[2 * i] += v` in an unrolled loop: every store's index folds to a constant (it
    once went through a temporary, and the clamp on that variable kept the array's
    indices from folding: `cube_min_i32` calls in CUDA)."""
    sizes = {"x": 4, "y": 4}
    text = unrolled_line_sums.ir(cube_dim=(8, 1, 1), line_sizes=sizes)
    stores = [ln.split("=")[0].strip() for ln in text.splitlines()
              if ln.strip().startswith("@acc[")]
    assert [re.fullmatch(r"@acc\[(\d+):[iu]32\]", x)[1] for x in stores] == \
        ["0", "1", "2", "3", "8", "9", "10", "11"], stores
    assert "%line_index" not in text
    for checked in (True, False):
        cuda = unrolled_line_sums.source("cuda", cube_dim=(8, 1, 1), line_sizes=sizes,
                                         checked=checked)
        assert "cube_min_i32" not in cuda and re.search(r"\bacc\[8u?\] = ", cuda)
    c = cubepy.client("cpu")
    x = c.tensor(np.arange(36, dtype=np.float32)).with_line_size(4)
    y = c.zeros((32,), f32).with_line_size(4)
    unrolled_line_sums.launch(c, CubeCount(1), CubeDim(8), x, y)
    want = np.arange(36, dtype=np.float32).reshape(9, 4)
    np.testing.assert_array_equal(y.numpy().reshape(8, 4), want[:8] + want[1:])


@cube(launch=True)
def self_indexed_line_stores(out: Tensor[Line[u32]]):
    a = LocalArray(Line[u32], 4, 4)
    s = SharedMemory(Line[u32], 4, 4)
    for k in unroll(range(4)):
        a[k] = Line(u32(0), u32(0), u32(0), u32(0))
        s[k] = a[k]
    a[1] = Line(u32(1), u32(1), u32(1), u32(1))
    s[1] = a[1]
    a[a[1][0]] = Line(u32(3), u32(3), u32(3), u32(3))  # its own first store changes a[1][0]
    s[s[1][0]] = Line(u32(3), u32(3), u32(3), u32(3))
    for k in unroll(range(4)):
        out[k] = a[k]
        out[4 + k] = s[k]


def test_a_line_index_that_reads_the_array_is_read_once():
    c = cubepy.client("cpu")
    out = c.zeros((32,), u32).with_line_size(4)
    self_indexed_line_stores.launch(c, CubeCount(1), CubeDim(1), out)
    want = [[0] * 4, [3] * 4, [0] * 4, [0] * 4]
    np.testing.assert_array_equal(out.numpy().reshape(8, 4), want + want)


@cube(launch=True)
def shared_line_reads(x: Tensor[Line[f32]], y: Tensor[Line[f32]]):
    s = SharedMemory(Line[f32], 16, 4)
    s[UNIT_POS] = x[UNIT_POS]
    sync_cube()
    y[UNIT_POS] = s[(UNIT_POS + 1) % 16] + s[(UNIT_POS + 2) % 16]


def test_shared_line_indices_are_clamped_in_checked_launches_only():
    """The clamp keeps a huge line index from wrapping into the array, which a checked
    launch would then not drop; an unchecked launch has no such index to care for."""
    sizes = {"x": 4, "y": 4}
    checked = shared_line_reads.source("cuda", cube_dim=(16, 1, 1), line_sizes=sizes)
    unchecked = shared_line_reads.source("cuda", cube_dim=(16, 1, 1), line_sizes=sizes,
                                         checked=False)
    assert "536870911u" in checked and "536870911u" not in unchecked
    c = cubepy.client("cpu")
    x = c.tensor(np.arange(64, dtype=np.float32)).with_line_size(4)
    y = c.zeros((64,), f32).with_line_size(4)
    shared_line_reads.launch_unchecked(c, CubeCount(1), CubeDim(16), x, y)
    lines = np.arange(64, dtype=np.float32).reshape(16, 4)
    np.testing.assert_array_equal(y.numpy().reshape(16, 4),
                                  np.roll(lines, -1, 0) + np.roll(lines, -2, 0))


@cube(launch=True)
def neighbour_lines(x: Array[Line[f32]], y: Array[Line[f32]], n: u32):
    i = ABSOLUTE_POS
    if i + u32(1) < n:
        y[i] = x[i] + x[i + u32(1)]


def test_global_line_indices_are_clamped_in_checked_launches_only():
    """An unchecked launch promises indices in range, so its line indices stay as written
    (the clamp would cost a `min` per access and keep addresses from folding)."""
    sizes = {"x": 4, "y": 4}
    checked = neighbour_lines.ir(line_sizes=sizes)
    unchecked = neighbour_lines.ir(line_sizes=sizes, checked=False)
    assert checked.count("1073741823:u32") == 2  # x[i] (shared with y[i]) and x[i + 1]
    assert "1073741823" not in unchecked and " unchecked {" in unchecked
    assert "load_line @x[%i]" in unchecked and "store_line @y[%i]" in unchecked
    assert parse_kernel(unchecked).checked is False and parse_kernel(checked).checked
    assert print_kernel(parse_kernel(unchecked)) == unchecked
    cuda = neighbour_lines.source("cuda", cube_dim=(16, 1, 1), line_sizes=sizes,
                                  checked=False)
    assert "min(" not in cuda and "float4*>(&x[i * 4u])" in cuda


def test_unclamped_line_indices_read_and_store_the_same_lines(runtime_client):
    lines = np.arange(64, dtype=np.float32).reshape(16, 4)
    want = np.zeros_like(lines)
    want[:15] = lines[:15] + lines[1:]
    c = runtime_client
    for launch in (neighbour_lines.launch, neighbour_lines.launch_unchecked):
        x = c.tensor(lines.ravel()).with_line_size(4)
        y = c.zeros((64,), f32).with_line_size(4)
        launch(c, CubeCount(1), CubeDim(16), x, y, 16)
        np.testing.assert_array_equal(y.numpy().reshape(16, 4), want)


# ----------------------------------------------------------------------------- fuzz

def _line_kernel_source(root) -> str:
    """The random expression kernel of tests/fuzz_kernels.py with Line buffers."""
    import fuzz_kernels as fk
    text = fk.expr_kernel_source(root)
    for ty in ("i32", "u32", "f32"):
        text = text.replace(f": Array[{ty}]", f": Array[cubepy.Line[{ty}]]")
    return text


def _line_fuzz_cases():
    from hypothesis import strategies as st
    import fuzz_kernels as fk
    ctx = fk.Ctx({"i32": ["a0", "a1"], "u32": ["b0", "b1"], "f32": ["c0", "c1"]})

    @st.composite
    def cases(draw):
        ty = draw(st.sampled_from(fk.NUM_TYPES))
        root = draw(fk.root_exprs(ty, ctx, draw(st.integers(2, 5))))
        return root, draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from((2, 4)))
    return cases()


def test_random_elementwise_expressions_on_lines_match_scalars():
    """Random typed expressions (tests/fuzz_kernels.py) on lines give, element for
    element and bit for bit, what the scalar kernel gives (cpu runtime), checked and
    unchecked; expressions that use a comparison as a condition do not take lines and
    are left out."""
    from hypothesis import HealthCheck, given, settings
    import fuzz_kernels as fk
    c = cubepy.client("cpu")
    ran = []

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=_line_fuzz_cases())
    def check(case):
        root, seed, n = case
        lined = fk.load_kernel(_line_kernel_source(root))
        try:
            lined.ir(line_sizes={p.name: n for p in lined.params if p.kind != "scalar"})
        except CompileError as e:
            assert "bool" in str(e) or "not supported" in str(e), str(e)
            return
        scalar = fk.load_kernel(fk.expr_kernel_source(root))
        rng = np.random.default_rng(seed)
        names = fk.input_names(root)
        data = [np.array(fk.random_inputs(rng, t, 64), dtype=getattr(np, {
            "i32": "int32", "u32": "uint32", "f32": "float32"}[t])) for _, t in names]
        out_ty = getattr(cubepy, root.ty)
        want = c.zeros(64, out_ty)
        scalar.launch(c, CubeCount(1), CubeDim(64), *[c.tensor(d) for d in data], want)
        got = c.zeros(64, out_ty).with_line_size(n)
        lined.launch(c, CubeCount(1), CubeDim(64 // n),
                     *[c.tensor(d).with_line_size(n) for d in data], got)
        np.testing.assert_array_equal(got.numpy(), want.numpy(),
                                      err_msg=_line_kernel_source(root))
        # unchecked, the line indices are not clamped: the same elements, bit for bit
        lined.launch_unchecked(c, CubeCount(1), CubeDim(64 // n),
                               *[c.tensor(d).with_line_size(n) for d in data], got)
        np.testing.assert_array_equal(got.numpy(), want.numpy(),
                                      err_msg=_line_kernel_source(root))
        ran.append(n)

    check()
    assert len(ran) >= 20  # most random expressions take lines
