"""Cheap checks that let `cubepy.client()` skip a runtime without opening it.

Opening wgpu-py costs about 650 ms even when only a software adapter (llvmpipe) is
behind it, and the default choice then drops that adapter anyway. So before probing,
the default choice asks these checks, which only look at files and module specs and
never import the runtime's package. The rules never skip a real GPU:

- cuda: the package pycuda is installed (found, not imported) and an NVIDIA driver is
  visible: /dev/nvidia*, /proc/driver/nvidia or /dev/dxg (WSL); off Linux, a loadable
  libcuda (nvcuda on Windows). On Linux the driver's device nodes decide: a libcuda
  without them cannot open a device, and looking the library up runs ldconfig (~20 ms).
- wgpu: the package wgpu is installed and, on Linux, a GPU device node exists
  (/dev/dri/renderD*, /dev/nvidia* or /dev/dxg); every Vulkan driver for real hardware
  opens one of them. On macOS and Windows (Metal, DX12) there is no cheap test, so
  wgpu is always probed there.

A runtime named explicitly (or through $CUBEPY_RUNTIME) is never screened: "wgpu" still
opens llvmpipe.
"""
from __future__ import annotations

import functools
import glob
import importlib.util
import os
import sys


def _installed(module: str) -> bool:
    """Whether `module` can be imported, found without importing it."""
    return importlib.util.find_spec(module) is not None


@functools.cache  # find_library runs ldconfig (~20 ms); drivers do not come and go
def _nvidia_driver() -> str | None:
    """What shows an NVIDIA driver here (a path or library), or None."""
    for path in ("/proc/driver/nvidia", "/dev/dxg"):
        if os.path.exists(path):
            return path
    nodes = glob.glob("/dev/nvidia*")
    if nodes:
        return nodes[0]
    if _linux():
        return None
    import ctypes.util  # (loads subprocess: only where no device node can tell)
    return ctypes.util.find_library("nvcuda" if sys.platform == "win32" else "cuda")


@functools.cache
def _gpu_device_node() -> str | None:
    """A device node through which Vulkan could reach a real GPU (Linux), or None."""
    for pattern in ("/dev/dri/renderD*", "/dev/nvidia*", "/dev/dxg"):
        nodes = glob.glob(pattern)
        if nodes:
            return nodes[0]
    return None


def _linux() -> bool:
    return sys.platform.startswith("linux")


def ruled_out(kind: str) -> str | None:
    """Why the default choice skips runtime `kind` without probing it, or None to probe."""
    if kind == "cuda":
        if not _installed("pycuda"):
            return "pycuda is not installed"
        if _nvidia_driver() is None:
            return "no NVIDIA driver visible (no /dev/nvidia*, /proc/driver/nvidia or libcuda)"
    elif kind == "wgpu":
        if not _installed("wgpu"):
            return "wgpu-py is not installed"
        if _linux() and _gpu_device_node() is None:
            return ("no GPU device node (/dev/dri/renderD*, /dev/nvidia*, /dev/dxg); "
                    "a software adapter is used only when wgpu is named")
    return None
