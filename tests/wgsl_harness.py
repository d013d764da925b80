"""Runs generated WGSL directly through wgpu-py (no cubepy runtime), so the WGSL code
generator's tests check the shader itself: compile with an explicit bind group layout
matching the launch ABI, dispatch, read every buffer back. `barrier_violations` checks
the emitted text for barriers outside uniform control flow.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from cubepy.abi import KernelABI, MAX_RANK, pack_info


def wgpu_device():
    """A wgpu device (llvmpipe counts), or None when there is no adapter."""
    try:
        import wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception:  # no wgpu-py, no driver: callers skip
        return None
    if adapter is None:
        return None
    features = [f for f in ("shader-f16", "subgroup", "subgroup-barrier")
                if f in adapter.features]
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


# ----------------------------------------------------------------------------- uniformity

_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # not `0u`, not `v.x`
_ASSIGN = re.compile(r"^(?:(?:let|var)\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?"
                     r"(?:[-+*/%&|^]|<<|>>)?=(?!=)\s*(.*);$")
# Values that differ between the units of one workgroup.
_UNIT_SEEDS = {"cube_local", "cube_unit", "cube_plane_lane"}


def _main_lines(src: str) -> list[str]:
    """The statements of `fn main`, comments removed, one per line, stripped."""
    start = src.index("fn main(")
    body = src[src.index("{", src.index(")", start)) + 1:]
    lines = [re.sub(r"//.*", "", line).strip() for line in body.splitlines()]
    return [line for line in lines if line][:-1]  # drop main's closing brace


def barrier_violations(src: str) -> list[str]:
    """Reasons a `workgroupBarrier()` in the shader may not be reached in uniform control
    flow: an enclosing if/loop condition that depends on the unit (its position, or
    memory, transitively through assignments), or an earlier `return` other than the
    workgroup-uniform fold guard."""
    lines = _main_lines(src)
    memory = set(re.findall(r"var<(?:storage|workgroup)[^>]*>\s+([A-Za-z_]\w*)", src))
    memory.discard("info")  # the same launch info for every unit

    def headers_at() -> list[tuple[str, list[str]]]:
        """(line, enclosing conditions) for every line of main."""
        stack: list[str] = []
        out = []
        for line in lines:
            if line.startswith("}"):
                closed = stack.pop() if stack else ""
                if line.endswith("{"):  # } else { / } else if (c) {
                    stack.append(closed + " " + line)
                out.append((line, list(stack)))
                continue
            out.append((line, list(stack)))
            if line.endswith("{"):
                stack.append(line)
        return out

    placed = headers_at()
    tainted = set(_UNIT_SEEDS)

    def is_tainted(text: str) -> bool:
        names = set(_IDENT.findall(text))
        return bool(names & (tainted | memory)) or any(
            x.startswith(("cube_load_", "cube_atomic_")) for x in names)

    changed = True
    while changed:
        changed = False
        for line, conds in placed:
            targets = []
            m = _ASSIGN.match(line)
            if m:
                targets.append((m.group(1), m.group(2)))
            f = re.match(r"^for \(var ([A-Za-z_]\w*)[^=]*=(.*)\{$", line)
            if f:
                targets.append((f.group(1), f.group(2)))
            for name, expr in targets:
                if name not in tainted and (is_tainted(expr)
                                            or any(is_tainted(c) for c in conds)):
                    tainted.add(name)
                    changed = True
    problems = []
    seen_return = None
    for line, conds in placed:
        if "return;" in line and not line.startswith("if (cube_linear >= "):
            seen_return = seen_return or line
        if "workgroupBarrier()" in line:
            bad = [c for c in conds if is_tainted(c)]
            if bad:
                problems.append(f"barrier under unit-dependent {bad[-1]!r}")
            if seen_return:
                problems.append(f"barrier after {seen_return!r}")
    return problems
