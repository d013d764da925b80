"""benchmarks/probe_cold_code_use.py counts, in a fresh process, the compiler code a cold
compile of axpy loads and the part of it that runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..")


def test_counts_the_frontend_and_what_of_it_ran(tmp_path):
    script = ("import json, sys; sys.path.insert(0, %r)\n"
              "from benchmarks import probe_cold_code_use as p\n"
              "print(json.dumps(p.measure(%r)))\n") % (ROOT, str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    assert "cubepy.frontend.build" in counts and "cubepy.codegen.cuda" in counts
    for functions, size, called, called_size in counts.values():
        assert 0 <= called <= functions and 0 <= called_size <= size
    build = counts["cubepy.frontend.build"]
    assert build[2] > 0 and build[3] > 0  # the compile ran part of the frontend
    assert sum(r[2] for r in counts.values()) < sum(r[0] for r in counts.values())
