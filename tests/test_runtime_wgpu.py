"""wgpu runtime specifics: lazy batched submission, per-dispatch info slices, staging
reuse, bool and f16 storage, dispatch folding, bind group caching, aliased buffers.

Most tests drive `WgpuClient.compile_wgsl` with small hand-written WGSL that follows the
launch ABI (cubepy/abi.py), so they test the runtime alone; the last ones go through
`@cube` kernels and the WGSL emitter.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

import cubepy
from cubepy.abi import BufferBinding, InfoField, KernelABI
from cubepy.ir.types import bool_, f16, f32, u32
from conftest import needs_wgpu, wgpu_client as _client

pytestmark = needs_wgpu()


@pytest.fixture
def client():
    c = _client()
    c.sync()
    return c


def _abi(buffers, scalars=()):
    """A KernelABI for hand-written WGSL: buffers [(name, dtype, read_only)], then u32
    lengths of each buffer, scalar u32 fields [(name)], then cube_count."""
    bindings = tuple(BufferBinding(n, t, "array", ro, False) for n, t, ro in buffers)
    fields, off, fmt = [], 0, "<"
    for n, _, _ in buffers:
        fields.append(InfoField(f"{n}_buffer_len", "buffer_len", n, u32, 1, off))
        off, fmt = off + 4, fmt + "I"
    for n in scalars:
        fields.append(InfoField(n, "scalar", n, u32, 1, off))
        off, fmt = off + 4, fmt + "I"
    fields.append(InfoField("cube_count", "cube_count", "", u32, 3, off))
    return KernelABI(bindings, tuple(fields), off + 12, fmt + "3I")


def _info_struct(abi):
    members = []
    for f in abi.fields:
        members.append(f"{f.name}: array<u32, 3>" if f.count == 3 else f"{f.name}: u32")
    return "struct Info { " + ", ".join(members) + " }"


# WGSL prelude: the linear (logical) cube index, valid when dispatches are folded.
_LINEAR = """
  let cube = wid.x + wid.y * nwg.x + wid.z * nwg.x * nwg.y;
  if (cube >= info.cube_count[0] * info.cube_count[1] * info.cube_count[2]) { return; }
"""
_ENTRY = ("@compute @workgroup_size({wg})\nfn main(@builtin(workgroup_id) wid: vec3<u32>, "
          "@builtin(num_workgroups) nwg: vec3<u32>, "
          "@builtin(local_invocation_index) lid: u32) {{")


def _kernel(client, abi, decls, body, wg=64, enable=""):
    bindings = "\n".join(
        f"@group(0) @binding({i}) var<storage, {'read' if b.read_only else 'read_write'}> "
        f"{b.name}: array<{decls[b.name]}>;" for i, b in enumerate(abi.buffers))
    src = (f"{enable}\n{_info_struct(abi)}\n{bindings}\n"
           f"@group(0) @binding({abi.info_binding}) var<storage, read> info: Info;\n"
           f"{_ENTRY.format(wg=wg)}{_LINEAR}{body}\n}}\n")
    return client.compile_wgsl(src, abi, label="test")


ADD_ABI = _abi([("x", u32, True), ("y", u32, False)], scalars=("k",))
ADD_BODY = """
  let i = cube * 64u + lid;
  if (i < info.y_buffer_len) { y[i] = y[i] + x[i] * info.k; }
"""


def _add(client):
    return _kernel(client, ADD_ABI, {"x": "u32", "y": "u32"}, ADD_BODY)


def _launch_add(client, exe, x, y, k, cubes):
    info = struct.pack(ADD_ABI.struct_format, x.buffer_len, y.buffer_len, k, cubes, 1, 1)
    client.dispatch(exe, (cubes, 1, 1), (64, 1, 1), [x, y], info)


def test_device_and_limits(client):
    assert client.runtime == "wgpu" and client.target == "wgsl"
    assert " / " in client.device
    lim = client.limits
    assert {f32, u32, bool_} <= lim.dtypes
    assert not {cubepy.f64, cubepy.i64, cubepy.u64, cubepy.bf16} & lim.dtypes
    assert (f16 in lim.dtypes) == ("shader-f16" in client.features)
    m = client._max_groups
    assert lim.max_cube_count == (m * m, m, m)
    assert lim.max_units_per_cube >= 256 and min(lim.max_cube_dim) >= 64


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool", "float16"])
@pytest.mark.parametrize("n", [0, 1, 3, 1001])
def test_roundtrip(client, dtype, n):
    if dtype == "float16" and f16 not in client.limits.dtypes:
        pytest.skip("no shader-f16")
    rng = np.random.default_rng(n)
    data = (rng.random(n) * 100 - 50).astype(dtype)
    t = client.tensor(data)
    assert t.handle.size % 4 == 0 and t.handle.size >= 4
    back = t.numpy()
    assert back.dtype == data.dtype and np.array_equal(back, data)


def test_strided_and_shaped_roundtrip(client):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = client.tensor(data.transpose(2, 0, 1))
    assert t.shape == (4, 2, 3)
    assert np.array_equal(t.numpy(), data.transpose(2, 0, 1))
    z = client.zeros((3, 5), cubepy.i32)
    assert np.array_equal(z.numpy(), np.zeros((3, 5), np.int32))


def test_lazy_submission_many_launches_one_read(client, monkeypatch):
    from cubepy.runtime import wgpu_runtime as wr
    monkeypatch.setattr(wr, "MAX_BATCH", 64)
    monkeypatch.setattr(wr, "BATCH_SECONDS", 1e9)  # the count bound alone
    exe = _add(client)
    n = 1000
    x = client.tensor(np.arange(n, dtype=np.uint32))
    y = client.zeros(n, u32)
    before = client.submits
    launches = 150  # more than one batch, each with its own scalar in the info struct
    for k in range(launches):
        _launch_add(client, exe, x, y, k, -(-n // 64))
        if k < 40:
            assert client.submits == before, "a launch submitted before the batch bound"
    assert client.submits - before == launches // 64
    expected = np.arange(n, dtype=np.uint64) * sum(range(launches))
    assert np.array_equal(y.numpy(), expected.astype(np.uint32))


def test_a_batch_open_too_long_is_submitted_at_its_next_check(client, monkeypatch):
    """A batch older than BATCH_SECONDS is submitted when it next looks at the clock
    (every BATCH_CHECK dispatches), repeated launches included."""
    from cubepy.runtime import wgpu_runtime as wr
    monkeypatch.setattr(wr, "BATCH_SECONDS", 0.0)
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    before = client.submits
    launches = 3 * wr.BATCH_CHECK + 5
    for _ in range(launches):
        _launch_add(client, exe, x, y, 1, 1)  # identical launches: the shortcut
    assert client.submits - before == launches // wr.BATCH_CHECK
    assert np.array_equal(y.numpy(), np.full(64, launches, np.uint32))
    monkeypatch.setattr(wr, "BATCH_SECONDS", 1e9)
    before = client.submits
    for _ in range(launches):
        _launch_add(client, exe, x, y, 1, 1)
    assert client.submits == before  # young batches wait for MAX_BATCH


def test_info_batch_overflow_flushes(client, monkeypatch):
    from cubepy.runtime import wgpu_runtime as wr
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    # Room for only three info structs per batch: later launches must still see theirs.
    monkeypatch.setattr(wr, "INFO_CAPACITY", 3 * client._info_align)
    for k in range(1, 11):
        _launch_add(client, exe, x, y, k, 1)
    assert np.array_equal(y.numpy(), np.full(64, 55, np.uint32))


def test_staging_buffer_is_reused(client):
    small = client.tensor(np.arange(10, dtype=np.float32))
    small.numpy()
    allocs = client.staging_allocations
    for _ in range(5):
        assert np.array_equal(small.numpy(), np.arange(10, dtype=np.float32))
    assert client.staging_allocations == allocs
    size = client._staging_size
    big = client.tensor(np.arange(size // 4 + 100, dtype=np.float32))
    assert np.array_equal(big.numpy(), np.arange(size // 4 + 100, dtype=np.float32))
    assert client.staging_allocations == allocs + 1
    small.numpy()
    assert client.staging_allocations == allocs + 1


def test_bool_tensors_are_u32_on_device(client):
    abi = _abi([("x", bool_, True), ("y", bool_, False)])
    exe = _kernel(client, abi, {"x": "u32", "y": "u32"}, """
  let i = cube * 64u + lid;
  if (i < info.y_buffer_len) { y[i] = select(1u, 0u, x[i] != 0u); }
""")
    data = np.random.default_rng(0).random(100) > 0.5
    x = client.tensor(data)
    y = client.zeros(100, bool_)
    assert x.handle.size == 400  # one u32 per bool
    info = struct.pack(abi.struct_format, 100, 100, 2, 1, 1)
    client.dispatch(exe, (2, 1, 1), (64, 1, 1), [x, y], info)
    out = y.numpy()
    assert out.dtype == np.bool_ and np.array_equal(out, ~data)


def test_dispatch_folding_writes_every_element(client):
    m = client._max_groups
    cubes = m + 4465 if m == 65535 else m + 7  # 70000 on the usual limit
    assert client._grid((cubes, 1, 1)) == (m, 2, 1)
    abi = _abi([("out", u32, False)])
    exe = _kernel(client, abi, {"out": "u32"}, """
  if (cube < info.out_buffer_len) { out[cube] = cube + 1u; }
""", wg=1)
    out = client.zeros(cubes, u32)
    info = struct.pack(abi.struct_format, cubes, cubes, 1, 1)
    client.dispatch(exe, (cubes, 1, 1), (1, 1, 1), [out], info)
    assert np.array_equal(out.numpy(), np.arange(1, cubes + 1, dtype=np.uint32))


def test_grid_folding_shapes(client):
    m = client._max_groups
    assert client._grid((5, 6, 7)) == (5, 6, 7)
    gx, gy, gz = client._grid((m + 1, 3, 2))
    assert gx * gy * gz >= (m + 1) * 6 and max(gx, gy, gz) <= m
    with pytest.raises(cubepy.LaunchError):
        client._grid((m * m, m, 2))


def test_bind_group_cache_hits(client):
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    y2 = client.zeros(64, u32)
    for _ in range(5):
        _launch_add(client, exe, x, y, 1, 1)
    assert exe.bind_group_misses == 1
    _launch_add(client, exe, x, y2, 2, 1)
    _launch_add(client, exe, x, y, 1, 1)
    assert exe.bind_group_misses == 2
    assert np.array_equal(y.numpy(), np.full(64, 6, np.uint32))
    assert np.array_equal(y2.numpy(), np.full(64, 2, np.uint32))


def test_one_buffer_read_only_and_written(client):
    exe = _add(client)
    y = client.tensor(np.arange(64, dtype=np.uint32))
    _launch_add(client, exe, y, y, 2, 1)  # y = y + y * 2
    assert np.array_equal(y.numpy(), np.arange(64, dtype=np.uint32) * 3)
    assert len(exe.alias_variants) == 1
    x = client.tensor(np.ones(64, np.uint32))
    _launch_add(client, exe, x, y, 1, 1)  # the plain pipeline still serves other calls
    assert np.array_equal(y.numpy(), np.arange(64, dtype=np.uint32) * 3 + 1)


def test_sync_waits_and_is_cheap_when_idle(client):
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    _launch_add(client, exe, x, y, 7, 1)
    before = client.submits
    client.sync()
    # The batch; then a device poll (nothing submitted) or else a small mapped read.
    waits = 1 if client._wait_idle is None else 0
    assert client.submits == before + 1 + waits
    client.sync()
    assert client.submits == before + 1 + waits
    assert np.array_equal(y.numpy(), np.full(64, 7, np.uint32))


def test_f16_kernel(client):
    if f16 not in client.limits.dtypes:
        pytest.skip("no shader-f16")
    abi = _abi([("x", f16, True), ("y", f16, False)])
    exe = _kernel(client, abi, {"x": "f16", "y": "f16"}, """
  let i = cube * 64u + lid;
  if (i < info.y_buffer_len) { y[i] = x[i] * 2.0h + 0.5h; }
""", enable="enable f16;")
    data = np.linspace(-4, 4, 77).astype(np.float16)
    x = client.tensor(data)
    y = client.zeros(77, f16)
    info = struct.pack(abi.struct_format, 77, 77, 2, 1, 1)
    client.dispatch(exe, (2, 1, 1), (64, 1, 1), [x, y], info)
    assert np.array_equal(y.numpy(), (data * np.float16(2) + np.float16(0.5)))


def test_oversized_tensor_is_a_launch_error(client):
    with pytest.raises(cubepy.LaunchError, match="limit"):
        client.zeros(client._max_buffer // 4 + 1, f32)


def test_rejected_wgsl_is_a_launch_error(client):
    with pytest.raises(cubepy.LaunchError, match="WGSL"):
        client.compile_wgsl("fn main( {", ADD_ABI, label="broken")


def test_bind_group_cache_does_not_keep_buffers_alive(client):
    import gc
    import weakref
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    _launch_add(client, exe, x, y, 1, 1)
    assert len(exe.bind_groups) == 1
    ref = weakref.ref(y.handle)
    client.sync()
    del y
    gc.collect()
    assert ref() is None and len(exe.bind_groups) == 0
    y = client.zeros(64, u32)  # may reuse the freed id: must get a fresh bind group
    _launch_add(client, exe, x, y, 3, 1)
    assert np.array_equal(y.numpy(), np.full(64, 3, np.uint32))


# -- through @cube kernels and the WGSL emitter ------------------------------------------

from cubepy import (ABSOLUTE_POS, CUBE_POS, CUBE_POS_X, CUBE_POS_Y, Array, Float,  # noqa: E402
                    cube)


@cube(launch=True)
def _axpy(a: Float, x: Array[Float], y: Array[Float]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = a * x[i] + y[i]


@cube(launch=True)
def _cube_ids(out: Array[u32], ys: Array[u32]):
    c = CUBE_POS
    out[c] = CUBE_POS_X + u32(1)
    ys[c] = CUBE_POS_Y


@cube(launch=True)
def _negate(x: Array[cubepy.bool_], out: Array[cubepy.bool_]):
    i = ABSOLUTE_POS
    if i < len(out):
        out[i] = not x[i]


def test_launch_many_then_one_read(client, monkeypatch):
    from cubepy.runtime import wgpu_runtime as wr
    monkeypatch.setattr(wr, "MAX_BATCH", 64)
    monkeypatch.setattr(wr, "BATCH_SECONDS", 1e9)  # a loaded machine: the count alone
    n = 300
    x = client.tensor(np.ones(n, np.float32))
    y = client.zeros(n, f32)
    before = client.submits
    for k in range(100):  # a different scalar each launch, across two batches
        _axpy.launch(client, (5, 1, 1), (64, 1, 1), float(k), x, y)
    assert client.submits - before <= 1
    assert np.array_equal(y.numpy(), np.full(n, sum(range(100)), np.float32))


def test_launch_folded_cube_count_through_emitter(client):
    m = client._max_groups
    cx = m + 10
    out = client.zeros(cx * 2, u32)
    ys = client.zeros(cx * 2, u32)
    _cube_ids.launch_unchecked(client, (cx, 2, 1), (1, 1, 1), out, ys)
    expect_x = np.tile(np.arange(1, cx + 1, dtype=np.uint32), 2)
    expect_y = np.repeat(np.arange(2, dtype=np.uint32), cx)
    assert np.array_equal(out.numpy(), expect_x)
    assert np.array_equal(ys.numpy(), expect_y)


def test_launch_bool_kernel(client):
    data = np.random.default_rng(1).random(77) > 0.3
    x = client.tensor(data)
    out = client.zeros(77, bool_)
    _negate.launch(client, (2, 1, 1), (64, 1, 1), x, out)
    assert np.array_equal(out.numpy(), ~data)


def test_launch_with_one_tensor_twice(client):
    y = client.tensor(np.arange(64, dtype=np.float32))
    _axpy.launch(client, (1, 1, 1), (64, 1, 1), 2.0, y, y)
    assert np.array_equal(y.numpy(), np.arange(64, dtype=np.float32) * 3)


def test_launch_f16(client):
    if f16 not in client.limits.dtypes:
        pytest.skip("no shader-f16")
    x = client.tensor(np.linspace(-2, 2, 50).astype(np.float16))
    y = client.tensor(np.ones(50, np.float16))
    _axpy.launch(client, (1, 1, 1), (64, 1, 1), np.float16(0.5), x, y)
    want = np.float16(0.5) * np.linspace(-2, 2, 50).astype(np.float16) + np.float16(1)
    assert np.allclose(y.numpy().astype(np.float32), want.astype(np.float32), atol=1e-3)


def test_launch_rejects_f64_on_wgpu(client):
    with pytest.raises(cubepy.LaunchError, match="f64"):
        client.tensor(np.ones(4, np.float64))


def test_client_recovers_after_a_failed_batch(client):
    """A dispatch the device rejects at submit time must not wedge later work."""
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    # Bypass the aliasing variant on purpose: read-only + writable binding of one buffer.
    info = struct.pack(ADD_ABI.struct_format, 64, 64, 1, 1, 1, 1)
    bg = client._bind_group(exe, (id(y.handle), id(y.handle) + 1), (y.handle, y.handle))
    client._pass = None
    client.dispatch(exe, (1, 1, 1), (64, 1, 1), [x, y], info)
    client._pass.set_bind_group(0, bg, (0,))
    client._pass.dispatch_workgroups(1)
    with pytest.raises(Exception):
        client.sync()
    _launch_add(client, exe, x, y, 5, 1)
    assert np.array_equal(y.numpy()[:4], np.full(4, 5, np.uint32))


def test_repeated_identical_launches_share_one_info_slice(client):
    exe = _add(client)
    x = client.tensor(np.ones(64, np.uint32))
    y = client.zeros(64, u32)
    y2 = client.zeros(64, u32)
    for _ in range(10):
        _launch_add(client, exe, x, y, 2, 1)
    assert client._info_used == client._info_align  # one slice for ten launches
    _launch_add(client, exe, x, y2, 2, 1)  # other buffers: a new binding
    _launch_add(client, exe, x, y, 3, 1)  # other info: a new slice
    assert client._info_used == 3 * client._info_align
    assert np.array_equal(y.numpy(), np.full(64, 23, np.uint32))
    assert np.array_equal(y2.numpy(), np.full(64, 2, np.uint32))


def test_missing_device_feature_is_a_launch_error(client, monkeypatch):
    monkeypatch.setattr(client, "features", ())
    # naga wants no `enable subgroups`: a subgroup built-in is what needs the feature
    src = "@compute @workgroup_size(1) fn main() { let s = subgroupAdd(1u); }\n"
    with pytest.raises(cubepy.LaunchError, match="plane operations"):
        client.compile_wgsl(src, ADD_ABI, label="planes")


def test_stated_features_replace_the_text_scan(client, monkeypatch):
    """compile_wgsl checks the features it is told (a Compiled record's), and reads the
    text only for hand-written WGSL that states none."""
    monkeypatch.setattr(client, "features", ())
    src = "@compute @workgroup_size(1) fn main() { let s = subgroupAdd(1u); }\n"
    with pytest.raises(cubepy.LaunchError, match="f16"):
        client.compile_wgsl("@compute @workgroup_size(1) fn main() {}\n", ADD_ABI,
                            label="stated", features=frozenset({"f16"}))
    with pytest.raises(cubepy.LaunchError, match="plane operations"):
        client.compile_wgsl(src, ADD_ABI, label="scanned")


def test_generated_kernels_alias_by_re_rendering(client):
    """A generated kernel's aliased variant is its skeleton rendered again with the
    binding read_write; hand-written WGSL has no such hook."""
    from cubepy import ABSOLUTE_POS, Array, cube

    @cube(launch=True)
    def add_twice(x: Array[u32], y: Array[u32]):
        i = ABSOLUTE_POS
        if i < len(y):
            y[i] = y[i] + x[i] * 2

    y = client.tensor(np.arange(64, dtype=np.uint32))
    add_twice.launch(client, 1, 64, y, y)
    np.testing.assert_array_equal(y.numpy(), np.arange(64, dtype=np.uint32) * 3)
    (entry,) = add_twice._compiled.values()
    exe = entry.executables[client]
    assert exe.render is not None and "subgroups" not in exe.features
    (variant,) = exe.alias_variants.values()
    assert variant.source == entry.artefact.render(frozenset({0}))
    assert "@binding(0) var<storage, read_write>" in variant.source
    assert _add(client).render is None
