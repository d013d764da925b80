"""benchmarks/probe_short_rows.py: every plan checked and timed, a missing runtime and a
failing plan reported instead of ending the probe."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import probe_short_rows as probe  # noqa: E402


def test_probe_times_every_plan_and_survives_failures(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(probe, "SOFTMAX_COLS", (256,))
    monkeypatch.setattr(probe, "LAYERNORM_COLS", (512,))
    real_plans = probe.plans_for
    broken = ("plane", 64, 3)  # 3 lines per unit for a row of 2: wrong rows, a failed check
    monkeypatch.setattr(probe, "plans_for", lambda c, lines: real_plans(c, lines) + [broken])
    out = tmp_path / "probe.json"
    assert probe.main(["--out", str(out), "--runtimes", "no-such-runtime,cpu",
                       "--rows", "8", "--warmup", "0", "--reps", "1"]) == 0
    printed = capsys.readouterr().out
    assert "no-such-runtime: skipped" in printed
    rows = json.loads(out.read_text())
    assert {r["kernel"] for r in rows} == {"softmax", "layernorm_f16", "layernorm_f32"}
    plans = {r["plan"] for r in rows if r["kernel"] == "softmax"}
    assert {"plane per row, 64 units, 2 lines/unit", "online, 256 units",
            "run (chosen)"} <= plans
    failed = [r for r in rows if r.get("error")]
    assert failed and all(r["plan"] == "plane per row, 64 units, 3 lines/unit"
                          for r in failed)
    timed = [r for r in rows if not r.get("error")]
    assert all(r["median_ms"] > 0 and r["gbs"] > 0 for r in timed)
    chosen = [r["chosen"] for r in timed if r["plan"] == "run (chosen)"]
    assert len(chosen) == 3 and all(c.startswith("plane per row") for c in chosen)
    assert "| softmax | 8x256 | cpu |" in printed
