"""Cold first launches on cuda, fresh processes interleaved, under variants of the
NVRTC loading thread.

    python benchmarks/probe_cold_launch.py [RUNS]

Each process is benchmarks/bench_startup.py's launch child (import, client, then the
timed decoration + first launch + sync of axpy with an empty cache folder); a variant
adds one line before the timed part:

- `now`: the code as it stands;
- `nowarm`: the loading thread's warm-up compile replaced by nothing (the thread
  compiled an empty kernel until 91d8eea; on later code this is `now` again);
- `late`: the decoration's notice to the clients turned off (only 7c704f8 had one; on
  other code this is `now` again).

Prints the median, minimum and every time per variant, and writes them as JSON to
$OUT/warmup.json (or /tmp). Results: benchmarks/results/startup_cold_h200.md.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_startup as b  # noqa: E402

PATCH = {
    "now": "",
    "nowarm": "from cubepy.runtime import cuda_compile as _cc; "
              "_cc._warm_up_nvrtc = lambda arch: None\n",
    "late": "import cubepy.runtime as _rt; _rt.compile_coming = lambda: None\n",
}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    times: dict[str, list[float]] = {k: [] for k in PATCH}
    with tempfile.TemporaryDirectory() as tmp:
        kernel_file = os.path.join(tmp, "axpy_kernel.py")
        with open(kernel_file, "w") as fh:
            fh.write(b.KERNEL)
        b._child(b.IMPORT_CHILD, [], None)  # fills __pycache__
        for i in range(runs):
            for variant, patch in PATCH.items():
                code = b.LAUNCH_CHILD.replace("KERNEL_FILE", repr(kernel_file)).replace(
                    "before = set(sys.modules)", patch + "before = set(sys.modules)")
                row = b._child(code, ["cuda", "cold"], os.path.join(tmp, f"c{i}{variant}"))
                times[variant].append(row["first_launch_ms"])
    for variant, values in times.items():
        print(f"{variant}: median {statistics.median(values):.1f} min {min(values):.1f} ms  "
              f"{[round(x, 1) for x in values]}")
    out = os.path.join(os.environ.get("OUT", "/tmp"), "warmup.json")
    with open(out, "w") as fh:
        json.dump(times, fh)


if __name__ == "__main__":
    main()
