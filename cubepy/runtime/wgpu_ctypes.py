"""wgpu-py's C type names, parsed by cffi in one go.

wgpu-py builds every struct it hands to wgpu-native through cffi, by the type's name
(`ffi.new("WGPUBufferDescriptor *")`). cffi parses a name the first time it meets it, with
pycparser, and every such parse reads again a prelude that declares each typedef of
wgpu's header: 15-25 ms a name on a 2-core Xeon. Opening a device, moving data and
running a first kernel meet about fifty names, which made those parses most of the second
that `client("wgpu")` took there (docs/PERFORMANCE.md, "wgpu's C type names").

`preparse` parses them all as the parameters of one declaration and puts each into cffi's
cache of parsed names, the entry cffi's own `typeof` would have made: one parse instead of
fifty. It reaches into cffi's internals (the parser, the cache and its lock; checked
against cffi 1.15.1, 1.17.1 and 2.0.0); where they are not as it expects, or the
installed header lacks a name, it leaves the cache as it was, and cffi parses each name
at its first use, as it always did.
"""
from __future__ import annotations

from typing import Any

# The names a client meets, in wgpu-py 0.32: requesting the adapter and device, buffers,
# mapping, the shader module, pipeline and bind groups of a launch, command buffers and
# timestamp queries (recorded over the wgpu tests; a name left out is parsed at its
# first use, as before). A function type's entry is what `ffi.callback` looks up.
NAMES = (
    # the adapter and device
    "WGPUInstanceDescriptor *", "WGPURequestAdapterOptions *",
    "WGPURequestAdapterCallbackInfo *",
    "void(WGPURequestAdapterStatus, WGPUAdapter, WGPUStringView, void *, void *)",
    "WGPUAdapterInfo *", "WGPULimits *", "WGPUNativeLimits *", "WGPUChainedStruct *",
    "WGPUChainedStruct * ", "WGPUFeatureName[]", "WGPUDeviceDescriptor *",
    "WGPUDeviceExtras *", "WGPUQueueDescriptor *", "WGPUStringView *", "char []",
    "WGPUDeviceLostCallbackInfo *",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "WGPUUncapturedErrorCallbackInfo *",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "WGPURequestDeviceCallbackInfo *",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
    # buffers and their mapping
    "WGPUBufferDescriptor *", "WGPUBufferMapCallbackInfo *",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    "uint8_t *", "uint8_t []", "uintptr_t", "intptr_t",
    # a launch: shader module, pipeline, bind groups, pass, commands
    "WGPUShaderModuleDescriptor *", "WGPUShaderSourceWGSL *", "WGPUComputeState *",
    "WGPUComputePipelineDescriptor *", "WGPUPipelineLayoutDescriptor *",
    "WGPUBindGroupLayoutDescriptor *", "WGPUBindGroupLayoutEntry *",
    "WGPUBindGroupLayoutEntry[]", "WGPUBindGroupLayout[]", "WGPUBufferBindingLayout *",
    "WGPUBindGroupDescriptor *", "WGPUBindGroupEntry *", "WGPUBindGroupEntry[]",
    "uint32_t []", "uint32_t[1]", "WGPUComputePassDescriptor *",
    "WGPUCommandEncoderDescriptor *", "WGPUCommandBufferDescriptor *", "WGPUCommandBuffer[]",
    # timestamp queries (client.timer)
    "WGPUQuerySetDescriptor *", "WGPUPassTimestampWrites *",
)


def preparse(ffi: Any, names: tuple[str, ...] = NAMES) -> bool:
    """Puts `names` into `ffi`'s cache of parsed type names with one parse. True when it
    did; False (the cache untouched) where cffi's internals are not as expected or a
    name does not parse. Names already cached are left as they are."""
    try:
        parser, cache, lock = ffi._parser, ffi._parsed_types, ffi._lock
        with lock:  # what cffi's typeof holds while it parses and builds a type
            todo = [name for name in names if name not in cache]
            if not todo:
                return True
            tree = parser._parse("void __dummy(\n%s\n);" % ",\n".join(todo))[0]
            params = tree.ext[-1].type.args.params
            if len(params) != len(todo):
                return False
            entries = {}
            for name, param in zip(todo, params):
                ctype, _quals = parser._get_type_and_quals(param.type)
                is_function = ctype.is_raw_function
                if is_function:  # as cffi's typeof keeps one: a pointer, flagged
                    ctype = ctype.as_function_pointer()
                entries[name] = (ffi._get_cached_btype(ctype), is_function)
            cache.update(entries)
            return True
    except Exception:  # another cffi, or a name the installed header lacks
        return False
