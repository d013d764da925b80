"""Runtimes: `cubepy.client(name)` picks one. cuda (PyCUDA), wgpu (wgpu-py), cpu (numpy).

Clients are created once per name and shared, so tensors from `client("cpu")` work with
every later `client("cpu")`; a client whose device was lost is replaced by a new one.
Clients may be shared by threads (see docs/RUNTIMES.md, "Threads").
"""
from __future__ import annotations

import os
import re
import threading

from ..errors import LaunchError
from .base import Client, DeviceLimits, DeviceTensor

_CLIENTS: dict[str, Client] = {}
_ORDER = ("cuda", "wgpu", "cpu")
_CREATING = threading.Lock()  # two threads asking for a new client get the same one
_NAME = re.compile(r"([a-z]+)(?::(\d+))?")


def _create(kind: str, index: int) -> Client:
    if kind == "cpu":
        from .cpu import CpuClient
        return CpuClient()
    if kind == "wgpu":
        from .wgpu_runtime import WgpuClient
        return WgpuClient(index)
    if kind == "cuda":
        from .cuda import CudaClient
        return CudaClient(index)
    raise LaunchError(f"unknown runtime {kind!r}: expected one of {', '.join(_ORDER)}")


def client(name: str | None = None) -> Client:
    """The client for runtime `name` ("cuda", "cuda:1", "wgpu", "cpu").

    Without a name: $CUBEPY_RUNTIME if set, else the best one present: cuda, then wgpu on
    a real GPU, then cpu (a software WebGPU adapter such as llvmpipe is slower than the cpu
    runtime, so it is used only when asked for by name). Raises LaunchError when the named
    runtime is not available here.
    """
    if name is None:
        name = os.environ.get("CUBEPY_RUNTIME") or None
    if name is None:
        for kind in _ORDER:
            try:
                found = client(kind)
            except LaunchError:
                continue
            if not getattr(found, "is_software", False):
                return found
        return client("cpu")
    kind, index = _parse_name(name)
    key = "cpu" if kind == "cpu" else f"{kind}:{index}"
    found = _CLIENTS.get(key)
    if found is not None and found.lost is None:
        return found
    with _CREATING:
        found = _CLIENTS.get(key)
        if found is None or found.lost is not None:
            try:
                found = _create(kind, index)
            except LaunchError:
                raise
            except Exception as e:  # missing package, no driver, no adapter...
                raise LaunchError(f"runtime {name!r} is not available: {e}") from e
            _CLIENTS[key] = found
    return found


def _parse_name(name) -> tuple[str, int]:
    """("wgpu", 1) for "wgpu:1"; LaunchError for anything that is not a runtime name."""
    match = _NAME.fullmatch(name) if isinstance(name, str) else None
    if match is None or match.group(1) not in _ORDER:
        raise LaunchError(f"unknown runtime {name!r}: expected one of {', '.join(_ORDER)}, "
                          f"optionally with a device index (\"cuda:1\")", "name")
    kind, index = match.group(1), int(match.group(2) or 0)
    if kind == "cpu" and index != 0:
        raise LaunchError(f"runtime {name!r}: the cpu runtime has one device, cpu:0", "name")
    return kind, index


def available_runtimes() -> list[str]:
    """The runtimes that can create a client on this machine, best first."""
    found = []
    for kind in _ORDER:
        try:
            client(kind)
            found.append(kind)
        except LaunchError:
            pass
    return found


__all__ = ["Client", "DeviceLimits", "DeviceTensor", "client", "available_runtimes"]
