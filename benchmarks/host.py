"""What the benchmark scripts share: a one-line description of the host machine, the
clients of the runtimes present, and the host time per launch of a launch function."""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path


def describe_host() -> str:
    """CPU model, core count, Python version and OS."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def present_clients(runtimes) -> list:
    """A client for each runtime named in `runtimes` that this machine has; each absent
    one is printed with the reason and skipped."""
    import cubepy  # (this module stays light for the scripts that only describe the host)
    clients = []
    for runtime in runtimes:
        try:
            clients.append(cubepy.client(runtime))
        except cubepy.CubepyError as e:
            print(f"{runtime}: skipped ({e})", flush=True)
    return clients


def per_launch_us(launch, sync, n: int, reps: int) -> float:
    """Best host time per launch over `reps` runs of `n` back-to-back launches."""
    for _ in range(min(n, 50)):
        launch()
    sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            launch()
        t1 = time.perf_counter()
        sync()
        best = min(best, (t1 - t0) / n)
    return best * 1e6
