"""The benchmark kernels (benchmarks/kernels/) against numpy on every runtime present,
at small sizes, and (cuda-marked, for a real GPU) at the benchmark's sizes."""
from __future__ import annotations

import os
import sys
from functools import partial

import numpy as np
import pytest

import cubepy
from cubepy import CubeCount, CubeDim, f16, f32

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from source_check import (NVCC, assert_no_spills, check_cuda,  # noqa: E402
                          validate_sources)
from benchmarks.kernels import (elementwise, layernorm, matmul, matmul_tc,  # noqa: E402
                                reduce_sum, softmax)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("index", range(len(matmul.matmul.configs)))
def test_matmul_every_config(runtime_client, index):
    matmul.example(runtime_client, config=matmul.matmul.configs[index], kernel=matmul.matmul)


@pytest.mark.parametrize("index", range(len(matmul.matmul_lines.configs)))
def test_matmul_lines_every_config(runtime_client, index):
    cfg = matmul.matmul_lines.configs[index]
    if matmul.lines_shared_bytes(cfg) > runtime_client.limits.max_shared_bytes:
        pytest.skip(f"{runtime_client.device} has at most "
                    f"{runtime_client.limits.max_shared_bytes} bytes of shared memory")
    # 100 rows and 68 columns: edge cubes in both directions, a line-wide column edge
    matmul.example(runtime_client, m=100, n=68, k=32, config=cfg)


def test_matmul_takes_the_scalar_kernel_when_n_is_off_the_lines():
    # 30 columns are not lines of 4: the lines kernel would read B's rows 2 columns off
    matmul.example(cubepy.client("cpu"), m=40, n=30, k=16)


def test_matmul_autotuned_unchecked_at_tile_multiples(runtime_client):
    rng = np.random.default_rng(1)
    a_h = rng.standard_normal((128, 64)).astype(np.float32)
    b_h = rng.standard_normal((64, 256)).astype(np.float32)
    a, b = runtime_client.tensor(a_h), runtime_client.tensor(b_h)
    c = runtime_client.zeros((128, 256), f32)
    matmul.run(runtime_client, a, b, c, checked=False)
    np.testing.assert_allclose(c.numpy(), matmul.reference(a_h, b_h), rtol=1e-4, atol=1e-3)


def test_matmul_rejects_k_off_the_tile():
    client = cubepy.client("cpu")
    a, b = client.zeros((16, 20), f32), client.zeros((20, 16), f32)
    with pytest.raises(ValueError, match="K = 20 must be a multiple of 16"):
        matmul.run(client, a, b, client.zeros((16, 16), f32))


@pytest.mark.parametrize("index", range(len(softmax.softmax.configs)))
@pytest.mark.parametrize("cols", [1000, 998, 37])  # line sizes 4, 2 and 1
def test_softmax_every_config(runtime_client, index, cols):
    cfg = softmax.softmax.configs[index]
    if cfg["cube_dim"].x > runtime_client.limits.max_units_per_cube:
        pytest.skip(f"{runtime_client.device} has at most "
                    f"{runtime_client.limits.max_units_per_cube} units per cube")
    softmax.example(runtime_client, cols=cols, config=cfg)


def test_softmax_autotuned_with_large_values(runtime_client):
    rng = np.random.default_rng(2)
    x_h = (rng.standard_normal((8, 4096)) * 50 + 300).astype(np.float32)  # exp overflows
    x, out = runtime_client.tensor(x_h), runtime_client.zeros(x_h.shape, f32)
    softmax.run(runtime_client, x, out)
    np.testing.assert_allclose(out.numpy(), softmax.reference(x_h), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("cols", [256, 1024, 4096])
@pytest.mark.parametrize("kernel", [softmax.softmax_in_registers,
                                    softmax.softmax_in_registers_one_barrier])
def test_softmax_in_registers_every_plan(runtime_client, cols, kernel):
    """Every (units, lines per unit) split of the register-resident softmax, with four
    barriers per row and with one (rows of very different scales, so a unit's own
    maximum is far from the row's and its rescale matters)."""
    rng = np.random.default_rng(cols)
    x_h = (rng.standard_normal((6, cols)) * 4).astype(np.float32)
    x_h[:, : cols // 2] -= 30.0  # the first half's units hold maxima far below the row's
    lines = cols // 4
    plans = softmax.register_plans(lines)
    assert plans and all(u * p == lines for u, p in plans)
    for units, per_unit in plans:
        if units > runtime_client.limits.max_units_per_cube:
            continue
        out = runtime_client.zeros(x_h.shape, f32)
        kernel.launch(
            runtime_client, CubeCount(6), CubeDim(units),
            runtime_client.tensor(x_h).with_line_size(4), out.with_line_size(4), per_unit)
        np.testing.assert_allclose(out.numpy(), softmax.reference(x_h), rtol=1e-4,
                                   atol=1e-7, err_msg=f"{units} units x {per_unit}")


@pytest.mark.parametrize("cols", [1000, 998, 1001])  # line sizes 4, 2 and 1
def test_softmax_ragged_rows_every_plan(runtime_client, cols):
    """Every split of a row its units do not divide evenly, launched unchecked: the
    units' own guards keep them inside their row."""
    rng = np.random.default_rng(cols)
    x_h = (rng.standard_normal((5, cols)) * 4).astype(np.float32)
    n = softmax.line_size_for(cols)
    lines = cols // n
    plans = [plan for plan in softmax.candidate_plans(runtime_client, lines)
             if plan[0] == "ragged"]
    assert plans and all(u * (p - 1) < lines < u * p for _, u, p in plans)
    for plan in plans:
        out = runtime_client.zeros(x_h.shape, f32)
        softmax.launch_plan(runtime_client, plan,
                            runtime_client.tensor(x_h).with_line_size(n),
                            out.with_line_size(n), checked=False)
        np.testing.assert_allclose(out.numpy(), softmax.reference(x_h), rtol=1e-4,
                                   atol=1e-7, err_msg=softmax.describe_plan(plan))


TAIL = 3  # rows of `out` past the input's last row: they must stay untouched


@pytest.mark.parametrize("rows", [1, 13])  # fewer than, and not a multiple of, a cube
@pytest.mark.parametrize("line_size", [4, 1])
@pytest.mark.parametrize("per_unit", [1, 3, 16])  # the lines of the lanes that have most
def test_softmax_ragged_plane_rows_every_plan(runtime_client, rows, line_size, per_unit):
    """Every plan giving a row to one plane whose lanes do not split it evenly, launched
    unchecked: each lane keeps inside its row (with one line each, some lanes hold
    none), the planes past the last row store nothing (the rows after it stay zero)."""
    c = runtime_client
    plane = c.limits.plane_dim
    lines = plane * per_unit - (plane // 2 - 1)  # odd, as the line size 1 needs
    cols = lines * line_size
    x_h = (np.random.default_rng(cols).standard_normal((rows, cols)) * 4).astype(np.float32)
    n = softmax.line_size_for(cols)
    assert n == line_size
    plans = [plan for plan in softmax.candidate_plans(c, lines) if plan[0] == "ragged_plane"]
    assert plans and all(p == per_unit for _, _, p in plans)
    for plan in plans:
        out = c.zeros((rows + TAIL, cols), f32)
        softmax.launch_plan(c, plan, c.tensor(x_h).with_line_size(n),
                            out.with_line_size(n), checked=False)
        got = out.numpy()
        np.testing.assert_allclose(got[:rows], softmax.reference(x_h), rtol=1e-4,
                                   atol=1e-7, err_msg=softmax.describe_plan(plan))
        assert not got[rows:].any(), softmax.describe_plan(plan)


@pytest.mark.parametrize("dtype", [f32, f16], ids=["f32", "f16"])
@pytest.mark.parametrize("cols", [512, 1536, 4096])  # 1536: 3 or 6 lines per unit
def test_layernorm_in_registers_every_plan(runtime_client, dtype, cols):
    if dtype not in runtime_client.limits.dtypes:
        pytest.skip(f"{runtime_client.device} has no {dtype}")
    rng = np.random.default_rng(cols)
    x_h = (rng.standard_normal((5, cols)) * 3 + 1).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(cols).astype(dtype.numpy) for _ in range(2))
    n = layernorm.line_size_for(cols, dtype)
    c = runtime_client
    plans = softmax.register_plans(cols // n)
    assert plans
    for units, per_unit in plans:
        y = c.zeros(x_h.shape, dtype)
        layernorm.layernorm_in_registers.launch(
            c, CubeCount(5), CubeDim(units), *(c.tensor(a).with_line_size(n)
                                                for a in (x_h, w_h, b_h)),
            y.with_line_size(n), 1e-5, per_unit)
        tol = 1e-4 if dtype == f32 else 2e-2
        np.testing.assert_allclose(y.numpy().astype(np.float64),
                                   layernorm.reference(x_h, w_h, b_h).astype(np.float64),
                                   rtol=tol, atol=tol, err_msg=f"{units} x {per_unit}")


@pytest.mark.parametrize("dtype", [f32, f16], ids=["f32", "f16"])
@pytest.mark.parametrize("cols", [1600, 998, 1001])  # 400, 200, 499 and 1001 lines
def test_layernorm_ragged_rows_every_plan(runtime_client, dtype, cols):
    """Every split of a row its units do not divide evenly, launched unchecked: the
    statistics leave out the lines a unit does not hold, and no unit writes past its
    row (the last row is followed by rows that must stay zero)."""
    if dtype not in runtime_client.limits.dtypes:
        pytest.skip(f"{runtime_client.device} has no {dtype}")
    c = runtime_client
    rng = np.random.default_rng(cols)
    x_h = (rng.standard_normal((5, cols)) * 3 + 1).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(cols).astype(dtype.numpy) for _ in range(2))
    n = layernorm.line_size_for(cols, dtype)
    lines = cols // n
    candidates = layernorm.candidate_plans(c, lines)
    # softmax's ragged plane plans have no layernorm kernel: never a candidate here
    assert {plan[0] for plan in candidates} <= {"plane", "cube", "ragged", "staged"}
    plans = [plan for plan in candidates if plan[0] == "ragged"]
    assert plans and all(u * (p - 1) < lines < u * p for _, u, p in plans)
    tol = 1e-4 if dtype == f32 else 2e-2
    for plan in plans:
        y = c.zeros((5 + TAIL, cols), dtype)
        layernorm.launch_plan(c, plan, tuple(c.tensor(a).with_line_size(n)
                                             for a in (x_h, w_h, b_h)) +
                              (y.with_line_size(n), 1e-5), checked=False)
        got = y.numpy().astype(np.float64)
        np.testing.assert_allclose(got[:5], layernorm.reference(x_h, w_h, b_h)
                                   .astype(np.float64), rtol=tol, atol=tol,
                                   err_msg=layernorm.describe_plan(plan))
        assert not got[5:].any(), layernorm.describe_plan(plan)


def _plane_row_launch(c, kernel, rows: int, units: int, per_unit: int, *args) -> None:
    """One unchecked launch of a plane-per-row kernel (no bounds checks: the row guard
    alone keeps the planes past the last row from storing)."""
    plane = c.limits.plane_dim
    kernel.launch_unchecked(c, CubeCount(softmax.plane_rows_cubes(rows, units, plane)),
                            CubeDim(units), *args, per_unit, plane)


@pytest.mark.parametrize("rows", [1, 7, 13])  # fewer than, and not a multiple of, a cube
@pytest.mark.parametrize("lines_per_unit", [1, 4, 16])
def test_softmax_plane_rows_every_plan(runtime_client, rows, lines_per_unit):
    """One plane per row at the client's own plane size (8 on llvmpipe, 32 on CUDA and
    the cpu runtime), for every cube size, with a partly empty last cube."""
    c = runtime_client
    plane = c.limits.plane_dim
    cols = 4 * plane * lines_per_unit
    plans = softmax.plane_row_plans(cols // 4, plane, c.limits.max_units_per_cube)
    assert plans and all(p == lines_per_unit and u % plane == 0 for u, p in plans)
    rng = np.random.default_rng(rows * 100 + lines_per_unit)
    x_h = (rng.standard_normal((rows, cols)) * 4 + 50).astype(np.float32)
    for units, per_unit in plans:
        out = c.tensor(np.full((rows + TAIL, cols), -1.0, np.float32))
        _plane_row_launch(c, softmax.softmax_plane_rows, rows, units, per_unit,
                          c.tensor(x_h).with_line_size(4), out.with_line_size(4))
        got = out.numpy()
        np.testing.assert_allclose(got[:rows], softmax.reference(x_h), rtol=1e-4,
                                   atol=1e-7, err_msg=f"{units} units x {per_unit}")
        assert (got[rows:] == -1.0).all(), f"{units} units: stored past the last row"


@pytest.mark.parametrize("dtype", [f32, f16], ids=["f32", "f16"])
@pytest.mark.parametrize("rows", [1, 7, 13])
@pytest.mark.parametrize("lines_per_unit", [1, 4, 16])
def test_layernorm_plane_rows_every_plan(runtime_client, dtype, rows, lines_per_unit):
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.device} has no {dtype}")
    plane = c.limits.plane_dim
    n = 16 // np.dtype(dtype.numpy).itemsize  # the line size layernorm.run takes: 16 bytes
    cols = n * plane * lines_per_unit
    assert layernorm.line_size_for(cols, dtype) == n
    plans = softmax.plane_row_plans(cols // n, plane, c.limits.max_units_per_cube)
    assert plans
    rng = np.random.default_rng(rows * 100 + lines_per_unit)
    x_h = (rng.standard_normal((rows, cols)) * 3 + 1).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(cols).astype(dtype.numpy) for _ in range(2))
    want = layernorm.reference(x_h, w_h, b_h).astype(np.float64)
    tol = 1e-4 if dtype == f32 else 2e-2
    for units, per_unit in plans:
        y = c.tensor(np.full((rows + TAIL, cols), 7.0, dtype.numpy))
        _plane_row_launch(c, layernorm.layernorm_plane_rows, rows, units, per_unit,
                          *(c.tensor(a).with_line_size(n) for a in (x_h, w_h, b_h)),
                          y.with_line_size(n), 1e-5)
        got = y.numpy().astype(np.float64)
        np.testing.assert_allclose(got[:rows], want, rtol=tol, atol=tol,
                                   err_msg=f"{units} units x {per_unit}")
        assert (got[rows:] == 7.0).all(), f"{units} units: stored past the last row"


@pytest.mark.parametrize("dtype", [f32, f16], ids=["f32", "f16"])
@pytest.mark.parametrize("rows", [1, 7, 13])
def test_layernorm_staged_rows_every_plan(runtime_client, dtype, rows):
    """Several rows per cube, weight and bias staged in shared memory: every staged plan
    for rows of 8 lines per plane unit, with a partly empty last cube."""
    c = runtime_client
    if dtype not in c.limits.dtypes:
        pytest.skip(f"{c.device} has no {dtype}")
    n = 16 // np.dtype(dtype.numpy).itemsize
    cols = n * c.limits.plane_dim * 8
    plans = layernorm.staged_plans(c, cols // n)
    assert plans
    rng = np.random.default_rng(rows)
    x_h = (rng.standard_normal((rows, cols)) * 3 + 1).astype(dtype.numpy)
    w_h, b_h = (rng.standard_normal(cols).astype(dtype.numpy) for _ in range(2))
    want = layernorm.reference(x_h, w_h, b_h).astype(np.float64)
    tol = 1e-4 if dtype == f32 else 2e-2
    # (unchecked, the row guard alone keeps the groups past the last row from storing)
    for plan, checked in [(plan, checked) for plan in plans for checked in (False, True)]:
        y = c.tensor(np.full((rows + TAIL, cols), 7.0, dtype.numpy))
        layernorm.launch_plan(c, plan, tuple(c.tensor(a).with_line_size(n)
                                             for a in (x_h, w_h, b_h)) +
                              (y.with_line_size(n), 1e-5), checked=checked)
        got = y.numpy().astype(np.float64)
        np.testing.assert_allclose(got[:rows], want, rtol=tol, atol=tol,
                                   err_msg=f"{plan}, checked={checked}")
        assert (got[rows:] == 7.0).all(), f"{plan}: stored past the last row"


def test_staged_plans_hold_whole_planes_within_the_cube_limit():
    """A staged plan's row group is one plane or a register plan's cube of at most 128
    units (whole planes), in cubes of 256 or 512 units holding at least two rows."""
    from types import SimpleNamespace

    def client(plane, max_units=1024):
        return SimpleNamespace(limits=SimpleNamespace(plane_dim=plane,
                                                      max_units_per_cube=max_units))
    assert layernorm.staged_plans(client(32), 256) == [
        ("staged", 256, 4, 64), ("staged", 512, 4, 64), ("staged", 256, 2, 128),
        ("staged", 512, 2, 128), ("staged", 256, 8, 32), ("staged", 512, 8, 32)]
    assert layernorm.staged_plans(client(32, max_units=256), 256) == [
        ("staged", 256, 4, 64), ("staged", 256, 2, 128), ("staged", 256, 8, 32)]
    # 1024 lines: the register plans' cubes are all over 128 units; 32 per plane unit is
    # over the plane plans' 16 lines
    assert layernorm.staged_plans(client(32), 1024) == [("staged", 256, 8, 128),
                                                        ("staged", 512, 8, 128)]
    assert layernorm.staged_plans(client(64), 256) == [
        ("staged", 256, 4, 64), ("staged", 512, 4, 64), ("staged", 256, 2, 128),
        ("staged", 512, 2, 128)]  # (the plane's group is the 64-unit register plan's)
    assert layernorm.staged_plans(client(0), 256) == []  # no plane operations
    assert layernorm.rows_per_cube(client(32), ("staged", 512, 8, 32)) == 16
    assert "16 rows per cube" in layernorm.describe_plan(("staged", 512, 8, 32))


def test_plane_row_plans_follow_the_plane_size():
    """A row must split evenly over the plane into at most 16 lines per unit; the cube
    sizes hold whole planes and stay within the device's limit."""
    assert softmax.plane_row_plans(256, 32) == [(64, 8), (128, 8), (256, 8)]
    assert softmax.plane_row_plans(256, 8) == []  # 32 lines per unit
    assert softmax.plane_row_plans(128, 8) == [(64, 16), (128, 16), (256, 16)]
    assert softmax.plane_row_plans(100, 32) == []  # not a multiple of the plane
    assert softmax.plane_row_plans(512, 128, max_units=128) == [(128, 4)]
    assert softmax.plane_rows_cubes(13, 128, 32) == 4  # 4 rows per cube, the last 1


def test_plans_use_the_clients_plane_size(runtime_client):
    """run() picks among plans made for the client's reported plane size (the size the
    kernels see as PLANE_DIM: tests/test_lang_planes.py), and gets every dtype right."""
    c = runtime_client
    plane = c.limits.plane_dim
    plans = softmax.candidate_plans(c, 4 * plane)
    plane_plans = [p for p in plans if p[0] == "plane"]
    assert plane_plans == [("plane", u, 4) for u in (64, 128, 256)
                           if u % plane == 0 and u <= c.limits.max_units_per_cube]
    assert plane_plans and plans[:len(plane_plans)] == plane_plans
    assert not [p for p in softmax.candidate_plans(c, 4 * plane + 1) if p[0] == "plane"]
    softmax.example(c, rows=10, cols=16 * plane)
    assert softmax.chosen_plan(c, c.zeros((10, 16 * plane), f32))
    for dtype in (f32, f16):
        if dtype in c.limits.dtypes:
            layernorm.example(c, rows=10, cols=8 * 4 * plane, dtype=dtype)


def test_a_plane_plan_for_another_plane_size_is_rejected(runtime_client, monkeypatch):
    """The GPU plan selection checks each plane-per-row plan on a few rows first: made
    for half the plane the kernel really runs with, its plane reductions span two rows,
    and the check turns it down (as it would for a driver picking another subgroup size
    than the client reports)."""
    import dataclasses
    c = runtime_client
    plane = c.limits.plane_dim
    has_f16 = f16 in c.limits.dtypes
    x16 = c.zeros((3, 16 * plane), f16).with_line_size(8) if has_f16 else None
    assert softmax.plane_plan_agrees(c, ("plane", 64, 2), 8 * plane, 4)
    if has_f16:
        assert layernorm.plane_plan_agrees(c, ("plane", 64, 2), x16)
    monkeypatch.setattr(c, "limits", dataclasses.replace(c.limits, plane_dim=plane // 2))
    assert not softmax.plane_plan_agrees(c, ("plane", 64, 4), 8 * plane, 4)
    if has_f16:
        assert not layernorm.plane_plan_agrees(c, ("plane", 64, 4), x16)
        # a staged plan of one (half) plane per row: its plane sums span two rows
        assert not layernorm.plane_plan_agrees(c, ("staged", 256, 4, plane // 2), x16)


@pytest.mark.parametrize("kernel,spec", [
    ("softmax", {"per_unit": 8, "plane": 32, "line_sizes": {"x": 4, "out": 4}}),
    ("layernorm_f16", {"Float": f16, "per_unit": 4, "plane": 32,
                       "line_sizes": {"x": 8, "weight": 8, "bias": 8, "y": 8}}),
    ("layernorm_f32", {"Float": f32, "per_unit": 8, "plane": 32,
                       "line_sizes": {"x": 4, "weight": 4, "bias": 4, "y": 4}}),
])
def test_plane_row_kernels_compile_for_every_target(tmp_path, kernel, spec):
    """The plane-per-row kernels as the benchmark launches them, through nvcc, clang++
    (Metal) and naga; no shared memory and no cube barrier in any of them."""
    k = softmax.softmax_plane_rows if kernel == "softmax" else layernorm.layernorm_plane_rows
    sources = validate_sources(k, tmp_path, cube_dim=(128, 1, 1), checked=False, **spec)
    assert "__syncthreads" not in sources["cuda"] and "__shared__" not in sources["cuda"]
    assert "workgroupBarrier" not in sources["wgsl"]
    assert "var<workgroup>" not in sources["wgsl"]
    assert "subgroupAdd" in sources["wgsl"]


@pytest.mark.parametrize("group", ["plane", "planes"])
def test_layernorm_staged_rows_compiles_for_every_target(tmp_path, group):
    """The staged kernel as the benchmark launches it, through nvcc, clang++ (Metal) and
    naga: weight and bias in shared memory; a group of one plane reduces with plane
    operations alone, so its only barrier is the one after the staging."""
    spec = {"Float": f32, "per_unit": 8 if group == "plane" else 4,
            "group": 32 if group == "plane" else 64, "plane": 32,
            "line_sizes": {"x": 4, "weight": 4, "bias": 4, "y": 4}}
    sources = validate_sources(layernorm.layernorm_staged_rows, tmp_path,
                               cube_dim=(256, 1, 1), checked=False, **spec)
    assert sources["wgsl"].count("workgroupBarrier()") == (1 if group == "plane" else 5)
    assert sources["cuda"].count("__syncthreads()") == (1 if group == "plane" else 5)


@pytest.mark.parametrize("dtype", [f32, f16], ids=["f32", "f16"])
@pytest.mark.parametrize("cols", [1024, 998, 37])
def test_layernorm(runtime_client, dtype, cols):
    if dtype not in runtime_client.limits.dtypes:
        pytest.skip(f"{runtime_client.device} has no {dtype}")
    layernorm.example(runtime_client, cols=cols, dtype=dtype)


@pytest.mark.parametrize("n", [100_003, 100_002, 4 * 4096])
def test_reduce_sum(runtime_client, n):
    reduce_sum.example(runtime_client, n=n)


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
@pytest.mark.parametrize("line_size", [1, 2, 4, 8])
def test_elementwise(runtime_client, checked, line_size):
    elementwise.example(runtime_client, n=8 * 1000, line_size=line_size, checked=checked)


@pytest.mark.parametrize("index", range(len(matmul_tc.CONFIGS)))
def test_matmul_tc_every_config_on_cpu(index):
    """The matrix-unit matmul under the cpu runtime's cmma emulation (wgpu has no matrix
    units: WGSL rejects the kernel)."""
    matmul_tc.example(cubepy.client("cpu"), config=matmul_tc.CONFIGS[index])


PIPELINED = [i for i, cfg in enumerate(matmul_tc.CONFIGS) if cfg["asynchronous"]]


@pytest.mark.parametrize("index", PIPELINED)
@pytest.mark.parametrize("k", [64, 192])
def test_matmul_tc_pipelined_with_fewer_or_more_slices_than_stages(index, k):
    """K = 64 gives fewer slices than the prologue starts (its copies past the end are
    skipped, their groups empty), K = 192 more, so copies refill freed shared copies."""
    matmul_tc.example(cubepy.client("cpu"), m=256, n=256, k=k, seed=k,
                      config=matmul_tc.CONFIGS[index])


def test_matmul_tc_autotuned_rectangular_on_cpu():
    matmul_tc.example(cubepy.client("cpu"), m=512, n=256, k=192, seed=3)


def test_matmul_tc_rejects_sizes_off_the_tile():
    client = cubepy.client("cpu")
    a = client.zeros((256, 96), f16).with_line_size(8)
    b = client.zeros((96, 256), f16).with_line_size(8)
    with pytest.raises(ValueError, match="K = 96"):
        matmul_tc.run(client, a, b, client.zeros((256, 256), f16).with_line_size(8))


def test_elementwise_checked_drops_the_tail():
    client = cubepy.client("cpu")
    elementwise.example(client, n=10_002, line_size=2, checked=True)


# -- at the benchmark's sizes, on a real GPU --------------------------------------------
# One case each, so that parallel runs of the GPU tests (tools/gpu_tests.py) spread them
# (together they take minutes on an H200: each autotuned kernel times its plans).
BENCHMARK_SIZES = {
    "matmul_f32_2048": partial(matmul.example, m=2048, n=2048, k=2048),
    **{f"matmul_tc_config_{i}": partial(matmul_tc.example, m=1024, n=768, k=512, config=cfg)
       for i, cfg in enumerate(matmul_tc.CONFIGS)},
    "softmax_512x16384": partial(softmax.example, rows=512, cols=16384),
    "layernorm_f16_512x8192": partial(layernorm.example, rows=512, cols=8192, dtype=f16),
    # the short rows, where the plane-per-row and staged plans are candidates
    "softmax_4096x1024": partial(softmax.example, rows=4096, cols=1024),
    **{f"layernorm_{dtype}_4096x{cols}": partial(layernorm.example, rows=4096, cols=cols,
                                                 dtype=dtype)
       for dtype, cols in ((f16, 1024), (f16, 4096), (f32, 1024))},
    "reduce_sum_64Mi": partial(reduce_sum.example, n=1 << 26),
    "elementwise_16Mi_unchecked": partial(elementwise.example, n=1 << 24, checked=False),
}


@pytest.mark.cuda
@pytest.mark.gpu
@pytest.mark.parametrize("case", list(BENCHMARK_SIZES))
def test_gallery_at_benchmark_sizes_on_cuda(case):
    try:
        client = cubepy.client("cuda")
    except cubepy.LaunchError as e:
        pytest.skip(str(e))
    BENCHMARK_SIZES[case](client)


# -- the CUDA the H200 will run, compiled here with nvcc --------------------------------

CUDA_STATIC_SHARED = 48 * 1024  # bytes of __shared__ arrays a CUDA kernel may declare


def _matmul_tc_cuda(cfg: dict, checked: bool):
    """matmul_tc compiled for CUDA at one config (f16, line size 8): `.artefact` is the
    Compiled record, `.kernel` the IR."""
    kernel = matmul_tc.matmul_tc.kernel
    spec = kernel._specialization(cfg["cube_dim"], {
        "Float": f16, **{k: v for k, v in cfg.items() if k != "cube_dim"}},
        {"a": 8, "b": 8, "c": 8})
    return kernel._compile(spec, "cuda", checked)


def test_checked_matmul_tc_over_the_shared_limit_is_a_launch_error():
    """A checked launch stages cmma tiles in shared memory, counted with the kernel's
    SharedMemory: on a device allowing 48 KB per cube (no opt-in), a config that nearly
    fills 48 KB goes over with them, which is a LaunchError naming the staging before
    nvcc or the driver sees it. Unchecked (the benchmark's launch), wmma reads the shared
    tiles directly, with no staging."""
    from types import SimpleNamespace

    from cubepy.kernel import _check_shared_memory
    cuda = SimpleNamespace(target="cuda", runtime="cuda", device="a 48 KB device",
                           limits=SimpleNamespace(max_shared_bytes=CUDA_STATIC_SHARED))
    over = 0
    for cfg in matmul_tc.CONFIGS:
        unchecked = _matmul_tc_cuda(cfg, False).artefact
        # the benchmark's launch: wmma straight on shared memory, no staging
        assert "cube_cmma" not in unchecked.source
        assert "nvcuda::wmma::load_matrix_sync(fa[" in unchecked.source
        if unchecked.shared_bytes > CUDA_STATIC_SHARED:
            continue  # needs the opt-in whether checked or not
        compiled = _matmul_tc_cuda(cfg, True)
        record, kernel = compiled.artefact, compiled.kernel
        assert record.shared_bytes > unchecked.shared_bytes  # the staging tiles
        if record.shared_bytes > CUDA_STATIC_SHARED:
            over += 1
            with pytest.raises(cubepy.LaunchError, match="cmma staging tiles"):
                _check_shared_memory("matmul_tc", cuda, kernel, None, record.shared_bytes)
        else:
            _check_shared_memory("matmul_tc", cuda, kernel, None, record.shared_bytes)
    # 128 x 128 x 32 on 8 planes (45 + 8 KB) and 64 x 256 x 32 on 4 (47 + 4 KB)
    assert over == 2


def test_matmul_tc_pipelined_configs_copy_asynchronously():
    """The pipelined configs copy global memory straight into 3 or 4 shared copies with
    cp.async, one cube barrier per step; the others keep their register staging."""
    assert len(PIPELINED) >= 4 and {3, 4} <= {matmul_tc.CONFIGS[i]["stages"]
                                              for i in PIPELINED}
    for cfg in matmul_tc.CONFIGS:
        source = _matmul_tc_cuda(cfg, False).artefact.source
        if not cfg["asynchronous"]:
            assert "cp.async" not in source
            continue
        assert cfg["stages"] in (3, 4)
        assert "cp.async.cg.shared.global [%0], [%1], 16;" in source
        assert f"cp.async.wait_group {cfg['stages'] - 2};" in source
        assert " pa[" not in source and " pb[" not in source  # no register staging
        loop = source[source.index("for (unsigned int step"):]
        assert loop.count("__syncthreads();") == 1  # the K loop's only barrier


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_every_matmul_tc_config_compiles_for_sm90_without_spills(tmp_path, checked):
    """Every config as the benchmark launches it (unchecked), those beyond 48 KB of
    shared memory too (they take the opt-in); checked, the pipelined ones (two of the
    register-staged ones spill a little in a checked launch, with its staging tiles)."""
    for i, cfg in enumerate(matmul_tc.CONFIGS):
        if checked and not cfg["asynchronous"]:
            continue
        name = f"matmul_tc_{i}"
        source = _matmul_tc_cuda(cfg, checked).artefact.source
        assert_no_spills(check_cuda(source, tmp_path, name=name), name)


def _cuda_sources(checked: bool) -> dict[str, str]:
    from cubepy import CubeDim
    ls4 = {"x": 4, "y": 4, "out": 4}
    out = {f"matmul_{i}": matmul.matmul.kernel.source(
        "cuda", cube_dim=cfg["cube_dim"], checked=checked,
        **{k: v for k, v in cfg.items() if k != "cube_dim"})
        for i, cfg in enumerate(matmul.matmul.configs)}
    records = [_matmul_tc_cuda(cfg, checked).artefact for cfg in matmul_tc.CONFIGS]
    out.update({f"matmul_tc_{i}": r.source for i, r in enumerate(records)
                if r.shared_bytes <= CUDA_STATIC_SHARED})  # over: a LaunchError (below)
    out["softmax"] = softmax.softmax.kernel.source("cuda", cube_dim=CubeDim(1024),
                                                   checked=checked,
                                                   line_sizes={"x": 4, "out": 4})
    out["layernorm_f16"] = layernorm.layernorm.source(
        "cuda", cube_dim=CubeDim(256), checked=checked, Float=f16,
        line_sizes={"x": 8, "weight": 8, "bias": 8, "y": 8})
    out["softmax_plane_rows"] = softmax.softmax_plane_rows.source(
        "cuda", cube_dim=CubeDim(128), checked=checked, per_unit=8, plane=32,
        line_sizes={"x": 4, "out": 4})
    out["layernorm_plane_rows_f16"] = layernorm.layernorm_plane_rows.source(
        "cuda", cube_dim=CubeDim(128), checked=checked, Float=f16, per_unit=16, plane=32,
        line_sizes={"x": 8, "weight": 8, "bias": 8, "y": 8})
    out["sum"] = reduce_sum.reduce_sum.source("cuda", cube_dim=CubeDim(256), checked=checked,
                                              line_sizes={"x": 4})
    out["elementwise"] = elementwise.add_relu.source("cuda", cube_dim=CubeDim(256),
                                                     checked=checked, Float=f32,
                                                     line_sizes=ls4)
    return out


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_gallery_cuda_compiles_for_sm90_without_spills(tmp_path, checked):
    for name, source in _cuda_sources(checked).items():
        assert_no_spills(check_cuda(source, tmp_path, name=name), name)
