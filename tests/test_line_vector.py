"""Whole-line accesses: a line read or store of a parameter aligned to its line is one
LoadLine / StoreLine in the IR, one vector load or store on CUDA (float4, uint4 for 8
halves, double2, ...), Metal (float4, half4) and WGSL (vec4<f32>, tests/test_wgsl_lines.py),
and the element accesses again on the cpu runtime. A buffer whose address is not a multiple of its line's bytes (a view
from an odd offset) gets its own, element-by-element specialisation."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CubeCount, CubeDim, Float, Line, Tensor, atomic_add,
                    cube, f16, f32, select, u32)
from cubepy.abi import line_access_bytes
from cubepy.ir import nodes as ir
from cubepy.ir.parser import parse_kernel
from cubepy.ir.types import bf16, f64, i32, u64
from cubepy.ir.verify import IRVerifyError, verify
from cubepy.spec import Specialization

from conftest import RUNTIME_PARAMS
from source_check import validate_sources

SLICING_RUNTIMES = [p for p in RUNTIME_PARAMS if p.id != "wgpu"]  # wgpu has no views


@cube(launch=True)
def line_copy(x: Tensor[Line[Float]], y: Tensor[Line[Float]]):
    """No guard: in a checked launch the units past the end make the tail."""
    i = ABSOLUTE_POS
    y[i] = x[i]


@cube(launch=True)
def line_scale(a: Float, x: Tensor[Line[Float]], y: Tensor[Line[Float]]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = a * x[i] + y[i]


def _spec_source(kernel, target: str, checked: bool, misaligned=(), **spec) -> str:
    """The source of a specialisation, with `misaligned` line buffers."""
    base = kernel._specialization(CubeDim(64), spec)
    return kernel._compile(dataclasses.replace(base, misaligned=tuple(misaligned)), target,
                           checked).source


def _lines(dtype, n: int) -> dict:
    return {"Float": dtype, "line_sizes": {"x": n, "y": n}}


# ----------------------------------------------------------------------------- CUDA source

@pytest.mark.parametrize("dtype,n,access,count", [
    (f32, 4, "float4", 1), (f32, 2, "float2", 1), (f32, 8, "float4", 2),
    (f16, 8, "uint4", 1), (f16, 4, "uint2", 1), (f16, 2, "unsigned int", 1),
    (bf16, 8, "uint4", 1), (f64, 2, "double2", 1), (f64, 4, "double2", 2),
], ids=lambda v: getattr(v, "name", str(v)))
def test_cuda_line_copy_is_vector_accesses(dtype, n, access, count):
    src = line_copy.source("cuda", cube_dim=(64, 1, 1), checked=False, **_lines(dtype, n))
    assert src.count(f"*reinterpret_cast<const {access}*>(&x[") == count
    assert src.count(f"*reinterpret_cast<{access}*>(&y[") == count
    assert "} else {" not in src  # unchecked: no element path
    assert f"x[i * {n}u + 1u]" not in src and f"x[y_line * {n}u + 1u]" not in src


def test_cuda_f16x8_unpacks_halves_from_words_in_order():
    src = line_copy.source("cuda", cube_dim=(64, 1, 1), checked=False, **_lines(f16, 8))
    assert "x_0 = cube_f16_lo(cube_line1.x);" in src
    assert "x_3 = cube_f16_hi(cube_line1.y);" in src
    assert "make_uint4(cube_f16_pair(x_0, x_1), cube_f16_pair(x_2, x_3)," in src


def test_cuda_checked_line_keeps_a_vector_path_and_a_tail_path():
    src = line_copy.source("cuda", cube_dim=(64, 1, 1), checked=True, **_lines(f16, 8))
    assert "if (y_line * 8u + 7u < info.x_buffer_len) {" in src  # the whole line in range
    assert src.count("*reinterpret_cast<const uint4*>(&x[y_line * 8u])") == 1
    assert "x_7 = (y_line * 8u + 7u < info.x_buffer_len ? x[y_line * 8u + 7u] : " in src
    assert "if (y_line * 8u + 7u < info.y_buffer_len) y[y_line * 8u + 7u] = x_7;" in src
    assert src.count("} else {") == 2


def test_cuda_checked_store_computes_each_value_once():
    src = line_scale.source("cuda", cube_dim=(64, 1, 1), checked=True, **_lines(f32, 4))
    assert "const float cube_value" in src and src.count("a * x_0 + y_0") == 1
    assert "make_float4(cube_value" in src


def test_misaligned_buffer_is_accessed_element_by_element():
    src = _spec_source(line_copy, "cuda", False, ("x",), **_lines(f32, 4))
    assert "float4*>(&x[" not in src and "x[i * 4u + 3u]" in src
    assert src.count("*reinterpret_cast<float4*>(&y[") == 1  # y stays aligned


@pytest.mark.nvcc
@pytest.mark.parametrize("dtype,n", [(f32, 4), (f32, 8), (f16, 8), (f16, 2), (f64, 2),
                                     (bf16, 8), (i32, 4), (u64, 4)],
                         ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_vector_line_sources_compile(tmp_path, dtype, n, checked):
    targets = ["cuda"] + (["metal"] if dtype is not f64 else [])
    spec = {"line_sizes": {"x": n, "y": n}}
    if dtype in (f32, f16, f64, bf16):  # no bf16 scalar parameter: bf16 copies
        validate_sources(line_copy if dtype is bf16 else line_scale, tmp_path,
                         checked=checked, targets=targets, Float=dtype, **spec)
    else:
        validate_sources(int_line_copy, tmp_path, checked=checked, targets=targets,
                         Numeric=dtype, **spec)


@cube(launch=True)
def int_line_copy(x: Tensor[Line[cubepy.Numeric]], y: Tensor[Line[cubepy.Numeric]]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = x[i] + y[i]


def test_portable_line_sources_compile(tmp_path):
    validate_sources(line_scale, tmp_path, Float=f32, line_sizes={"x": 4, "y": 4})


# ----------------------------------------------------------------------------- Metal

def test_metal_lines_are_vectors_of_four_at_most():
    src = line_copy.source("metal", cube_dim=(64, 1, 1), checked=False, **_lines(f16, 8))
    assert src.count("*(const device half4*)(&x[") == 2
    assert src.count("*(device half4*)(&y[") == 2 and "half4(x_4, x_5, x_6, x_7)" in src
    src = line_copy.source("metal", cube_dim=(64, 1, 1), checked=False, **_lines(f32, 4))
    assert src.count("*(const device float4*)(&x[") == 1
    src = line_copy.source("metal", cube_dim=(64, 1, 1), checked=False, **_lines(bf16, 4))
    assert "bfloat4" not in src and "x[i * 4u + 3u]" in src  # element by element


# ----------------------------------------------------------------------------- IR and passes

def test_ir_reads_into_the_parts_and_stores_the_line():
    text = line_scale.ir(cube_dim=(64, 1, 1), **_lines(f32, 4))
    assert "%x_0, %x_1, %x_2, %x_3 = load_line @x[%y_line]" in text
    assert "store_line @y[%y_line] = (add(mul(%a, %x_0), %y_0)," in text
    k = parse_kernel(text)
    verify(k)


@pytest.mark.parametrize("target,whole", [("cuda", True), ("metal", True), ("wgsl", True),
                                          ("cpu", False)])
def test_targets_without_vector_accesses_get_element_accesses(target, whole):
    text = line_scale.ir(cube_dim=(64, 1, 1), target=target, **_lines(f32, 4))
    assert ("load_line" in text) is whole and ("store_line" in text) is whole
    if not whole:
        assert "@x[add(mul(%y_line, 4:u32), 3:u32)]" in text


@cube(launch=True)
def guarded_reads(x: Array[Line[f32]], y: Array[Line[f32]], out: Array[Line[f32]], n: u32):
    i = ABSOLUTE_POS
    out[i] = select(i < n, x[i], y[i])  # the branches' reads are not surely made
    first = x[i][0]  # one element
    while first < 0.0 and x[i][1] > 2.0:  # a loop condition runs again each time
        first += 1.0
    out[i] += first


def test_reads_that_may_not_happen_stay_element_reads():
    text = guarded_reads.ir(cube_dim=(64, 1, 1), line_sizes={"x": 4, "y": 4, "out": 4})
    assert "load_line @x" not in text and "load_line @y" not in text
    assert "load_line @out" in text and "store_line @out" in text


@cube(launch=True)
def counted_lines(x: Array[Line[u32]], hits: Array[Line[u32]]):
    i = ABSOLUTE_POS
    v = x[i]
    atomic_add(hits, 0, v)
    hits[i + 1] = v


def test_buffers_used_by_atomics_are_not_accessed_whole():
    text = counted_lines.ir(cube_dim=(64, 1, 1), line_sizes={"x": 4, "hits": 4})
    assert "load_line @x" in text and "store_line @hits" not in text


def test_lowering_gives_the_same_element_accesses_as_a_misaligned_buffer():
    from cubepy.ir.passes import run_pipeline
    from cubepy.ir.passes.line_access import lower_line_access
    from cubepy.ir.printer import print_kernel
    k = parse_kernel(line_copy.ir(cube_dim=(64, 1, 1), **_lines(f32, 4)))
    lowered = print_kernel(lower_line_access(k))
    assert "load_line" not in lowered and lowered.count("@x[") == 4
    assert lower_line_access(lower_line_access(k)) == lower_line_access(k)


def test_verifier_checks_whole_line_accesses():
    x = ir.Param("x", "tensor", f32)
    wide = ir.Param("w", "tensor", f32, line_size=4)
    a, b, c = ir.Var("a", f32), ir.Var("b", f32), ir.Var("c", u32)
    zero = ir.Const(ty=u32, value=0)
    decls = tuple(ir.Declare(var=v) for v in (a, b, c))

    def kernel(*stmts):
        return ir.Kernel("k", (x, wide), (), ir.Block(decls + stmts), (1, 1, 1))
    verify(kernel(ir.LoadLine(buffer=x.buffer, line=zero, parts=(a, b))))
    with pytest.raises(IRVerifyError, match="2, 4 or 8"):
        verify(kernel(ir.LoadLine(buffer=x.buffer, line=zero, parts=(a, b, a))))
    with pytest.raises(IRVerifyError, match="expected f32"):
        verify(kernel(ir.LoadLine(buffer=x.buffer, line=zero, parts=(a, c))))
    with pytest.raises(IRVerifyError, match="buffer of scalars"):
        verify(kernel(ir.StoreLine(buffer=wide.buffer, line=zero,
                                   values=(ir.Load(ty=f32, var=a),) * 2)))


def test_misaligned_parameter_round_trips_in_the_ir_text():
    k = ir.Kernel("k", (ir.Param("x", "tensor", f32, line_size=4, aligned=False),), (),
                  ir.Block(), (1, 1, 1))
    from cubepy.ir.printer import print_kernel
    text = print_kernel(k)
    assert "@x: tensor<f32, 4, misaligned>" in text and parse_kernel(text) == k


# ----------------------------------------------------------------------------- the host side

def test_misalignment_is_part_of_the_specialisation():
    aligned = Specialization.make(line_sizes={"x": 4})
    odd = Specialization.make(line_sizes={"x": 4}, misaligned=["x"])
    assert aligned != odd and hash(aligned) != hash(odd)
    assert not odd.aligned("x") and aligned.aligned("x")
    # only line buffers are ever misaligned: a scalar buffer's address never matters
    assert Specialization.make(misaligned=["x"]) == Specialization.make()


def test_alignment_is_decided_from_the_address():
    c = cubepy.client("cpu")
    assert line_access_bytes(4, f32) == 16 and line_access_bytes(8, f32) == 16
    assert line_access_bytes(2, f16) == 4 and line_access_bytes(8, f16) == 16
    base = c.tensor(np.zeros(64, np.float32))
    address = c._data_pointer(base.handle)
    for offset in range(8):
        view = base[offset:offset + 32]
        expect = (address + 4 * offset) % 16 == 0
        assert c._aligned(view.handle, 16) is expect
        assert view.with_line_size(4).line_aligned is expect
        assert view.with_line_size(2).line_aligned is ((address + 4 * offset) % 8 == 0)
        assert view.line_aligned  # line size 1: nothing to align


@pytest.mark.parametrize("runtime", SLICING_RUNTIMES)
def test_misaligned_view_launches_its_own_specialisation(runtime):
    c = cubepy.client(runtime)
    n = 4
    data = np.arange(40, dtype=np.float32)
    base = c.tensor(data)
    address = c._data_pointer(base.handle)
    odd = next(k for k in range(1, 4) if (address + 4 * k) % 16)
    even = next(k for k in range(0, 8) if (address + 4 * k) % 16 == 0)
    line_copy._compiled.clear()
    results = []
    for offset in (even, odd):
        x = base[offset:offset + 32].with_line_size(n)
        y = c.zeros((32,), f32).with_line_size(n)
        line_copy.launch(c, CubeCount(1), CubeDim(16), x, y)  # 16 units, 8 lines: a tail
        results.append(y.numpy())
        np.testing.assert_array_equal(y.numpy(), data[offset:offset + 32])
    specs = [spec for (spec, _, _) in line_copy._compiled]
    assert sorted(spec.misaligned for spec in specs) == [(), ("x",)]


# ----------------------------------------------------------------------------- every runtime

@pytest.mark.parametrize("dtype,n", [(f32, 4), (f16, 8), (f32, 8)],
                         ids=["f32x4", "f16x8", "f32x8"])
def test_line_copy_with_a_tail_matches_numpy(runtime_client, dtype, n):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.runtime} lacks {dtype.name}")
    rng = np.random.default_rng(n)
    x = rng.standard_normal(24 * n).astype(dtype.numpy)
    X = c.tensor(x).with_line_size(n)
    Y = c.tensor(np.full(24 * n, 7, dtype.numpy)).with_line_size(n)
    after = c.tensor(np.full(64, 5, dtype.numpy))  # a neighbour the tail must not touch
    line_copy.launch(c, CubeCount(2), CubeDim(16), X, Y)  # 32 units for 24 lines
    np.testing.assert_array_equal(Y.numpy(), x)
    assert (after.numpy() == 5).all()


@pytest.mark.parametrize("runtime", SLICING_RUNTIMES)
@pytest.mark.parametrize("dtype,n", [(f32, 4), (f16, 8)], ids=["f32x4", "f16x8"])
def test_misaligned_line_scale_matches_numpy(runtime, dtype, n):
    c = cubepy.client(runtime)
    rng = np.random.default_rng(3)
    data = rng.standard_normal(16 * n + 1).astype(dtype.numpy)
    base = c.tensor(data)
    x = base[1:].with_line_size(n)  # one element in: misaligned on every allocation
    assert not x.line_aligned
    y0 = rng.standard_normal(16 * n).astype(dtype.numpy)
    y = c.tensor(y0).with_line_size(n)
    line_scale.launch(c, CubeCount(1), CubeDim(32), 2.0, x, y)
    tol = 2e-2 if dtype is f16 else 1e-6
    np.testing.assert_allclose(y.numpy().astype(np.float64),
                               2.0 * data[1:].astype(np.float64) + y0, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------- shared memory

@cube(launch=True)
def shared_rotate(x: Array[Line[f32]], out: Array[Line[f32]]):
    """Each unit stores its line in shared memory and reads its neighbour's."""
    tile = cubepy.SharedMemory(Line[f32], 32, x.line_size())
    tile[cubepy.UNIT_POS] = x[ABSOLUTE_POS]
    cubepy.sync_cube()
    out[ABSOLUTE_POS] = tile[(cubepy.UNIT_POS + u32(1)) % u32(32)]


def test_cuda_shared_lines_are_aligned_vector_accesses():
    src = shared_rotate.source("cuda", cube_dim=(32, 1, 1), checked=False,
                               line_sizes={"x": 4, "out": 4})
    assert "__shared__ __align__(16) float tile[128];" in src
    assert src.count("*reinterpret_cast<float4*>(&tile[") == 1
    assert src.count("*reinterpret_cast<const float4*>(&tile[") == 1
    metal = shared_rotate.source("metal", cube_dim=(32, 1, 1), checked=False,
                                 line_sizes={"x": 4, "out": 4})
    assert "device float4*)(&x[" in metal and "float4*)(&tile[" not in metal


@pytest.mark.nvcc
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_shared_line_sources_compile(tmp_path, checked):
    validate_sources(shared_rotate, tmp_path, cube_dim=(32, 1, 1), checked=checked,
                     line_sizes={"x": 4, "out": 4})


@pytest.mark.parametrize("n", [2, 4])
def test_shared_lines_match_numpy(runtime_client, n):
    c = runtime_client
    x = np.arange(64 * n, dtype=np.float32)
    out = c.zeros((64 * n,), f32).with_line_size(n)
    shared_rotate.launch(c, CubeCount(2), CubeDim(32), c.tensor(x).with_line_size(n), out)
    rows = x.reshape(2, 32, n)
    np.testing.assert_array_equal(out.numpy().reshape(2, 32, n), np.roll(rows, -1, axis=1))


# ----------------------------------------------------------------------------- PTX

@pytest.mark.nvcc
@pytest.mark.parametrize("dtype,n,load,store", [
    (f16, 8, "ld.global.nc.v4.u32", "st.global.v4.u32"),
    (f32, 4, "ld.global.nc.v4.f32", "st.global.v4.f32"),
    (f64, 2, "ld.global.nc.v2.f64", "st.global.v2.f64"),
], ids=["f16x8", "f32x4", "f64x2"])
def test_nvcc_emits_one_128_bit_load_and_store_per_line(tmp_path, dtype, n, load, store):
    import shutil
    import subprocess
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed here")
    source = tmp_path / "copy.cu"
    source.write_text(line_copy.source("cuda", cube_dim=(64, 1, 1), checked=False,
                                       **_lines(dtype, n)))
    ptx = tmp_path / "copy.ptx"
    subprocess.run([nvcc, "-arch=sm_90", "-ptx", "-o", str(ptx), str(source)], check=True,
                   capture_output=True, timeout=300)
    text = ptx.read_text()
    assert text.count(load) == 1 and text.count(store) == 1
    assert "ld.global.nc.u16" not in text and "ld.global.nc.f32" not in text
