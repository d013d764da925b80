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
    try:
        from wgpu.backends.wgpu_native._api import (  # noqa: F401
            GPUShaderModule, libf, new_struct_p, to_c_string_view)
        from wgpu.backends.wgpu_native._ffi import lib
        return hasattr(lib, "wgpuDeviceCreateShaderModuleTrusted")
    except (ImportError, AttributeError):
        return False


def create_module(device: Any, code: str, label: str = "",
                  checks: ShaderChecks = ALL_CHECKS) -> Any:
    """A GPUShaderModule of the WGSL `code` with naga's runtime `checks`; all checks
    where the trusted entry point is absent."""
    if checks == ALL_CHECKS or not trusted_modules_available():
        return device.create_shader_module(label=label, code=code)
    # libf: wgpu-py's error-capturing calls, so a rejected WGSL raises as it does
    # through create_shader_module.
    from wgpu.backends.wgpu_native._api import (GPUShaderModule, libf, new_struct_p,
                                                to_c_string_view)
    from wgpu.backends.wgpu_native._ffi import ffi, lib
    source = new_struct_p("WGPUShaderSourceWGSL *", code=to_c_string_view(code))
    source[0].chain.next = ffi.NULL
    source[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    descriptor = new_struct_p("WGPUShaderModuleDescriptor *",
                              nextInChain=ffi.cast("WGPUChainedStruct *", source),
                              label=to_c_string_view(label))
    handle = libf.wgpuDeviceCreateShaderModuleTrusted(device._internal, descriptor,
                                                     int(checks))
    if handle == ffi.NULL:
        raise RuntimeError("Shader module creation failed")
    return GPUShaderModule(label, handle, device)
