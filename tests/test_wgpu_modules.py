"""naga's runtime checks in wgpu shader modules (cubepy/runtime/wgpu_modules.py):
generated kernels, checked or not, keep loop bounding only (a checked launch guards
every access itself); hand-written WGSL keeps bounds checks too."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, SharedMemory, Tensor, UNIT_POS, \
    cube, f32, sync_cube, u32
from cubepy.abi import BufferBinding, KernelABI
from cubepy.runtime import wgpu_modules
from cubepy.runtime.wgpu_modules import ALL_CHECKS, GENERATED_CHECKS, ShaderChecks
from conftest import needs_wgpu, wgpu_client as _client

pytestmark = needs_wgpu()

# Reads workgroup slot i + 100 of 64: out of range, clamped to slot 63 by naga's bounds
# checks (a defined result only while they are on).
_CLAMPED_READ = """
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
var<workgroup> s: array<f32, 64>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
  s[i] = f32(i);
  workgroupBarrier();
  a[i] = s[(i * 7u) % 64u] + s[i + 100u];
}"""


def _run_raw(device, module) -> np.ndarray:
    import wgpu
    buf = device.create_buffer(size=256, usage=wgpu.BufferUsage.STORAGE
                               | wgpu.BufferUsage.COPY_SRC)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"})
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": buf}}])
    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(1)
    cpass.end()
    device.queue.submit([encoder.finish()])
    return np.frombuffer(device.queue.read_buffer(buf), np.float32)


@cube(launch=True)
def reverse_in_cube(x: Tensor[f32], out: Tensor[f32]):
    """Each cube of 64 reverses its slice through shared memory, in a loop."""
    s = SharedMemory(f32, 64)
    s[UNIT_POS] = x[ABSOLUTE_POS]
    sync_cube()
    acc = f32(0.0)
    for k in range(2):
        acc += s[63 - UNIT_POS] * f32(k + 1)
    out[ABSOLUTE_POS] = acc


def test_the_checks_of_generated_and_hand_written_modules():
    assert GENERATED_CHECKS == ShaderChecks.LOOP_BOUNDING and ALL_CHECKS == 3
    assert int(ShaderChecks.BOUNDS) == 1 and int(ShaderChecks.LOOP_BOUNDING) == 2
    assert _client().generated_checks == GENERATED_CHECKS


@cube(launch=True)
def shape_at(x: Tensor[f32], out: Array[u32], d: u32):
    """out[0] = x.shape(d), a dimension known only at run time."""
    out[0] = x.shape(d)


def test_a_checked_dimension_past_the_rank_reads_zero_without_naga_checks():
    """The checked read of shape(d) stays inside the info struct's array for any d (the
    module has no bounds checks of naga's to clamp it)."""
    client = _client()
    x = client.zeros((3, 5), f32)
    got = []
    for d in (0, 1, 2, 7, 8, 1000, 2**32 - 1):
        out = client.zeros(1, u32)
        shape_at.launch(client, CubeCount(1), CubeDim(1), x, out, d)
        got.append(int(out.numpy()[0]))
    assert got == [3, 5, 0, 0, 0, 0, 0]
    assert "min(" in shape_at.source("wgsl")


def test_launches_build_modules_with_their_checks(monkeypatch):
    client = _client()
    made = []
    real = wgpu_modules.create_module

    def spy(device, code, label="", checks=ALL_CHECKS):
        made.append(checks)
        return real(device, code, label, checks)
    monkeypatch.setattr("cubepy.runtime.wgpu_runtime.create_module", spy)
    x_h = np.arange(128, dtype=np.float32)
    want = 3 * x_h.reshape(2, 64)[:, ::-1].reshape(-1)
    for launch in (reverse_in_cube.launch, reverse_in_cube.launch_unchecked):
        x, out = client.tensor(x_h), client.zeros(128, f32)
        made.clear()
        launch(client, CubeCount(2), CubeDim(64), x, out)
        np.testing.assert_array_equal(out.numpy(), want)
        assert made == [GENERATED_CHECKS]  # this launch's own module
    made.clear()
    client.compile_wgsl(_ADD_ONE, _ADD_ONE_ABI, label="hand-written")
    assert made == [ALL_CHECKS]


@pytest.mark.parametrize("checks", [ShaderChecks.NONE, ShaderChecks.BOUNDS,
                                    ShaderChecks.LOOP_BOUNDING, ALL_CHECKS])
def test_every_set_of_checks_gives_the_same_answer(checks):
    """In-range code computes the same with any set of checks."""
    device = _client()._device
    got = _run_raw(device, wgpu_modules.create_module(device, _IN_RANGE, "in", checks))
    np.testing.assert_array_equal(got, np.arange(64) * 7 % 64 + 63 - np.arange(64))


# Hand-written WGSL for compile_wgsl: one buffer, no info struct.
_ADD_ONE = """
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  x[g.x] = x[g.x] + 1.0;
}"""
_ADD_ONE_ABI = KernelABI((BufferBinding("x", f32, "array", False, False),), (), 0, "<")

_IN_RANGE = _CLAMPED_READ.replace("s[i + 100u]", "s[63u - i]")


@pytest.mark.parametrize("trusted", [True, False])
def test_all_checks_clamp_out_of_range_reads(trusted, monkeypatch):
    """With every check (hand-written WGSL's set, and the fallback when wgpu-native has
    no trusted entry point) an out-of-range workgroup read is clamped into range."""
    device = _client()._device
    if not trusted:
        monkeypatch.setattr(wgpu_modules, "_trusted_api", lambda: None)
        checks = ShaderChecks.LOOP_BOUNDING  # asked for fewer, but cannot drop any
    else:
        checks = ALL_CHECKS
    got = _run_raw(device, wgpu_modules.create_module(device, _CLAMPED_READ, "clamped",
                                                      checks))
    np.testing.assert_array_equal(got, np.arange(64) * 7 % 64 + 63)


def test_without_wgpu_py_internals_no_trusted_modules(monkeypatch):
    """A wgpu-py whose private helpers moved: no trusted modules (so every check stays,
    as tested above), and no error."""
    import sys
    import types
    if not wgpu_modules.trusted_modules_available():
        pytest.skip("wgpu-native without wgpuDeviceCreateShaderModuleTrusted")
    moved = types.ModuleType("wgpu.backends.wgpu_native._api")  # none of the helpers
    monkeypatch.setitem(sys.modules, "wgpu.backends.wgpu_native._api", moved)
    assert not wgpu_modules.trusted_modules_available()


def test_trusted_module_asks_wgpu_native_for_the_checks(monkeypatch):
    if not wgpu_modules.trusted_modules_available():
        pytest.skip("wgpu-native without wgpuDeviceCreateShaderModuleTrusted")
    from wgpu.backends.wgpu_native import _api
    real_libf = _api.libf
    asked = []

    class Recording:
        """wgpu-py's calls, recording the checks the trusted entry point is given."""

        def __getattr__(self, name):
            real = getattr(real_libf, name)
            if name != "wgpuDeviceCreateShaderModuleTrusted":
                return real

            def call(device, descriptor, checks):
                asked.append(checks)
                return real(device, descriptor, checks)
            return call
    monkeypatch.setattr(_api, "libf", Recording())
    device = _client()._device
    module = wgpu_modules.create_module(device, _IN_RANGE, "asked", ShaderChecks.NONE)
    assert asked == [0]
    monkeypatch.undo()
    assert _run_raw(device, module)[1] == 7 + 62


def test_rejected_wgsl_in_a_trusted_module_is_a_launch_error():
    from cubepy.abi import KernelABI
    client = _client()
    abi = KernelABI((), (), 0, "<")
    with pytest.raises(cubepy.LaunchError, match="WGSL"):
        client.compile_wgsl("fn main( {", abi, label="broken",
                            checks=ShaderChecks.LOOP_BOUNDING)


def test_probe_times_the_cases_with_chosen_checks(monkeypatch):
    """benchmarks/probe_wgpu_checks.py: rows per mode, and a table with CUDA ratios."""
    from pathlib import Path
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    from benchmarks import probe_wgpu_checks as probe
    client = _client()
    monkeypatch.setattr(client, "generated_checks", client.generated_checks)
    rows = probe.measure("none", {"elementwise"}, "tiny", 1)
    assert client.generated_checks == ShaderChecks.NONE  # (a child process's client)
    assert {r["mode"] for r in rows} == {"none"}
    assert all(r["median_ms"] > 0 and r["check"] == "ok" for r in rows), rows
    as_cuda = [dict(r, mode="cuda", median_ms=r["median_ms"] / 2) for r in rows]
    text = probe.table(rows + as_cuda, ["cuda", "none"])
    assert "| elementwise | 65536 | cubepy unchecked |" in text and "50%" in text
