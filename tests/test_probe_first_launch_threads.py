"""benchmarks/probe_first_launch_threads.py times cold first launches in fresh processes,
for the repository's cubepy and another tree in turns, with and without the compiler's
modules imported first."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_probe_records_every_process_of_every_tree(tmp_path):
    from benchmarks import probe_first_launch_threads as probe
    out = tmp_path / "threads.json"
    assert probe.main(["--runtimes", "cpu", "--runs", "1", "--preimport",
                       "--tree", f"again={ROOT}", "--out", str(out)]) == 0
    records = json.loads(out.read_text())["records"]
    assert sorted((r["tree"], r["preimport"]) for r in records) == \
        [("again", False), ("again", True), ("here", False), ("here", True)]
    for r in records:
        assert r["cubepy"] == os.path.join(ROOT, "cubepy")
        assert 0 < r["frontend_wall_ms"] <= r["first_launch_ms"]
        assert r["frontend_thread_cpu_ms"] > 0 and "MainThread" in r["threads"]
        # a cold launch imports the frontend, unless the probe imported it first
        assert ("cubepy.frontend.build" in r["modules_loaded"]) is not r["preimport"]
