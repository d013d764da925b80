"""tools/gpu_tests.py: the parallel runner of the GPU-marked tests, run here on a small
suite of its own (its tests carry a mark of their own, not the GPU ones)."""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gpu_tests", ROOT / "tools" / "gpu_tests.py")
gpu_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_tests)


def test_deal_spreads_tests_round_robin_and_drops_empty_hands():
    ids = [f"t{i}" for i in range(7)]
    assert gpu_tests.deal(ids, 3) == [["t0", "t3", "t6"], ["t1", "t4"], ["t2", "t5"]]
    assert gpu_tests.deal(ids[:2], 5) == [["t0"], ["t1"]]


def test_outcome_counts_reads_pytests_final_line():
    line = "3 failed, 10 passed, 2 skipped, 1 deselected, 2 errors in 4.20s (0:00:04)"
    assert gpu_tests.outcome_counts(line) == {"failed": 3, "passed": 10, "skipped": 2,
                                              "deselected": 1, "error": 2}
    assert gpu_tests.outcome_counts("CUT") == {}


def _suite(tmp_path: Path, body: str) -> Path:
    tmp_path.mkdir()
    (tmp_path / "conftest.py").write_text(
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'picked: selected by the runner')\n"
        "    config.addinivalue_line('markers', 'slow_one: a test cut by the timeout')\n")
    (tmp_path / "test_small.py").write_text(textwrap.dedent(body))
    return tmp_path


def _run(suite: Path, monkeypatch, *args: str) -> int:
    monkeypatch.chdir(suite)  # (run from the suite's root, as from the project's)
    return gpu_tests.main(["--marks", *args])


def test_a_run_with_a_failure_reports_it_and_fails(tmp_path, monkeypatch):
    suite = _suite(tmp_path / "suite", """\
        import pytest

        @pytest.mark.picked
        @pytest.mark.parametrize("n", range(5))
        def test_passes(n):
            assert n < 5

        @pytest.mark.picked
        def test_fails():
            assert 1 == 2

        def test_unmarked_is_left_out():
            pass
        """)
    out = tmp_path / "out"
    code = _run(suite, monkeypatch, "picked", "--jobs", "3", "--out", str(out), ".")
    summary = (out / "summary.txt").read_text()
    assert code == 1
    assert summary.startswith("6 tests collected; 1 failed, 5 passed")
    assert "FAILED" in summary and "test_fails" in summary
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["job0.log", "job1.log",
                                                                "job2.log"]


def test_a_passing_run_succeeds_and_a_cut_one_fails(tmp_path, monkeypatch):
    suite = _suite(tmp_path / "suite", """\
        import time
        import pytest

        @pytest.mark.picked
        @pytest.mark.parametrize("n", range(2))
        def test_quick(n):
            pass

        @pytest.mark.slow_one
        def test_slow():
            time.sleep(60)
        """)
    assert _run(suite, monkeypatch, "picked", "--jobs", "2", "--out",
                str(tmp_path / "a"), ".") == 0
    assert "2 tests collected; 2 passed" in (tmp_path / "a" / "summary.txt").read_text()
    assert _run(suite, monkeypatch, "slow_one", "--jobs", "2", "--timeout", "3",
                "--out", str(tmp_path / "b"), ".") == 1
    assert "CUT by the timeout" in (tmp_path / "b" / "summary.txt").read_text()


def test_nothing_selected_is_a_failure(tmp_path, monkeypatch, capsys):
    suite = _suite(tmp_path / "suite", "def test_plain():\n    pass\n")
    assert _run(suite, monkeypatch, "picked", "--out", str(tmp_path / "out"), ".") == 1
    assert "no test selected" in capsys.readouterr().out


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_jobs_below_one_is_a_usage_error(jobs):
    with pytest.raises(SystemExit):
        gpu_tests.main(["--jobs", jobs])
