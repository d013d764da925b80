"""A one-line description of the host machine, for benchmark results."""
from __future__ import annotations

import os
import platform
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
