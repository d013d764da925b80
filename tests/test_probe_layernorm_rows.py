"""benchmarks/probe_layernorm_rows.py: every variant it times computes what it says
(layernorm, layernorm without weight and bias, softmax), with rows left over by the
multi-row plans' and the walking planes' last cube."""
from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_every_variant_matches_numpy_on_the_cpu_runtime(tmp_path, dtype):
    from benchmarks import probe_layernorm_rows as probe
    out = tmp_path / "probe.json"
    # 20 rows: the staged plans' cubes of 8 and 16 rows leave some over
    assert probe.main(["--rows", "20", "--cols", "512", "--reps", "1", "--dtype", dtype,
                       "--runtimes", "cpu", "--out", str(out)]) == 0
    found = json.loads(out.read_text())
    rows = found["rows"]
    names = [r["variant"] for r in rows]
    assert any("staged" in n for n in names) and any(n.startswith("no affine") for n in names)
    assert any(n.startswith("block 2") for n in names)
    assert found["failed"] == []  # every variant launched (and is among the rows)
    assert sum(n.startswith("walk ") for n in names) == len(probe.WALKS) * len(probe.WALK_CUBES)
    assert any(n.startswith("softmax") for n in names) == (dtype == "f32")
    tol = 1e-4 if dtype == "f32" else 2e-2
    assert all(r["max_error"] < tol for r in rows), rows
    assert found["devices"] == {"cpu": found["devices"]["cpu"]} and found["host"]
