"""benchmarks/probe_matmul_f32.py times every config of both f32 matmul kernels, each
checked first; it and benchmarks/probe_wgmma_configs.py refuse to time a compiler other
than the one they were pointed at; the probes' clients skip the runtimes a machine lacks."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, ROOT)


def test_every_f32_config_is_checked_and_timed_on_the_cpu_runtime(tmp_path):
    from benchmarks import probe_matmul_f32 as probe
    from benchmarks.kernels import matmul
    out = tmp_path / "probe.json"
    assert probe.main(["--size", "128", "--rounds", "2", "--reps", "1", "--runtimes", "cpu",
                       "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["left_out"] == {}
    names = [n for n in got["rounds"] if n.startswith("cpu ")]
    assert len(names) == len(matmul.matmul.configs) + len(matmul.matmul_lines.configs)
    assert sum(n.startswith("cpu matmul_lines ") for n in names) == \
        len(matmul.matmul_lines.configs)
    assert all(len(got["rounds"][n]) == 2 and got["median_ms"][n] > 0 for n in names)


@pytest.mark.parametrize("name", ["probe_wgmma_configs.py", "probe_matmul_f32.py"])
def test_the_ab_probes_refuse_a_root_without_its_own_compiler(tmp_path, name):
    # no cubepy/ under tmp_path: the installed one would be timed
    probe = os.path.join(ROOT, "benchmarks", name)
    run = subprocess.run([sys.executable, probe, "--root", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert f"not from {tmp_path}" in run.stderr


def test_present_clients_skip_an_absent_runtime_and_say_why(capsys):
    from benchmarks.host import present_clients
    clients = present_clients(["cpu", "no-such-runtime", "cpu"])
    assert [c.runtime for c in clients] == ["cpu", "cpu"]
    assert capsys.readouterr().out.startswith("no-such-runtime: skipped (")
