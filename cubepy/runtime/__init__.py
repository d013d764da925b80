"""Runtimes: `cubepy.client(name)` picks one. cuda (PyCUDA), wgpu (wgpu-py), cpu (numpy).

Clients are created once per name and shared, so tensors from `client("cpu")` work with
every later `client("cpu")`; a client whose device was lost is replaced by a new one.
Clients may be shared by threads (see docs/RUNTIMES.md, "Threads").
"""
from __future__ import annotations

import logging
import os
import threading

from ..errors import LaunchError, public_entry
from ..targets import all_targets, get_target, target_names
from .base import Client, DeviceLimits, DeviceTensor

_log = logging.getLogger("cubepy.runtime")
_CLIENTS: dict[str, Client] = {}
# Runtime names in the order `client()` tries them: those of the targets, in the
# registry's order (cuda, wgpu, cpu).
RUNTIMES = tuple(dict.fromkeys(r for t in all_targets() for r in t.runtimes))
_ORDER = RUNTIMES
_CREATING = threading.Lock()  # two threads asking for a new client get the same one


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
    raise AssertionError(kind)  # _parse_name accepts only the kinds above


_NAMES = "cuda, cuda:N, wgpu, wgpu:N or cpu"


def _parse_name(name: str, origin: str) -> tuple[str, int]:
    """("cuda", 1) for "cuda:1"; a LaunchError listing the valid names otherwise."""
    kind, colon, idx = name.partition(":")
    index = int(idx) if idx.isdigit() else -1
    if kind not in _ORDER or (colon and (index < 0 or kind == "cpu" and index != 0)):
        hint = ""
        if kind in target_names() and kind not in _ORDER:  # a source-only target
            title = get_target(kind).title
            hint = (f" ({title} source comes from kernel.source(\"{kind}\"); there is no "
                    f"{title} runtime)")
        raise LaunchError(f"unknown runtime {name!r}{origin}: expected {_NAMES}{hint}")
    return kind, max(index, 0)


@public_entry
def client(name: str | None = None) -> Client:
    """The client for runtime `name` ("cuda", "cuda:1", "wgpu", "cpu").

    Without a name: $CUBEPY_RUNTIME if set, else the best one present: cuda, then wgpu on
    a real GPU, then cpu (a software WebGPU adapter such as llvmpipe is slower than the cpu
    runtime, so it is used only when asked for by name). Raises LaunchError when the named
    runtime is not available here (saying what to install) or the name is unknown.
    """
    origin = ""
    if name is None:
        name = os.environ.get("CUBEPY_RUNTIME") or None
        origin = " (from $CUBEPY_RUNTIME)"
    if name is None:
        return default_choice()[0]
    if not isinstance(name, str):
        raise LaunchError(f"a runtime name is a string ({_NAMES}), not {name!r}")
    kind, index = _parse_name(name, origin)
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
            except Exception as e:  # no driver, no adapter...
                raise LaunchError(f"runtime {name!r} is not available: {e}") from e
            _CLIENTS[key] = found
            _log.info("opened runtime %s: %s", key, found.device)
    return found


def default_choice() -> tuple[Client, list[str]]:
    """The client `client()` picks without a name or $CUBEPY_RUNTIME, and why.

    Runtimes are tried in order (cuda, wgpu, cpu); one that the cheap checks of
    `detect.ruled_out` exclude is skipped without importing its package. The notes say,
    per runtime, what ruled it out or which device was chosen.
    """
    from .detect import ruled_out
    notes = []
    for kind in _ORDER:
        if kind == "cpu":
            break
        reason = ruled_out(kind)
        if reason is None:
            try:
                found = client(kind)
            except LaunchError as e:
                reason = f"unavailable: {e}"
            else:
                if not getattr(found, "is_software", False):
                    notes.append(f"{kind}: chosen ({found.device})")
                    _log.info("chose the %s runtime (%s)", kind, found.device)
                    return found, notes
                reason = f"{found.device} is a software adapter"
        notes.append(f"{kind}: skipped, {reason}")
        _log.debug("skipped runtime %s: %s", kind, reason)
    _log.info("chose the cpu runtime (no GPU runtime found)")
    found = client("cpu")
    notes.append(f"cpu: chosen ({found.device})")
    return found, notes


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


__all__ = ["Client", "DeviceLimits", "DeviceTensor", "client", "available_runtimes",
           "default_choice"]
