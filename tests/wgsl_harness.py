"""Runs generated WGSL directly through wgpu-py (no cubepy runtime), so the WGSL code
generator's tests check the shader itself: compile with an explicit bind group layout
matching the launch ABI, dispatch, read every buffer back.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from cubepy.abi import KernelABI, MAX_RANK, pack_info


def wgpu_device(f16: bool = False):
    """A wgpu device (llvmpipe counts), or None when there is no adapter."""
    try:
        import wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception:  # no wgpu-py, no driver: callers skip
        return None
    if adapter is None:
        return None
    features = [f for f in ("shader-f16", "subgroup") if f in adapter.features]
    return adapter.request_device_sync(required_features=features)


def pipeline(device, source: str, abi: KernelABI):
    """A compute pipeline for `source` with the layout the ABI prescribes."""
    import wgpu
    entries = [{"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                "buffer": {"type": "read-only-storage" if b.read_only else "storage"}}
               for i, b in enumerate(abi.buffers)]
    if abi.has_info:
        entries.append({"binding": abi.info_binding, "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": "read-only-storage"}})
    module = device.create_shader_module(code=source)
    layout = device.create_bind_group_layout(entries=entries)
    pipe = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
        compute={"module": module, "entry_point": "main"})
    return pipe, layout


def _meta(arr: np.ndarray, buffer_len: int | None) -> SimpleNamespace:
    shape = arr.shape[:MAX_RANK]
    strides = tuple(s // arr.itemsize for s in arr.strides)
    return SimpleNamespace(buffer_len=arr.size if buffer_len is None else buffer_len,
                           len=arr.size, shape=shape, strides=strides)


def run(device, source: str, abi: KernelABI, arrays: dict[str, np.ndarray],
        scalars: dict | None = None, cube_count=(1, 1, 1), grid=None,
        buffer_lens: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Dispatches `grid` workgroups (default: cube_count) with the logical `cube_count`
    in the info struct; returns every buffer's contents afterwards (bool as bool).
    `buffer_lens` overrides the length the info struct reports for a buffer."""
    import wgpu
    pipe, layout = pipeline(device, source, abi)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    handles, entries = [], []
    for i, b in enumerate(abi.buffers):
        host = np.ascontiguousarray(arrays[b.name])
        if host.dtype == np.bool_:
            host = host.astype(np.uint32)
        data = host.tobytes()
        data += b"\0" * (-len(data) % 4 or (4 if not data else 0))  # 4-aligned, not empty
        buf = device.create_buffer_with_data(data=data, usage=usage)
        handles.append(buf)
        entries.append({"binding": i, "resource": {"buffer": buf, "offset": 0,
                                                   "size": buf.size}})
    if abi.has_info:
        meta = {name: _meta(a, (buffer_lens or {}).get(name)) for name, a in arrays.items()}
        info = pack_info(abi, meta, scalars or {}, tuple(cube_count))
        info_buf = device.create_buffer_with_data(data=info, usage=usage)
        entries.append({"binding": abi.info_binding,
                        "resource": {"buffer": info_buf, "offset": 0, "size": info_buf.size}})
    group = device.create_bind_group(layout=layout, entries=entries)
    encoder = device.create_command_encoder()
    cpass = encoder.begin_compute_pass()
    cpass.set_pipeline(pipe)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(*(grid or cube_count))
    cpass.end()
    device.queue.submit([encoder.finish()])
    out = {}
    for b, h in zip(abi.buffers, handles):
        raw = bytes(device.queue.read_buffer(h))
        host = arrays[b.name]
        dt = np.uint32 if host.dtype == np.bool_ else host.dtype
        values = np.frombuffer(raw, dt)[: host.size].reshape(host.shape)
        out[b.name] = values.astype(np.bool_) if host.dtype == np.bool_ else values.copy()
    return out
