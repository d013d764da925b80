"""Atomics breadth: 64-bit and f64 atomics (CUDA and the cpu runtime; a CompileError
naming the target and the type elsewhere), f16/bf16 add on CUDA, atomic_load /
atomic_store, atomic_inc / atomic_dec with CUDA's wrap-around, atomics on shared memory,
and the NaN rule of float atomic min/max (a NaN operand is ignored, on every runtime).

Every runtime test has many units hit one address and compares exactly with a serial
Python/numpy model (atomic results do not depend on the order here: integer ops
commute, float sums are of small integers, inc/dec see the same operation each time).
"""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, UNIT_POS, Array, CompileError, CubeCount, CubeDim,
                    SharedMemory, bf16, f16, f32, f64, i32, i64, u32, u64)
from source_check import validate_sources

N = 256  # units per launch: 4 cubes of 64
DIM = CubeDim(64)
COUNT = CubeCount(N // 64)


def _wide_runtime(client) -> bool:
    """Whether the runtime has 64-bit atomics (cuda, cpu); wgpu raises instead."""
    return client.runtime in ("cuda", "cpu")


def _wgpu_refuses_64_bit(client, kernel, type_name: str) -> None:
    """On wgpu a 64-bit buffer cannot be made (a LaunchError naming the type) and the
    kernel's WGSL is a CompileError naming it."""
    from cubepy import LaunchError
    with pytest.raises(LaunchError, match=f"does not support {type_name}"):
        client.zeros(N, getattr(cubepy, type_name))
    with pytest.raises(CompileError, match=f"WGSL has no {type_name}"):
        kernel.source("wgsl", cube_dim=DIM)


# -- atomic_inc / atomic_dec ----------------------------------------------------------

@cubepy.cube(launch=True)
def inc_dec(a: Array[u32], old_inc: Array[u32], old_dec: Array[u32], limit: u32):
    i = ABSOLUTE_POS
    old_inc[i] = cubepy.atomic_inc(a, 0, limit)
    old_dec[i] = cubepy.atomic_dec(a, 1, limit)
    cubepy.atomic_dec(a, 2, limit)  # starts above the limit


def _serial_wrap(op: str, start: int, limit: int, times: int) -> tuple[list[int], int]:
    olds, v = [], start
    for _ in range(times):
        olds.append(v)
        if op == "inc":
            v = 0 if v >= limit else v + 1
        else:
            v = limit if v == 0 or v > limit else v - 1
    return olds, v


def test_inc_dec_wrap_around_like_cuda(runtime_client):
    c = runtime_client
    a = c.tensor(np.array([0, 0, 1000], np.uint32))
    old_inc, old_dec = c.zeros(N, u32), c.zeros(N, u32)
    inc_dec.launch(c, COUNT, DIM, a, old_inc, old_dec, np.uint32(9))
    inc_olds, inc_final = _serial_wrap("inc", 0, 9, N)
    dec_olds, dec_final = _serial_wrap("dec", 0, 9, N)
    _, above_final = _serial_wrap("dec", 1000, 9, N)
    assert a.numpy().tolist() == [inc_final, dec_final, above_final]
    assert sorted(old_inc.numpy().tolist()) == sorted(inc_olds)
    assert sorted(old_dec.numpy().tolist()) == sorted(dec_olds)


@cubepy.cube(launch=True)
def inc_at_max(a: Array[u32], old: Array[u32]):
    old[ABSOLUTE_POS] = cubepy.atomic_inc(a, 0, u32(0xFFFFFFFF))


def test_inc_with_the_largest_limit_wraps_at_the_top(runtime_client):
    c = runtime_client
    a = c.tensor(np.array([0xFFFFFFFF - 100], np.uint32))
    old = c.zeros(N, u32)
    inc_at_max.launch(c, COUNT, DIM, a, old)
    olds, final = _serial_wrap("inc", 0xFFFFFFFF - 100, 0xFFFFFFFF, N)
    assert a.numpy()[0] == final
    assert sorted(old.numpy().tolist()) == sorted(olds)


# -- atomic_load / atomic_store -------------------------------------------------------

@cubepy.cube(launch=True)
def load_store(a: Array[f32], b: Array[i32], out_a: Array[f32], out_b: Array[i32]):
    i = ABSOLUTE_POS
    cubepy.atomic_store(a, i, f32(i) * f32(0.5))
    out_a[i] = cubepy.atomic_load(a, i)
    out_b[i] = cubepy.atomic_load(b, 0)
    cubepy.atomic_add(b, 1, 1)


def test_atomic_load_and_store(runtime_client):
    c = runtime_client
    a, b = c.zeros(N, f32), c.tensor(np.array([-7, 0], np.int32))
    out_a, out_b = c.zeros(N, f32), c.zeros(N, i32)
    load_store.launch(c, COUNT, DIM, a, b, out_a, out_b)
    want = np.arange(N, dtype=np.float32) * 0.5
    np.testing.assert_array_equal(a.numpy(), want)
    np.testing.assert_array_equal(out_a.numpy(), want)
    assert (out_b.numpy() == -7).all() and b.numpy()[1] == N


def test_atomic_store_gives_no_value():
    @cubepy.cube(launch=True)
    def k(a: Array[u32], out: Array[u32]):
        out[0] = cubepy.atomic_store(a, 0, u32(1))
    with pytest.raises(CompileError, match=r"atomic_store\(\) gives no value"):
        k.source("cuda", cube_dim=DIM)


# -- float min/max ignore NaN --------------------------------------------------------

@cubepy.cube(launch=True)
def nan_minmax(values: Array[f32], hi: Array[f32], lo: Array[f32]):
    i = ABSOLUTE_POS
    v = values[i]
    cubepy.atomic_max(hi, 0, v)  # starts at NaN: the first number replaces it
    cubepy.atomic_min(lo, 0, v)
    cubepy.atomic_max(hi, 1, values[0])  # values[0] is NaN: the number stays
    cubepy.atomic_min(lo, 1, values[0])


def test_float_min_max_ignore_nan_on_every_runtime(runtime_client):
    c = runtime_client
    vals = (np.arange(N, dtype=np.float32) - 100.0) * 0.25
    vals[::7] = np.nan
    hi = c.tensor(np.array([np.nan, 3.5], np.float32))
    lo = c.tensor(np.array([np.nan, -3.5], np.float32))
    nan_minmax.launch(c, COUNT, DIM, c.tensor(vals), hi, lo)
    assert hi.numpy().tolist() == [float(np.nanmax(vals)), 3.5]
    assert lo.numpy().tolist() == [float(np.nanmin(vals)), -3.5]


# -- 64-bit integers and f64 (CUDA, cpu) ---------------------------------------------

@cubepy.cube(launch=True)
def wide_ints(s: Array[i64], u: Array[u64], old: Array[i64]):
    i = ABSOLUTE_POS
    big = (i64(i) + i64(1)) << i64(33)
    old[i] = cubepy.atomic_add(s, 0, big)
    cubepy.atomic_sub(s, 1, big)
    cubepy.atomic_min(s, 2, -big)
    cubepy.atomic_max(s, 3, big)
    cubepy.atomic_exchange(s, 4, i64(7))
    cubepy.atomic_compare_exchange(s, 5, i64(-1), big)
    bit = u64(1) << u64(i % u32(64))
    cubepy.atomic_or(u, 0, bit)
    cubepy.atomic_xor(u, 1, bit)
    cubepy.atomic_and(u, 2, ~bit)
    cubepy.atomic_max(u, 3, u64(i) << u64(40))
    cubepy.atomic_min(u, 4, u64(i) + (u64(1) << u64(40)))
    cubepy.atomic_add(u, 5, u64(i) << u64(35))
    cubepy.atomic_sub(u, 6, u64(1))  # wraps below zero
    cubepy.atomic_exchange(u, 7, u64(9))
    cubepy.atomic_compare_exchange(u, 8, u64(0), u64(i) + u64(1))
    cubepy.atomic_store(s, 6, cubepy.atomic_load(s, 7) + i64(1))


def test_64_bit_integer_atomics(runtime_client):
    c = runtime_client
    if not _wide_runtime(c):
        _wgpu_refuses_64_bit(c, wide_ints, "i64")
        return
    s = c.tensor(np.array([5, 0, 0, 0, 0, -1, 0, -(1 << 40)], np.int64))
    u = c.tensor(np.array([0, 0, 2**64 - 1, 0, 2**64 - 1, 0, 0, 0, 0], np.uint64))
    old = c.zeros(N, i64)
    wide_ints.launch(c, COUNT, DIM, s, u, old)
    big = (np.arange(N, dtype=np.int64) + 1) * (1 << 33)
    got = s.numpy().tolist()
    assert got[:5] == [5 + int(big.sum()), -int(big.sum()), -int(big.max()),
                       int(big.max()), 7]
    assert got[5] in big.tolist()  # exactly one unit's swap succeeded
    # the old values, sorted, step by the added values: in any order, one each
    olds = np.sort(old.numpy())
    assert olds[0] == 5
    np.testing.assert_array_equal(np.sort(np.diff(np.append(olds, got[0]))), big)
    assert got[6:] == [-(1 << 40) + 1, -(1 << 40)]
    got_u = u.numpy().tolist()
    assert got_u[:8] == [2**64 - 1, 0, 0, (N - 1) << 40, 1 << 40,
                         sum(k << 35 for k in range(N)), 2**64 - N, 9]
    assert 1 <= got_u[8] <= N  # exactly one unit's swap succeeded


@cubepy.cube(launch=True)
def wide_floats(d: Array[f64], old: Array[f64]):
    i = ABSOLUTE_POS
    v = f64(i) - f64(100.0)
    old[i] = cubepy.atomic_add(d, 0, v)
    cubepy.atomic_sub(d, 1, v)
    cubepy.atomic_max(d, 2, v)
    cubepy.atomic_min(d, 3, v)
    cubepy.atomic_max(d, 4, d[8])  # d[8] is NaN: ignored
    cubepy.atomic_exchange(d, 5, f64(2.5))
    cubepy.atomic_store(d, 6, f64(1.0e300))
    old[i] = cubepy.atomic_load(d, 7)


def test_f64_atomics(runtime_client):
    c = runtime_client
    start = np.array([0.5, 0, np.nan, np.nan, 1.25, 0, 0, 3.0e200, np.nan], np.float64)
    if not _wide_runtime(c):
        _wgpu_refuses_64_bit(c, wide_floats, "f64")
        return
    d, old = c.tensor(start), c.zeros(N, f64)
    wide_floats.launch(c, COUNT, DIM, d, old)
    v = np.arange(N, dtype=np.float64) - 100.0
    assert d.numpy().tolist()[:8] == [0.5 + v.sum(), -v.sum(), v.max(), v.min(), 1.25,
                                      2.5, 1.0e300, 3.0e200]
    assert (old.numpy() == 3.0e200).all()


@cubepy.cube(launch=True)
def half_add(h: Array[f16], old: Array[f16]):
    old[ABSOLUTE_POS] = cubepy.atomic_add(h, 0, f16(1.0))
    cubepy.atomic_sub(h, 1, f16(0.5))


def test_f16_atomic_add(runtime_client):
    c = runtime_client
    h, old = c.tensor(np.array([3.0, 200.0], np.float16)), c.zeros(N, f16)
    if not _wide_runtime(c):
        with pytest.raises(CompileError, match=r"WGSL has no atomic_add on f16 "
                                               r"\(buffer 'h'; it takes f32, i32, u32\)"):
            half_add.launch(c, COUNT, DIM, h, old)
        return
    half_add.launch(c, COUNT, DIM, h, old)
    assert h.numpy().tolist() == [3.0 + N, 200.0 - 0.5 * N]
    assert sorted(old.numpy().tolist()) == [3.0 + k for k in range(N)]


@cubepy.cube(launch=True)
def bfloat_add(h: Array[bf16]):
    cubepy.atomic_add(h, 0, bf16(1.0))
    cubepy.atomic_sub(h, 1, bf16(2.0))


@pytest.mark.cuda
def test_bf16_atomic_add_on_cuda():
    if "cuda" not in cubepy.available_runtimes():
        pytest.skip("no CUDA device")
    c = cubepy.client("cuda")
    if bf16 not in c.limits.dtypes:
        pytest.skip("the device has no bf16 arithmetic (sm_80+)")
    h = c.zeros(2, bf16)
    bfloat_add.launch(c, COUNT, DIM, h)
    assert h.numpy().tolist() == [float(N), -2.0 * N]  # small integers: exact in bf16


def test_bf16_atomics_elsewhere_name_the_target():
    with pytest.raises(cubepy.LaunchError, match="cpu device .* does not support bf16"):
        cubepy.client("cpu").zeros(2, bf16)
    with pytest.raises(CompileError, match="WGSL has no bf16"):
        bfloat_add.source("wgsl", cube_dim=DIM)
    with pytest.raises(CompileError, match=r"Metal has no atomic_add on bf16"):
        bfloat_add.source("metal", cube_dim=DIM)


# -- shared memory --------------------------------------------------------------------

@cubepy.cube(launch=True)
def shared_atomics(values: Array[u32], fl: Array[f32], out: Array[u32], fout: Array[f32]):
    counts = SharedMemory(u32, 8)
    ring = SharedMemory(u32, 2)
    best = SharedMemory(f32, 2)
    t = UNIT_POS
    if t < u32(8):
        counts[t] = u32(0)
    if t < u32(2):
        ring[t] = u32(0)
    if t == u32(0):
        best[0] = f32(-1000.0)
        best[1] = f32(1000.0)
    cubepy.sync_cube()
    cubepy.atomic_add(counts, values[ABSOLUTE_POS] % u32(8), u32(1))
    cubepy.atomic_inc(ring, 0, u32(4))
    cubepy.atomic_dec(ring, 1, u32(6))
    cubepy.atomic_max(best, 0, fl[ABSOLUTE_POS])
    cubepy.atomic_min(best, 1, fl[ABSOLUTE_POS])
    cubepy.atomic_store(counts, 7, cubepy.atomic_load(counts, 7))
    cubepy.sync_cube()
    if t < u32(8):
        cubepy.atomic_add(out, t, counts[t])
    if t < u32(2):
        out[u32(8) + cubepy.CUBE_POS * u32(2) + t] = cubepy.atomic_load(ring, t)
        fout[cubepy.CUBE_POS * u32(2) + t] = best[t]


def test_atomics_on_shared_memory(runtime_client):
    c = runtime_client
    rng = np.random.default_rng(4)
    values = rng.integers(0, 1000, N).astype(np.uint32)
    fl = rng.standard_normal(N).astype(np.float32)
    fl[5] = np.nan
    out, fout = c.zeros(8 + 2 * (N // 64), u32), c.zeros(2 * (N // 64), f32)
    shared_atomics.launch(c, COUNT, DIM, c.tensor(values), c.tensor(fl), out, fout)
    got = out.numpy()
    np.testing.assert_array_equal(got[:8], np.bincount(values % 8, minlength=8))
    inc_final = _serial_wrap("inc", 0, 4, 64)[1]
    dec_final = _serial_wrap("dec", 0, 6, 64)[1]
    assert got[8:].tolist() == [inc_final, dec_final] * (N // 64)
    per_cube = fl.reshape(N // 64, 64)
    want = np.stack([np.nanmax(per_cube, axis=1), np.nanmin(per_cube, axis=1)], 1)
    np.testing.assert_array_equal(fout.numpy(), want.ravel())


# -- errors ----------------------------------------------------------------------------

@cubepy.cube(launch=True)
def i64_add(a: Array[i64]):
    cubepy.atomic_add(a, 0, i64(1))


@cubepy.cube(launch=True)
def u64_max(a: Array[u64]):
    cubepy.atomic_max(a, 0, u64(1))


def test_64_bit_atomics_are_a_compile_error_naming_target_and_type():
    with pytest.raises(CompileError, match=r"WGSL has no i64: .* is i64; use i32 instead"):
        i64_add.source("wgsl", cube_dim=DIM)
    with pytest.raises(CompileError,
                       match=r"Metal has no atomic_add on i64 \(buffer 'a'; it takes"):
        i64_add.source("metal", cube_dim=DIM)
    with pytest.raises(CompileError, match=r"Metal has no atomic_max on u64"):
        u64_max.source("metal", cube_dim=DIM)
    assert "atomicAdd((unsigned long long*)&a[0]" in i64_add.source("cuda", cube_dim=DIM)


@pytest.mark.wgpu
def test_launching_a_64_bit_atomic_on_wgpu_names_the_type():
    if "wgpu" not in cubepy.available_runtimes():
        pytest.skip("no wgpu adapter")
    c = cubepy.client("wgpu")
    with pytest.raises(cubepy.LaunchError, match=r"parameter 'a' expects i64 elements, "
                                                 r"got i32"):
        i64_add.launch(c, COUNT, DIM, c.zeros(1, i32))
    with pytest.raises(cubepy.LaunchError, match=r"wgpu device .* does not support i64"):
        c.zeros(1, i64)


@pytest.mark.parametrize("body, message", [
    ("cubepy.atomic_inc(a, 0, i32(3))", r"atomic_inc\(\) needs u32 elements, but 'a' "
                                        r"holds i32"),
    ("cubepy.atomic_and(f, 0, f32(1.0))", r"atomic_and\(\) needs i32 or u32 elements; "
                                          r"i64 or u64 on some targets, but 'f' holds f32"),
    ("cubepy.atomic_max(h, 0, f16(1.0))", r"atomic_max\(\) needs i32 or u32 elements "
                                          r"\(or f32\); i64, u64 or f64 on some targets, "
                                          r"but 'h' holds f16"),
    ("cubepy.atomic_load(a)", r"atomic_load\(\) takes 2 arguments, got 1"),
    ("cubepy.atomic_inc(a, 0)", r"atomic_inc\(\) takes 3 arguments, got 2"),
])
def test_unsupported_atomic_forms_are_compile_errors(tmp_path, body, message):
    import importlib.util
    import sys
    path = tmp_path / f"bad_atomic_{abs(hash(body))}.py"
    path.write_text("import cubepy\nfrom cubepy import Array, f16, f32, i32\n\n"
                    "@cubepy.cube(launch=True)\n"
                    "def k(a: Array[i32], f: Array[f32], h: Array[f16]):\n"
                    f"    {body}\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    with pytest.raises(CompileError, match=message):
        module.k.source("cuda", cube_dim=DIM)


# -- source validation ----------------------------------------------------------------

@cubepy.cube(launch=True)
def portable_forms(a: Array[u32], f: Array[f32], out: Array[u32], fo: Array[f32]):
    shared = SharedMemory(u32, 4)
    fshared = SharedMemory(f32, 2)
    i = ABSOLUTE_POS
    out[i] = cubepy.atomic_inc(a, 0, u32(9)) + cubepy.atomic_dec(a, 1, u32(9))
    cubepy.atomic_store(a, 2, cubepy.atomic_load(a, 3))
    cubepy.atomic_store(f, 0, cubepy.atomic_load(f, 1))
    fo[i] = cubepy.atomic_max(f, 2, f32(1.0)) + cubepy.atomic_min(f, 3, f32(1.0))
    cubepy.atomic_inc(shared, 0, u32(3))
    cubepy.atomic_dec(shared, 1, u32(3))
    cubepy.atomic_store(shared, 2, u32(4))
    cubepy.atomic_max(fshared, 0, f32(2.0))
    cubepy.atomic_store(fshared, 1, f32(2.0))
    cubepy.sync_cube()
    out[i] += cubepy.atomic_load(shared, 2)
    fo[i] += cubepy.atomic_load(fshared, 0) + cubepy.atomic_load(fshared, 1)


@pytest.mark.nvcc
@pytest.mark.clang
@pytest.mark.parametrize("checked", [True, False])
def test_portable_atomic_forms_compile_everywhere(tmp_path, checked):
    sources = validate_sources(portable_forms, tmp_path, cube_dim=(64, 1, 1),
                               checked=checked)
    assert "atomicInc(" in sources["cuda"] and "atomicDec(" in sources["cuda"]
    assert "atomicStore(" in sources["wgsl"] and "array<atomic<u32>, 4>" in sources["wgsl"]
    assert "threadgroup atomic_uint" in sources["metal"]


@cubepy.cube(launch=True)
def cuda_wide_forms(s: Array[i64], u: Array[u64], d: Array[f64], h: Array[f16],
                    b: Array[bf16], out: Array[f64]):
    ws = SharedMemory(i64, 2)
    wd = SharedMemory(f64, 2)
    i = ABSOLUTE_POS
    x = cubepy.atomic_add(s, 0, i64(1)) + cubepy.atomic_sub(s, 1, i64(1))
    x += cubepy.atomic_min(s, 2, i64(-1)) + cubepy.atomic_max(s, 3, i64(1))
    x += cubepy.atomic_and(s, 4, i64(1)) + cubepy.atomic_or(s, 4, i64(1))
    x += cubepy.atomic_xor(s, 4, i64(1)) + cubepy.atomic_exchange(s, 5, i64(1))
    x += cubepy.atomic_compare_exchange(s, 6, i64(0), i64(1)) + cubepy.atomic_load(s, 7)
    cubepy.atomic_store(s, 8, x)
    y = cubepy.atomic_add(u, 0, u64(1)) + cubepy.atomic_sub(u, 1, u64(1))
    y += cubepy.atomic_min(u, 2, u64(1)) + cubepy.atomic_max(u, 3, u64(1))
    y += cubepy.atomic_compare_exchange(u, 4, u64(0), u64(1)) + cubepy.atomic_load(u, 5)
    cubepy.atomic_store(u, 6, y)
    z = cubepy.atomic_add(d, 0, f64(1.0)) + cubepy.atomic_sub(d, 1, f64(1.0))
    z += cubepy.atomic_min(d, 2, f64(1.0)) + cubepy.atomic_max(d, 3, f64(1.0))
    z += cubepy.atomic_exchange(d, 4, f64(1.0)) + cubepy.atomic_load(d, 5)
    cubepy.atomic_store(d, 6, z)
    cubepy.atomic_add(h, 0, f16(1.0))
    cubepy.atomic_sub(h, 1, f16(1.0))
    cubepy.atomic_add(b, 0, bf16(1.0))
    cubepy.atomic_sub(b, 1, bf16(1.0))
    cubepy.atomic_add(ws, 0, i64(1))
    cubepy.atomic_max(wd, 0, f64(1.0))
    cubepy.sync_cube()
    out[i] = f64(cubepy.atomic_load(ws, 0)) + cubepy.atomic_load(wd, 0)


@pytest.mark.nvcc
@pytest.mark.parametrize("checked", [True, False])
def test_cuda_64_bit_and_half_atomics_compile_with_nvcc(tmp_path, checked):
    src = validate_sources(cuda_wide_forms, tmp_path, cube_dim=(64, 1, 1),
                           targets=("cuda",), checked=checked)["cuda"]
    assert "cube_atomic_max_f64" in src and "atomicAdd(&h[0]" in src
    assert "atomicAdd(&b[0]" in src and "atomicCAS((unsigned long long*)" in src


# -- Line buffers: one atomic per element -----------------------------------------------

@cubepy.cube(launch=True)
def line_atomics(acc: Array[cubepy.Line[f32]], top: Array[cubepy.Line[i32]],
                 v: Array[cubepy.Line[f32]], old: Array[cubepy.Line[f32]]):
    i = ABSOLUTE_POS
    old[i] = cubepy.atomic_add(acc, i % u32(2), v[i])
    cubepy.atomic_max(top, 0, i32(i))  # a scalar operand is broadcast to the line


def test_atomics_on_line_buffers_are_elementwise(runtime_client):
    c = runtime_client
    n = 4
    v = (np.arange(N * n, dtype=np.float32) % 97).reshape(N, n)
    acc = c.tensor(np.zeros(2 * n, np.float32)).with_line_size(n)
    top = c.tensor(np.full(n, -5, np.int32)).with_line_size(n)
    old = c.zeros(N * n, f32).with_line_size(n)
    line_atomics.launch(c, COUNT, DIM, acc, top, c.tensor(v.ravel()).with_line_size(n), old)
    want = np.stack([v[0::2].sum(0), v[1::2].sum(0)])
    np.testing.assert_array_equal(acc.numpy().reshape(2, n), want)
    assert top.numpy().tolist() == [N - 1] * n
    got = old.numpy().reshape(N, n)
    for line in (0, 1):  # per element, the sorted old values step by the added values
        for k in range(n):
            olds = np.sort(got[line::2, k])
            np.testing.assert_array_equal(np.sort(np.diff(np.append(olds, want[line, k]))),
                                          np.sort(v[line::2, k]))


@cubepy.cube(launch=True)
def half2_add(h: Array[cubepy.Line[f16]], v: Array[cubepy.Line[f16]]):
    cubepy.atomic_add(h, 0, v[ABSOLUTE_POS])


def test_f16_line_add_is_cudas_half2_add(runtime_client):
    c = runtime_client
    v = np.tile(np.array([1.0, -0.5], np.float16), N)
    if not _wide_runtime(c):
        with pytest.raises(CompileError, match=r"WGSL has no atomic_add on f16"):
            half2_add.source("wgsl", cube_dim=DIM, line_sizes={"h": 2, "v": 2})
        return
    h = c.tensor(np.array([2.0, 300.0], np.float16)).with_line_size(2)
    half2_add.launch(c, COUNT, DIM, h, c.tensor(v).with_line_size(2))
    assert h.numpy().tolist() == [2.0 + N, 300.0 - 0.5 * N]


@pytest.mark.nvcc
def test_f16_line_add_compiles_with_nvcc(tmp_path):
    src = validate_sources(half2_add, tmp_path, targets=("cuda",),
                           line_sizes={"h": 2, "v": 2})["cuda"]
    assert src.count("atomicAdd(&h[") == 2  # element by element


@pytest.mark.nvcc
@pytest.mark.clang
def test_line_atomics_compile_everywhere(tmp_path):
    sources = validate_sources(line_atomics, tmp_path,
                               line_sizes={"acc": 4, "top": 4, "v": 4, "old": 4})
    assert sources["cuda"].count("atomicAdd(&acc[") == 4
    assert sources["metal"].count("atomic_fetch_max_explicit(&top[") == 4


# -- the IR verifier's rules for the new forms ------------------------------------------

def test_verifier_rejects_malformed_load_and_store():
    from cubepy.ir import nodes as ir
    from cubepy.ir.verify import IRVerifyError, verify
    from ir_samples import c, kernel
    x = ir.Param("x", "array", u32)
    r = ir.Var("r", u32)
    cases = {
        "value not allowed": [ir.AtomicOp(op="load", buffer=x.buffer, index=c(0),
                                          value=c(1))],
        "value missing": [ir.AtomicOp(op="inc", buffer=x.buffer, index=c(0))],
        "gives no value": [ir.Declare(var=r), ir.AtomicOp(
            op="store", buffer=x.buffer, index=c(0), value=c(1), result=r)],
    }
    for needle, body in cases.items():
        with pytest.raises(IRVerifyError, match=needle):
            verify(kernel(body, params=(x,)))
