"""benchmarks/probe_compile_ahead.py times a cold autotuned matmul's first result in
fresh processes, for the repository's cubepy and another tree in turns."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_probe_records_every_process_of_every_tree(tmp_path, monkeypatch):
    from benchmarks import probe_compile_ahead as probe
    monkeypatch.setenv("CUBEPY_AUTOTUNE", "0")  # (the cpu runtime tunes slowly)
    out = tmp_path / "ahead.json"
    assert probe.main(["--runtime", "cpu", "--kernels", "f32", "--size", "16", "--runs",
                       "2", "--tree", f"again={ROOT}", "--out", str(out)]) == 0
    records = json.loads(out.read_text())["records"]
    assert sorted((r["tree"], r["run"]) for r in records) == \
        [("again", 0), ("again", 1), ("here", 0), ("here", 1)]
    for r in records:
        assert r["cubepy"] == os.path.join(ROOT, "cubepy") and r["kernel"] == "f32"
        assert r["first_result_ms"] > 0 and r["configs_built"] == 1 and r["configs"] == 8
