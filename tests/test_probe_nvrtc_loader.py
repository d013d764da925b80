"""benchmarks/probe_nvrtc_loader.py: its child is valid Python holding the benchmark's
kernel, and its summary takes the medians per mode (the processes need a GPU machine)."""
from __future__ import annotations

import ast
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def test_the_child_parses_and_holds_the_kernel():
    from benchmarks import probe_nvrtc_loader as probe
    ast.parse(probe.CHILD)
    assert "def axpy(" in probe.CHILD and "KERNEL" not in probe.CHILD
    assert set(probe.MODES) >= {"alone", "with_start", "steps"}


def test_the_summary_is_the_median_per_mode_and_step():
    from benchmarks import probe_nvrtc_loader as probe
    rows = [{"mode": "alone", "frontend_ms": f, "frontend_cpu_ms": f - 1, "steps": []}
            for f in (10.0, 30.0, 20.0)]
    rows += [{"mode": "steps", "steps": [["dlopen", w, w - 0.5]]} for w in (5.0, 7.0)]
    summary = probe.summarise(rows)
    assert summary["alone"] == {"frontend_ms": 20.0, "frontend_cpu_ms": 19.0}
    assert summary["steps"] == {"dlopen_ms": 6.0, "dlopen_cpu_ms": 5.5}
