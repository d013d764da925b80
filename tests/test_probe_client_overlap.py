"""benchmarks/probe_client_overlap.py: both ways run in fresh processes and are reported,
with the modules a first compile loads found by a first child."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import probe_client_overlap as probe  # noqa: E402


def test_probe_reports_both_ways_on_cpu(tmp_path, capsys):
    probe.main(["cpu", "1", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "client_overlap_cpu.json").read_text())
    assert "cubepy.frontend.build" in report["modules"]
    assert report["cuda_phases"] == []  # (cuda only)
    plain, overlap = report["runs"]["plain"][0], report["runs"]["overlap"][0]
    assert plain["imported_by_client"] == 0
    assert 0 <= overlap["imported_by_client"] <= len(report["modules"])
    # A plain process imports the frontend at its first launch; in the overlap process the
    # thread has imported it by then, whether before or after the client existed.
    assert all("cubepy.frontend.build" in run["loaded"] for run in (plain, overlap))
    for run in (plain, overlap):
        assert run["first_launch_ms"] > 0
        assert run["client_and_launch_ms"] >= run["client_ms"] + run["first_launch_ms"] - 1e-6
    assert "plain" in capsys.readouterr().out
