"""Shader modules with a chosen set of naga's runtime checks.

wgpu translates every WGSL module with naga, which by default adds two kinds of code
that the WGSL does not say:

- **bounds checks**: each index into an array (storage buffers, workgroup arrays, local
  arrays) is clamped into range, or the access is skipped, unless naga can prove it in
  range;
- **loop bounding**: each loop counts its iterations and leaves after 2^64 of them, so
  that an infinite loop cannot hang the device.

Generated WGSL needs no bounds checks from naga: a checked launch (`kernel.launch`)
guards every access itself (an out-of-range read gives 0, a write is dropped: the
accessor helpers of codegen/wgsl_memory.py), and an unchecked one promises every access
in range, as on CUDA, which checks nothing. So generated modules are built with loop
bounding only (it guards against a hang, not a wrong index); hand-written WGSL
(`client.compile_wgsl`) keeps both. wgpu-native has this as
`wgpuDeviceCreateShaderModuleTrusted`; where that is absent (another backend, or an
older wgpu-native), modules keep every check.
"""
from __future__ import annotations

import importlib
from enum import IntFlag
from typing import Any


class ShaderChecks(IntFlag):
    """naga's runtime checks (wgpu-native's WGPUShaderRuntimeChecks bits)."""

    NONE = 0
    BOUNDS = 1          # clamp or skip out-of-range array accesses
    LOOP_BOUNDING = 2   # leave a loop after 2^64 iterations


ALL_CHECKS = ShaderChecks.BOUNDS | ShaderChecks.LOOP_BOUNDING
GENERATED_CHECKS = ShaderChecks.LOOP_BOUNDING  # what generated WGSL keeps (above)


def trusted_modules_available() -> bool:
    """Whether modules can be built with fewer than all checks: wgpu-native's trusted
    entry point is there, and so are the wgpu-py internals `create_module` calls it with
    (private names, which a wgpu-py release may move: then every check stays)."""
    return _trusted_api() is not None


_API_NAMES = ("GPUShaderModule", "libf", "new_struct_p", "to_c_string_view")


def _trusted_api() -> tuple[Any, Any, Any] | None:
    """wgpu-py's private `_api` module and its cffi `ffi` and `lib`, when the trusted
    entry point and the `_api` helpers `create_module` uses are all there; else None.
    Looked up at each call (a dictionary lookup once imported), not kept, so the names
    are read as they are now."""
    try:
        api = importlib.import_module("wgpu.backends.wgpu_native._api")
        from wgpu.backends.wgpu_native._ffi import ffi, lib
    except ImportError:
        return None
    if not all(hasattr(api, name) for name in _API_NAMES) \
            or not hasattr(lib, "wgpuDeviceCreateShaderModuleTrusted"):
        return None
    return api, ffi, lib


def create_module(device: Any, code: str, label: str = "",
                  checks: ShaderChecks = ALL_CHECKS) -> Any:
    """A GPUShaderModule of the WGSL `code` with naga's runtime `checks`; all checks
    where the trusted entry point is absent."""
    trusted = None if checks == ALL_CHECKS else _trusted_api()
    if trusted is None:
        return device.create_shader_module(label=label, code=code)
    api, ffi, lib = trusted
    source = api.new_struct_p("WGPUShaderSourceWGSL *", code=api.to_c_string_view(code))
    source[0].chain.next = ffi.NULL
    source[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    descriptor = api.new_struct_p("WGPUShaderModuleDescriptor *",
                                  nextInChain=ffi.cast("WGPUChainedStruct *", source),
                                  label=api.to_c_string_view(label))
    # libf: wgpu-py's error-capturing calls, so a rejected WGSL raises as it does
    # through create_shader_module.
    create = api.libf.wgpuDeviceCreateShaderModuleTrusted
    handle = create(device._internal, descriptor, int(checks))
    if handle == ffi.NULL:
        raise RuntimeError("Shader module creation failed")
    return api.GPUShaderModule(label, handle, device)
