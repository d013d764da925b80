"""benchmarks/probe_wgpu_timestamps.py runs every way of placing the timestamps."""
from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


@pytest.mark.wgpu
def test_probe_times_every_mode_with_and_without_the_clear(tmp_path):
    wgpu = pytest.importorskip("wgpu")
    adapter = wgpu.gpu.request_adapter_sync()
    if adapter is None or "timestamp-query-inside-passes" not in adapter.features:
        pytest.skip("no adapter with timestamp-query-inside-passes")
    from benchmarks import probe_wgpu_timestamps as probe
    out = tmp_path / "ts.json"
    assert probe.main(["--reps", "1", "--mib", "1", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {(r["mode"], r["clear"]) for r in rows} == \
        {(m, c) for m in probe.MODES for c in (True, False)}
    assert all(0 < r["min_us"] <= r["median_us"] for r in rows)
