"""benchmarks/probe_import_location.py times cubepy's cold start from a checkout and from
copies of the package elsewhere, in fresh processes."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchmarks import probe_import_location as probe  # noqa: E402


def test_times_the_checkout_and_a_copy(tmp_path):
    copies = tmp_path / "copies"
    copies.mkdir()
    probe.main(["1", "--copy-to", str(copies), "--out", str(tmp_path), "--name", "test"])
    report = json.loads((tmp_path / "import_location_test.json").read_text())
    assert set(report["locations"]) == {"checkout", str(copies)}
    assert "cubepy.frontend.build" in report["modules"]
    for where in report["locations"].values():
        medians = where["medians_ms"]
        assert medians["compiler_modules_ms"] > 0 and medians["frontend_ms"] > 0
        assert where["stat_us"] > 0 and where["file_system"]
    assert not list(copies.iterdir())  # the copy is removed afterwards
