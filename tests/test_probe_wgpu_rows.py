"""benchmarks/probe_wgpu_rows.py: its patches of the generated softmax and its
hand-written shaders compute softmax, in its own harness and through cubepy."""
from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def test_each_patch_changes_the_generated_source_and_keeps_the_rest():
    from benchmarks import probe_wgpu_rows as probe
    generated = probe.generated_source(1024)
    assert probe.EXIT in generated and "var<private> held" in generated
    assert "= cube_max_f32(" in generated
    noexit = probe.patched(generated, {"noexit"})
    assert probe.EXIT not in noexit and "info.cube_count_" not in noexit
    fn = probe.patched(generated, {"fn"})
    assert "var<private>" not in fn and "    var held: array<f32, 16>;" in fn
    assert "= cube_max_f32(" not in probe.patched(generated, {"max"})
    everything = probe.patched(generated, {"all"})
    assert "cube_floordiv_u32(cube_unit, cube_plane_dim)" not in everything
    assert everything.count("subgroupAdd(") == generated.count("subgroupAdd(")


@pytest.mark.wgpu
def test_probe_checks_every_shader_against_numpy(tmp_path):
    wgpu = pytest.importorskip("wgpu")
    adapter = wgpu.gpu.request_adapter_sync()
    wanted = {"timestamp-query", "timestamp-query-inside-passes", "subgroup"}
    if adapter is None or not wanted <= set(adapter.features):
        pytest.skip("no adapter with timestamps inside passes and subgroups")
    from benchmarks import probe_wgpu_rows as probe
    out = tmp_path / "rows.json"
    assert probe.main(["--rows", "16", "--cols", "1024", "--reps", "1",
                       "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    by_shader = {(r["shader"], r["mode"]): r for r in rows}
    for name in ("generated", "generated+noexit", "generated+fn", "generated+max",
                 "hand_cube", "copy", "cubepy"):
        for mode in (("cubepy.bench",) if name == "cubepy" else ("own", "in_pass")):
            row = by_shader[(name, mode)]
            assert row["max_error"] < 1e-5, (name, mode)
            assert 0 < row["min_us"] <= row["median_us"]
