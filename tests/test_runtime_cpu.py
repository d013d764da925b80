"""cpu runtime specifics, on hand-built IR (independent of the frontend): semantics of
docs/LANGUAGE.md, masks for divergent control flow, batching, atomics, builtins."""
from __future__ import annotations

import math

import numpy as np
import pytest

import cubepy
from cubepy.abi import compute_abi, pack_info
from cubepy.ir import nodes as n
from cubepy.ir.types import bool_, bf16, f16, f32, f64, i32, i64, u32, u64
from cubepy.runtime import cpu as cpu_mod
from cubepy.runtime.cpu import CpuClient
from cubepy.runtime.cpu_atomics import atomic


# ----------------------------------------------------------------------------- IR helpers

def c(v, t=u32):
    return n.Const(ty=t, value=v)


def ld(v: n.Var):
    return n.Load(ty=v.ty, var=v)


def b(op, x, y):
    return n.Binary(ty=x.ty, op=op, lhs=x, rhs=y)


def cmp(op, x, y):
    return n.Compare(ty=bool_, op=op, lhs=x, rhs=y)


def bi(name):
    return n.Builtin(ty=u32, name=name)


def buf(name, t):
    return n.BufferRef(name, t, "global")


def idx(bref, i):
    return n.Index(ty=bref.elem, buffer=bref, index=i)


def length(bref):
    return n.Meta(ty=u32, kind="len", buffer=bref)


def kernel(params, body, cube_dim=(64, 1, 1), shared=()):
    ps = tuple(n.Param(name, kind, t) for name, kind, t in params)
    return n.Kernel("k", ps, tuple(shared), n.Block(tuple(body)), cube_dim)


def run(client, k, count, args: dict, checked=True):
    """Compiles and dispatches `k`; args maps parameter names to tensors or scalars."""
    abi = compute_abi(k, checked)
    exe = client.compile(k, abi, checked)
    tensors = {name: a for name, a in args.items() if isinstance(a, cubepy.runtime.DeviceTensor)}
    scalars = {name: a for name, a in args.items() if name not in tensors}
    info = pack_info(abi, tensors, scalars, count)
    client.dispatch(exe, count, k.cube_dim, [tensors[x.name] for x in abi.buffers], info)
    return exe


def guarded(i_var, bref, stmts):
    """`i = ABSOLUTE_POS; if i < len(bref): stmts`."""
    return [n.Assign(var=i_var, value=bi("absolute_pos"), declare=True),
            n.If(cond=cmp("lt", ld(i_var), length(bref)), then=n.Block(tuple(stmts)))]


@pytest.fixture
def cpu():
    return CpuClient()


I = n.Var("i", u32)


def binary_kernel(op, t, rt=None):
    """out[i] = a[i] <op> b[i] for arrays of type t (rhs of type rt)."""
    rt = rt or t
    a, bb, out = buf("a", t), buf("b", rt), buf("out", t)
    body = guarded(I, a, [n.Store(buffer=out, index=ld(I),
                                  value=n.Binary(ty=t, op=op, lhs=idx(a, ld(I)),
                                                 rhs=idx(bb, ld(I))))])
    return kernel([("a", "array", t), ("b", "array", rt), ("out", "array", t)], body)


def run_binary(cpu, op, t, a, bvals, rt=None):
    k = binary_kernel(op, t, rt)
    ta, tb = cpu.tensor(a), cpu.tensor(bvals)
    out = cpu.zeros(len(a), t)
    run(cpu, k, (-(-len(a) // 64), 1, 1), {"a": ta, "b": tb, "out": out})
    return out.numpy()


# ----------------------------------------------------------------------------- client

def test_client_basics(cpu):
    assert cpu.runtime == "cpu" and cpu.target == "cpu"
    assert cpu.device.startswith("numpy on ")
    assert bf16 not in cpu.limits.dtypes and f16 in cpu.limits.dtypes
    with pytest.raises(cubepy.LaunchError, match="bf16"):
        cpu.zeros(4, bf16)
    t = cpu.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    got = t.numpy()
    got[0, 0] = 99  # a copy: the device buffer is untouched
    assert t.numpy()[0, 0] == 0 and t.shape == (2, 3) and t.strides == (3, 1)
    cpu.sync()


# ----------------------------------------------------------------------------- integers

def _py_floordiv(x, y, bits, signed):
    if y == 0:
        return 0
    q = x // y
    lo, hi = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
    return q if lo <= q <= hi else lo  # only MIN // -1 overflows: wraps to MIN


def _py_mod(x, y):
    return x if y == 0 else x % y


@pytest.mark.parametrize("t", [i32, i64, u32, u64])
def test_int_floordiv_mod(cpu, t):
    info = np.iinfo(t.numpy)
    vals = [0, 1, -1, 7, -7, 3, -3, info.min, info.max, info.min + 1, 2, -2]
    vals = [v for v in vals if info.min <= v <= info.max]
    pairs = [(x, y) for x in vals for y in vals]
    a = np.array([p[0] for p in pairs], t.numpy)
    bv = np.array([p[1] for p in pairs], t.numpy)
    q = run_binary(cpu, "floordiv", t, a, bv)
    r = run_binary(cpu, "mod", t, a, bv)
    signed = t.kind == "int"
    for (x, y), qq, rr in zip(pairs, q, r):
        assert int(qq) == _py_floordiv(x, y, t.bits, signed), (x, y)
        assert int(rr) == _py_mod(x, y), (x, y)


def test_wrapping_and_shifts(cpu):
    a = np.array([2**31 - 1, -2**31, 5, -8, 1, 1], np.int32)
    bv = np.array([1, 1, 33, 2, 31, -1], np.int32)
    assert list(run_binary(cpu, "add", i32, a, bv)[:2]) == [-2**31, -2**31 + 1]
    shl = run_binary(cpu, "shl", i32, a, bv)
    assert shl[2] == 5 << 1 and shl[4] == -2**31 and shl[5] == -2**31  # amount mod 32
    shr = run_binary(cpu, "shr", i32, a, bv)
    assert shr[3] == -2 and shr[2] == 2
    # a u32 value shifted by an i32 amount
    su = run_binary(cpu, "shl", u32, np.array([1, 3], np.uint32), np.array([32, 35], np.int32),
                    rt=i32)
    assert list(su) == [1, 24]


def test_float_floordiv_mod_and_nan_minmax(cpu):
    a = np.array([7.5, -7.5, 7.5, -7.5, np.nan, 1.0], np.float32)
    bv = np.array([2.0, 2.0, -2.0, -2.0, 1.0, np.nan], np.float32)
    q = run_binary(cpu, "floordiv", f32, a, bv)
    r = run_binary(cpu, "mod", f32, a, bv)
    np.testing.assert_array_equal(q[:4], np.floor(a[:4] / bv[:4]))
    np.testing.assert_array_equal(r[:4], a[:4] - np.floor(a[:4] / bv[:4]) * bv[:4])
    assert list(run_binary(cpu, "max", f32, a, bv)[4:]) == [1.0, 1.0]
    assert list(run_binary(cpu, "min", f32, a, bv)[4:]) == [1.0, 1.0]


def cast_kernel(src, dst):
    x, out = buf("x", src), buf("out", dst)
    body = guarded(I, x, [n.Store(buffer=out, index=ld(I),
                                  value=n.Cast(ty=dst, operand=idx(x, ld(I))))])
    return kernel([("x", "array", src), ("out", "array", dst)], body)


@pytest.mark.parametrize("dst", [i32, u32, i64, u64])
def test_float_to_int_saturates(cpu, dst):
    info = np.iinfo(dst.numpy)
    vals = [1.9, -1.9, np.nan, np.inf, -np.inf, 3e9, -3e9, 1e19, 1e20, -1e20, 0.5]
    x = cpu.tensor(np.array(vals, np.float64))
    out = cpu.zeros(len(vals), dst)
    run(cpu, cast_kernel(f64, dst), (1, 1, 1), {"x": x, "out": out})
    expect = []
    for v in vals:
        if math.isnan(v):
            expect.append(0)
        else:
            t = v if math.isinf(v) else math.trunc(v)
            expect.append(int(min(max(t, info.min), info.max)))
    assert [int(v) for v in out.numpy()] == expect


def test_int_casts_wrap_and_bool(cpu):
    x = cpu.tensor(np.array([-1, 2**31 - 1, 0, 5], np.int32))
    out = cpu.zeros(4, u32)
    run(cpu, cast_kernel(i32, u32), (1, 1, 1), {"x": x, "out": out})
    assert list(out.numpy()) == [2**32 - 1, 2**31 - 1, 0, 5]
    outb = cpu.zeros(4, bool_)
    run(cpu, cast_kernel(i32, bool_), (1, 1, 1), {"x": x, "out": outb})
    assert list(outb.numpy()) == [True, True, False, True]


def test_math_round_half_even_and_f16(cpu):
    x, out = buf("x", f32), buf("out", f32)
    body = guarded(I, x, [n.Store(buffer=out, index=ld(I),
                                  value=n.Call(ty=f32, func="round", args=(idx(x, ld(I)),)))])
    k = kernel([("x", "array", f32), ("out", "array", f32)], body)
    vals = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4], np.float32)
    out_t = cpu.zeros(6, f32)
    run(cpu, k, (1, 1, 1), {"x": cpu.tensor(vals), "out": out_t})
    assert list(out_t.numpy()) == [0.0, 2.0, 2.0, -0.0, -2.0, 2.0]
    # f16: every operation rounds to f16
    a = np.array([0.1, 2048, 1e4], np.float16)
    got = run_binary(cpu, "add", f16, a, np.array([0.2, 1, 1e4], np.float16))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, a + np.array([0.2, 1, 1e4], np.float16))


# ----------------------------------------------------------------------------- control flow

def test_divergent_loops_break_continue_terminate(cpu):
    """Per lane: total over j in 1.. while True with break at j > x, continue on even j,
    terminate when x == 3; out keeps 77 for terminated lanes."""
    x, out = buf("x", i32), buf("out", i32)
    xi, total, j = n.Var("xi", i32), n.Var("total", i32), n.Var("j", i32)
    body = guarded(I, x, [
        n.Assign(var=xi, value=idx(x, ld(I)), declare=True),
        n.Declare(var=total),
        n.Assign(var=j, value=c(0, i32), declare=True),
        n.While(cond=c(True, bool_), body=n.Block((
            n.Assign(var=j, value=b("add", ld(j), c(1, i32))),
            n.If(cond=cmp("gt", ld(j), ld(xi)), then=n.Block((n.Break(),))),
            n.If(cond=cmp("eq", b("mod", ld(j), c(2, i32)), c(0, i32)),
                 then=n.Block((n.Continue(),))),
            n.If(cond=cmp("eq", ld(xi), c(3, i32)), then=n.Block((n.Terminate(),))),
            n.Assign(var=total, value=b("add", ld(total), ld(j))),
        ))),
        n.Store(buffer=out, index=ld(I), value=ld(total)),
    ])
    k = kernel([("x", "array", i32), ("out", "array", i32)], body)
    xs = np.array([0, 1, 2, 3, 4, 5, 9, 10, -1, 3, 7], np.int32)
    out_t = cpu.tensor(np.full(len(xs), 77, np.int32))
    run(cpu, k, (1, 1, 1), {"x": cpu.tensor(xs), "out": out_t})
    expect = [77 if v == 3 else sum(j for j in range(1, v + 1) if j % 2) for v in xs]
    assert list(out_t.numpy()) == expect


def test_for_with_lane_bounds_and_negative_step(cpu):
    x, out = buf("x", i32), buf("out", i32)
    acc, k_ = n.Var("acc", i32), n.Var("k", i32)
    body = guarded(I, x, [
        n.Assign(var=acc, value=c(0, i32), declare=True),
        n.For(var=k_, start=idx(x, ld(I)), stop=c(-1, i32), step=c(-2, i32), body=n.Block((
            n.Assign(var=acc, value=b("add", b("mul", ld(acc), c(3, i32)), ld(k_))),))),
        n.Store(buffer=out, index=ld(I), value=ld(acc)),
    ])
    kern = kernel([("x", "array", i32), ("out", "array", i32)], body)
    xs = np.array([-5, 0, 1, 4, 7, 12], np.int32)
    out_t = cpu.zeros(len(xs), i32)
    run(cpu, kern, (1, 1, 1), {"x": cpu.tensor(xs), "out": out_t})
    expect = []
    for v in xs:
        a = 0
        for kk in range(v, -1, -2):
            a = a * 3 + kk
        expect.append(a)
    assert list(out_t.numpy()) == expect


def test_builtins_on_3d_grid_and_batches(cpu, monkeypatch):
    """Every position builtin matches its definition; small batches give the same."""
    names = ["absolute_pos", "unit_pos", "cube_pos", "absolute_pos_x", "absolute_pos_y",
             "absolute_pos_z", "unit_pos_x", "unit_pos_y", "unit_pos_z", "cube_pos_x",
             "cube_pos_y", "cube_pos_z", "cube_count", "cube_dim_y"]
    outs = [buf(f"o{j}", u32) for j in range(len(names))]
    body = [n.Store(buffer=o, index=bi("absolute_pos"), value=bi(nm))
            for o, nm in zip(outs, names)]
    dim, count = (4, 2, 3), (3, 2, 2)
    k = kernel([(o.name, "array", u32) for o in outs], body, cube_dim=dim)
    total = np.prod(dim) * np.prod(count)
    results = []
    for max_lanes in (1 << 18, 24):
        monkeypatch.setattr(cpu_mod, "MAX_LANES", max_lanes)
        ts = {o.name: cpu.zeros(total, u32) for o in outs}
        run(cpu, k, count, ts)
        results.append({nm: ts[o.name].numpy() for o, nm in zip(outs, names)})
    assert all(np.array_equal(results[0][nm], results[1][nm]) for nm in names)
    r = results[0]
    for ux in range(dim[0]):
        for uy in range(dim[1]):
            for uz in range(dim[2]):
                for cx in range(count[0]):
                    for cy in range(count[1]):
                        for cz in range(count[2]):
                            ax, ay, az = cx * 4 + ux, cy * 2 + uy, cz * 3 + uz
                            a = ax + ay * 12 + az * 12 * 4
                            assert r["absolute_pos"][a] == a
                            assert r["unit_pos"][a] == ux + uy * 4 + uz * 8
                            assert r["cube_pos"][a] == cx + cy * 3 + cz * 6
                            assert (r["absolute_pos_x"][a], r["absolute_pos_y"][a],
                                    r["absolute_pos_z"][a]) == (ax, ay, az)
                            assert (r["unit_pos_x"][a], r["unit_pos_y"][a],
                                    r["unit_pos_z"][a]) == (ux, uy, uz)
                            assert (r["cube_pos_x"][a], r["cube_pos_y"][a],
                                    r["cube_pos_z"][a]) == (cx, cy, cz)
    assert set(r["cube_count"]) == {12} and set(r["cube_dim_y"]) == {2}


def test_shared_memory_per_cube_across_batches(cpu, monkeypatch):
    """Each cube reverses its chunk through shared memory; batches of 3 cubes."""
    monkeypatch.setattr(cpu_mod, "MAX_LANES", 3 * 8)
    x, out = buf("x", f32), buf("out", f32)
    sh = n.BufferRef("tile", f32, "shared")
    u = n.Var("u", u32)
    body = [
        n.Assign(var=u, value=bi("unit_pos"), declare=True),
        n.Store(buffer=sh, index=ld(u), value=idx(x, bi("absolute_pos"))),
        n.Barrier(),
        n.Store(buffer=out, index=bi("absolute_pos"),
                value=idx(sh, b("sub", c(7), ld(u)))),
        n.Store(buffer=sh, index=c(100), value=c(1.0, f32)),  # out of range: dropped
    ]
    k = kernel([("x", "array", f32), ("out", "array", f32)], body, cube_dim=(8, 1, 1),
               shared=[n.SharedDecl(sh, 8)])
    xs = np.arange(56, dtype=np.float32)
    out_t = cpu.zeros(56, f32)
    run(cpu, k, (7, 1, 1), {"x": cpu.tensor(xs), "out": out_t})
    np.testing.assert_array_equal(out_t.numpy(), xs.reshape(7, 8)[:, ::-1].reshape(-1))


def test_unchecked_is_bounds_checked_on_cpu(cpu):
    x, out = buf("x", f32), buf("out", f32)
    body = [n.Store(buffer=out, index=b("add", bi("absolute_pos"), c(2)),
                    value=b("add", idx(x, b("add", bi("absolute_pos"), c(3))), c(1.0, f32)))]
    k = kernel([("x", "array", f32), ("out", "array", f32)], body, cube_dim=(8, 1, 1))
    out_t = cpu.zeros(8, f32)
    run(cpu, k, (1, 1, 1), {"x": cpu.tensor(np.arange(8, dtype=np.float32)), "out": out_t},
        checked=False)
    assert list(out_t.numpy()) == [0, 0, 4, 5, 6, 7, 8, 1]


def test_scalar_params(cpu):
    x, out = buf("x", f32), buf("out", f32)
    a, flag = n.Var("a", f32), n.Var("flag", bool_)
    body = guarded(I, x, [n.If(
        cond=ld(flag),
        then=n.Block((n.Store(buffer=out, index=ld(I), value=b("mul", ld(a), idx(x, ld(I)))),)),
        orelse=n.Block((n.Assign(var=a, value=c(-1.0, f32)),
                        n.Store(buffer=out, index=ld(I), value=ld(a)))))])
    k = kernel([("a", "scalar", f32), ("flag", "scalar", bool_), ("x", "array", f32),
                ("out", "array", f32)], body)
    xs = cpu.tensor(np.arange(5, dtype=np.float32))
    out_t = cpu.zeros(5, f32)
    run(cpu, k, (1, 1, 1), {"a": 2.5, "flag": True, "x": xs, "out": out_t})
    assert list(out_t.numpy()) == [0, 2.5, 5, 7.5, 10]
    run(cpu, k, (1, 1, 1), {"a": 2.5, "flag": False, "x": xs, "out": out_t})
    assert list(out_t.numpy()) == [-1] * 5


# ----------------------------------------------------------------------------- atomics

def test_atomic_counter_returns_distinct_old_values(cpu):
    cnt, out = buf("cnt", u32), buf("out", u32)
    old = n.Var("old", u32)
    body = [n.Declare(var=old),
            n.AtomicOp(op="add", buffer=cnt, index=c(0), value=c(1), result=old),
            n.Store(buffer=out, index=bi("absolute_pos"), value=ld(old))]
    k = kernel([("cnt", "array", u32), ("out", "array", u32)], body, cube_dim=(256, 1, 1))
    c_t, out_t = cpu.zeros(1, u32), cpu.zeros(256 * 40, u32)
    run(cpu, k, (40, 1, 1), {"cnt": c_t, "out": out_t})
    assert c_t.numpy()[0] == 256 * 40
    assert sorted(out_t.numpy()) == list(range(256 * 40))


@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "and", "or", "xor", "exchange"])
@pytest.mark.parametrize("lanes,slots", [(50, 7), (5000, 3), (200, 200)])
def test_atomic_helper_matches_serial_order(op, lanes, slots):
    rng = np.random.default_rng(lanes + slots)
    buf0 = rng.integers(0, 1000, slots).astype(np.int32)
    idxs = rng.integers(0, slots + 2, lanes).astype(np.uint32)  # some out of range
    vals = rng.integers(-50, 1000, lanes).astype(np.int32)
    mask = rng.random(lanes) < 0.8
    got_buf = buf0.copy()
    got = atomic(op, got_buf, idxs, vals, None, mask, True, lanes)
    ref_buf, ref = buf0.copy(), np.zeros(lanes, np.int32)
    f = {"add": lambda a, v: a + v, "sub": lambda a, v: a - v, "min": min, "max": max,
         "and": lambda a, v: a & v, "or": lambda a, v: a | v, "xor": lambda a, v: a ^ v,
         "exchange": lambda a, v: v}[op]
    for lane in range(lanes):
        if mask[lane] and idxs[lane] < slots:
            ref[lane] = ref_buf[idxs[lane]]
            ref_buf[idxs[lane]] = f(int(ref_buf[idxs[lane]]), int(vals[lane]))
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got_buf, ref_buf)
    no_old = buf0.copy()
    assert atomic(op, no_old, idxs, vals, None, mask, False, lanes) is None
    np.testing.assert_array_equal(no_old, ref_buf)


@pytest.mark.parametrize("lanes", [40, 3000])
def test_atomic_float_add_and_cas_serial(lanes):
    rng = np.random.default_rng(lanes)
    vals = rng.random(lanes).astype(np.float32) * 1000
    fb = np.zeros(2, np.float32)
    old = atomic("add", fb, np.zeros(lanes, np.uint32), vals, None, None, True, lanes)
    acc = np.float32(0)
    for lane in range(lanes):  # exactly the f32 serial sums
        assert old[lane] == acc
        acc = np.float32(acc + vals[lane])
    assert fb[0] == acc
    cas_buf = np.array([0], np.int32)
    expected = rng.integers(0, 4, lanes).astype(np.int32)
    new = rng.integers(0, 4, lanes).astype(np.int32)
    old = atomic("compare_exchange", cas_buf, np.uint32(0), new, expected, None, True, lanes)
    cur = 0
    for lane in range(lanes):
        assert old[lane] == cur
        if cur == expected[lane]:
            cur = int(new[lane])
    assert cas_buf[0] == cur


def test_atomic_under_divergent_mask_in_kernel(cpu):
    """Only even lanes add; odd lanes keep their previous result variable."""
    cnt, out = buf("cnt", i32), buf("out", i32)
    old = n.Var("old", i32)
    body = [n.Assign(var=old, value=c(-5, i32), declare=True),
            n.If(cond=cmp("eq", b("mod", bi("unit_pos"), c(2)), c(0)), then=n.Block((
                n.AtomicOp(op="add", buffer=cnt, index=c(0), value=c(2, i32), result=old),))),
            n.Store(buffer=out, index=bi("unit_pos"), value=ld(old))]
    k = kernel([("cnt", "array", i32), ("out", "array", i32)], body, cube_dim=(16, 1, 1))
    c_t, out_t = cpu.zeros(1, i32), cpu.zeros(16, i32)
    run(cpu, k, (1, 1, 1), {"cnt": c_t, "out": out_t})
    got = out_t.numpy()
    assert c_t.numpy()[0] == 16
    assert list(got[1::2]) == [-5] * 8 and sorted(got[0::2]) == list(range(0, 16, 2))


# ----------------------------------------------------------------------------- public path

def test_seed_example_is_fast_including_first_compile():
    """The seed example: cube count (2, 2, 32), cube dim (16, 16, 1), on a fresh kernel
    object (nothing cached): frontend, passes, cpu compile and run."""
    import time

    import corpus
    from cubepy import CubeCount, CubeDim
    fresh = cubepy.cube(launch=True)(corpus.fused_matmul_add_relu_kernel.fn)
    client = cubepy.client("cpu")
    rng = np.random.default_rng(0)
    lhs = rng.random((1, 32, 32), dtype=np.float32)
    rhs = rng.random((32, 32, 32), dtype=np.float32)
    bias = rng.random((32, 32, 32), dtype=np.float32) - 8
    args = [client.tensor(lhs), client.tensor(rhs), client.tensor(bias),
            client.empty((32, 32, 32), f32)]
    start = time.perf_counter()
    fresh.launch(client, CubeCount(2, 2, 32), CubeDim(16, 16, 1), *args)
    result = args[3].numpy()
    first = time.perf_counter() - start
    start = time.perf_counter()
    fresh.launch(client, CubeCount(2, 2, 32), CubeDim(16, 16, 1), *args)
    warm = time.perf_counter() - start
    np.testing.assert_allclose(result, np.maximum(lhs @ rhs + bias, 0), rtol=1e-5, atol=1e-5)
    assert first < 1.0, f"first launch took {first:.3f} s"
    assert warm < 0.25, f"warm launch took {warm:.3f} s"


def test_compile_is_cached_and_source_readable(cpu):
    k = binary_kernel("add", f32)
    abi = compute_abi(k, True)
    exe = cpu.compile(k, abi, True)
    assert cpu.compile(k, abi, True) is exe
    assert "def kernel_fn" in exe.source and "_store(b_out" in exe.source


def test_large_grid_runs_in_batches(monkeypatch):
    import corpus
    from cubepy import CubeCount, CubeDim
    monkeypatch.setattr(cpu_mod, "MAX_LANES", 1 << 12)
    client = cubepy.client("cpu")
    n_elems = (1 << 14) + 5
    x = np.arange(n_elems, dtype=np.float32)
    y = client.tensor(np.ones(n_elems, np.float32))
    corpus.axpy.launch(client, CubeCount(-(-n_elems // 256)), CubeDim(256), 2.0,
                       client.tensor(x), y)
    np.testing.assert_array_equal(y.numpy(), 2 * x + 1)


@pytest.mark.parametrize("step", [3, -2, 0])
def test_for_with_runtime_step(cpu, step):
    """range(start, stop, step) with a runtime step: its sign picks the direction; a zero
    step runs no iteration."""
    out = buf("out", i32)
    st, acc, k_ = n.Var("st", i32), n.Var("acc", i32), n.Var("k", i32)
    body = [n.Assign(var=acc, value=c(0, i32), declare=True),
            n.For(var=k_, start=c(5, i32), stop=b("mul", ld(st), c(4, i32)), step=ld(st),
                  body=n.Block((n.Assign(var=acc, value=b("add", b("mul", ld(acc), c(10, i32)),
                                                              ld(k_))),))),
            n.Store(buffer=out, index=bi("unit_pos"), value=ld(acc))]
    kern = kernel([("st", "scalar", i32), ("out", "array", i32)], body, cube_dim=(2, 1, 1))
    out_t = cpu.zeros(2, i32)
    run(cpu, kern, (1, 1, 1), {"st": step, "out": out_t})
    expect = 0
    for kk in (range(5, step * 4, step) if step else ()):
        expect = expect * 10 + kk
    assert out_t.numpy().tolist() == [expect, expect]
    assert (expect != 0) == (step != 0)


def test_deep_expression_and_comment_only_block(cpu):
    """A 400-deep expression tree (beyond Python's parser nesting) and a branch holding
    only a comment still compile; the deep loop condition is re-evaluated every turn."""
    out = buf("out", i32)
    j = n.Var("j", i32)
    deep = ld(j)
    for _ in range(400):
        deep = b("add", deep, c(1, i32))
    body = [n.Assign(var=j, value=c(0, i32), declare=True),
            n.While(cond=cmp("lt", deep, c(410, i32)), body=n.Block((
                n.Assign(var=j, value=b("add", ld(j), c(3, i32))),))),
            n.If(cond=cmp("eq", ld(j), c(0, i32)), then=n.Block((n.Comment(text="nothing"),))),
            n.Store(buffer=out, index=c(0), value=deep)]
    k = kernel([("out", "array", i32)], body, cube_dim=(1, 1, 1))
    out_t = cpu.zeros(1, i32)
    run(cpu, k, (1, 1, 1), {"out": out_t})
    assert out_t.numpy()[0] == 12 + 400  # j stops at the first multiple of 3 >= 10


def test_shared_memory_atomics(cpu):
    """A per-cube counter in shared memory: each unit gets a distinct old value."""
    out, cnt = buf("out", u32), buf("cnt", u32)
    sh = n.BufferRef("counter", u32, "shared")
    old = n.Var("old", u32)
    body = [n.If(cond=cmp("eq", bi("unit_pos"), c(0)),
                 then=n.Block((n.Store(buffer=sh, index=c(0), value=c(0)),))),
            n.Barrier(),
            n.Declare(var=old),
            n.AtomicOp(op="add", buffer=sh, index=c(0), value=c(1), result=old),
            n.Store(buffer=out, index=bi("absolute_pos"), value=ld(old)),
            n.Barrier(),
            n.If(cond=cmp("eq", bi("unit_pos"), c(0)), then=n.Block((
                n.Store(buffer=cnt, index=bi("cube_pos"), value=idx(sh, c(0))),)))]
    k = kernel([("out", "array", u32), ("cnt", "array", u32)], body, cube_dim=(32, 1, 1),
               shared=[n.SharedDecl(sh, 1)])
    out_t, cnt_t = cpu.zeros(32 * 5, u32), cpu.zeros(5, u32)
    run(cpu, k, (5, 1, 1), {"out": out_t, "cnt": cnt_t})
    assert cnt_t.numpy().tolist() == [32] * 5
    for cube_vals in out_t.numpy().reshape(5, 32):
        assert sorted(cube_vals.tolist()) == list(range(32))
