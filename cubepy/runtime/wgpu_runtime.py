"""The wgpu runtime: runs generated WGSL through wgpu-py (Vulkan, Metal, D3D12 or GL).

How a launch travels:
- `compile` emits WGSL (cubepy/codegen/wgsl.py), builds an explicit bind group layout
  from the ABI (read-only storage vs storage; the info struct last, with a dynamic
  offset) and a compute pipeline, once per specialisation.
- `dispatch` copies the packed info struct into a host-side batch at the next aligned
  offset, takes the bind group from a small cache keyed by the buffers, and records the
  dispatch into a compute pass that stays open across launches. Nothing is submitted yet.
  A launch repeating the previous one (kernel, cube count, info bytes, buffers) records
  the dispatch alone; with other info bytes, the same bind group at its own slice and
  the dispatch. The per-launch commands (set_pipeline, set_bind_group, dispatch)
  go straight to wgpu-native (wgpu_calls.py).
- `sync()` submits the open batch, opens the next batch's encoder while the device
  works, and waits with wgpuDevicePoll.
- The batch is flushed (one `write_buffer` for every info struct of the batch, skipped
  when the device already holds those bytes, then one submit) on a download, a write
  into a tensor, `sync()`, `flush()`, timing, when the info batch is full, after
  `MAX_BATCH` dispatches, or once it has been open `BATCH_SECONDS` (looked at every
  `BATCH_CHECK` dispatches); a batch closed at one of those bounds is submitted from the
  client's submitting thread (wgpu_submit.py), and every other queue operation waits
  for the batches handed to it. Each dispatch of a batch reads its own slice of the info
  buffer, so `write_buffer`'s ordering (before the whole submit) is harmless, and
  `write_buffer` after a submit is ordered after that submit's work. A write into a
  tensor (`fill_`, `copy_`) is a `write_buffer` too, which the queue runs before any
  later submit: the open batch is submitted first, so it lands after earlier launches.
- Downloads copy into a persistent staging buffer (grown as needed), recorded after the
  open batch's pass in the same encoder (one submit), and map it.

Threads: every method that touches the device or the batch runs under the client's lock
(`Client._lock`), so threads may share a client; their launches interleave in the batch.
A device reported lost (or any wgpu call failing with "device is lost") marks the client
lost: every later call raises LaunchError at once, without reaching wgpu.

Bool tensors are u32 on the device (WGSL has no bool in storage); conversion happens on
upload and download. Cube counts beyond the device's per-dimension limit are folded
into a 2-D (or 3-D) dispatch; the shader rebuilds the logical cube position from the
linear workgroup index and `info.cube_count`, and extra workgroups exit.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..abi import KernelABI
from ..codegen.compiled import Compiled
from ..errors import LaunchError, missing_package
from ..ir.types import DType, bool_, f16
from .base import Client, DeviceLimits, DeviceTensor
from .wgpu_calls import PassCalls, wait_idle
from .wgpu_submit import Submitter
from .wgpu_modules import ALL_CHECKS, GENERATED_CHECKS, ShaderChecks, create_module

if TYPE_CHECKING:  # (cached kernels launch without the IR)
    from ..ir import nodes as ir


def _preparse_ctypes() -> None:
    """Has cffi parse the C type names a client meets in one go rather than one at a
    time (cubepy/runtime/wgpu_ctypes.py): about fifty parses, most of a client's
    creation, become one."""
    try:
        from wgpu.backends.wgpu_native import ffi
    except Exception:  # no wgpu-native: request_adapter says why
        return
    from .wgpu_ctypes import preparse
    preparse(ffi)


def _quiet_vulkan_loader() -> None:
    """Vulkan drivers (Mesa's among them) print "error: XDG_RUNTIME_DIR is invalid or not
    set" when that variable is missing, as it is in containers and CI, although compute
    works. Point it at a private folder so that probing for a device stays silent.

    The folder's name is predictable and the temp folder is shared, so another user may
    have made it first: it is used only when the current user owns it and nobody else can
    write it (the rules of cubepy/cache.py); otherwise one CacheWarning, and the variable
    stays unset."""
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    from ..cache import trusted_dir
    uid = getattr(os, "getuid", lambda: 0)()
    folder = os.path.join(tempfile.gettempdir(), f"cubepy-runtime-{uid}")
    if trusted_dir(folder, create=True):
        os.environ["XDG_RUNTIME_DIR"] = folder


_LOST = re.compile(r"\blost\b", re.IGNORECASE)  # how wgpu words a lost device's errors

# A batch is submitted after MAX_BATCH dispatches, or at its next look at the clock
# (every BATCH_CHECK dispatches) once it has been open BATCH_SECONDS: a tight loop of
# tiny launches pays one submit per MAX_BATCH, and a loop doing other work between
# launches still hands the device its work within about a millisecond.
MAX_BATCH = 256
BATCH_CHECK = 32
BATCH_SECONDS = 0.001
INFO_CAPACITY = 256 * 1024  # bytes of info structs per batch
VECTOR_BYTES = 16  # buffers are whole vec4s of 4-byte elements
BIND_GROUP_CACHE = 64  # bind groups kept per executable (least recently used dropped)

# Limits cubepy relies on; each is requested at the adapter's value.
_WANTED_LIMITS = (
    "max-storage-buffers-per-shader-stage",
    "max-storage-buffer-binding-size",
    "max-buffer-size",
    "max-bindings-per-bind-group",
    "max-dynamic-storage-buffers-per-pipeline-layout",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-storage-size",
    "max-compute-workgroups-per-dimension",
)
# timestamp-query: client.timer() / cubepy.bench time launches on the GPU.
# timestamp-query-inside-passes (native wgpu): a timer's stop whose own pass has already
# ended goes into the launches' pass, without the boundaries of an empty pass.
_WANTED_FEATURES = ("shader-f16", "subgroup", "shader-float32-atomic", "timestamp-query",
                    "timestamp-query-inside-passes", "subgroup-barrier")


@dataclass(eq=False)
class WgpuExecutable:
    """A compiled kernel: its pipeline and the bind groups made for it so far."""

    source: str = field(repr=False)
    abi: KernelABI = field(repr=False)
    pipeline: Any = field(repr=False)
    layout: Any = field(repr=False)  # GPUBindGroupLayout
    info_size: int  # bytes bound for the info struct (0: no info binding)
    bind_groups: "OrderedDict[tuple, Any]" = field(default_factory=OrderedDict, repr=False)
    bind_group_misses: int = 0
    label: str = ""
    writable: tuple[bool, ...] = ()  # per buffer binding
    # Variants for launches that pass one buffer to several parameters, one written:
    # WebGPU forbids a read-only and a writable binding of one buffer in a dispatch.
    alias_variants: dict = field(default_factory=dict, repr=False)
    features: frozenset = frozenset()  # what the shader needs (Compiled.features names)
    # Generated WGSL re-rendered with some bindings read_write (Compiled.render); None
    # for hand-written WGSL, whose binding declarations are rewritten instead.
    render: Any = field(default=None, repr=False)
    checks: ShaderChecks = ALL_CHECKS  # naga's runtime checks its module was built with


# Compiled.features -> (device feature, what needs it). Subgroup built-ins need no
# `enable` in the WGSL, only the device feature.
_DEVICE_FEATURES = {"subgroups": ("subgroup", "plane operations"),
                    "f16": ("shader-f16", "f16"),
                    "subgroup_barrier": ("subgroup-barrier", "sync_plane()")}
# For hand-written WGSL only (generated WGSL states its features in its Compiled
# record): what the text needs a device feature for.
_SUBGROUPS = re.compile(r"\bsubgroup[A-Z]\w*\(|@builtin\(subgroup_")
_ENABLE_F16 = re.compile(r"\benable f16;")
_SUBGROUP_BARRIER = re.compile(r"\bsubgroupBarrier\(")


def scan_features(source: str) -> frozenset[str]:
    """The Compiled.features a hand-written WGSL shader needs, read from its text."""
    return frozenset(name for name, pattern in (("subgroups", _SUBGROUPS),
                                                ("f16", _ENABLE_F16),
                                                ("subgroup_barrier", _SUBGROUP_BARRIER))
                     if pattern.search(source))


def _promote_bindings(exe: WgpuExecutable, promote: frozenset[int]) -> str:
    """Hand-written WGSL (no re-render hook) with the bindings in `promote` declared
    read_write, by rewriting their declarations."""
    source = exe.source
    for i in promote:
        source, count = re.subn(
            rf"(@binding\({i}\)\s*var\s*<\s*storage\s*,\s*)read(\s*>)",
            r"\1read_write\2", source)
        if count != 1:
            raise LaunchError(f"{exe.label or 'the kernel'}: one buffer is passed "
                              f"to several parameters, and the WGSL binding {i} "
                              f"could not be made writable for it")
    return source


def write_timestamp_in(cpass: Any, query_set: Any, index: int) -> None:
    """Writes timestamp `index` of `query_set` inside the open compute pass `cpass` (the
    device has `timestamp-query-inside-passes`, a native wgpu feature)."""
    from wgpu.backends.wgpu_native.extras import write_timestamp
    write_timestamp(cpass, query_set, index)


def _plane_dim(info, device) -> int:
    """The plane size kernels see: the subgroup size when the adapter reports a single
    one; else, on a device with subgroups, the `subgroup_size` a 64-unit cube reads,
    measured once per client (llvmpipe reports 4 to 128 and runs 8); else 32."""
    # wgpu-py 0.32 spells these keys "stackgroup_*"; accept both spellings.
    for prefix in ("subgroup", "stackgroup"):
        lo, hi = info.get(f"{prefix}_min_size"), info.get(f"{prefix}_max_size")
        if lo and lo == hi:
            return int(lo)
    if "subgroup" in device.features:
        try:
            return _measure_plane_dim(device)
        except Exception:  # a driver that cannot run it: the portable guess below
            pass
    return 32


_MEASURE_PLANE_DIM = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_size) size: u32, @builtin(local_invocation_index) i: u32) {
    if i == 0u { out[0] = size; }
}"""


def _measure_plane_dim(device) -> int:
    """The subgroup_size builtin as one small kernel on `device` reads it."""
    import wgpu
    usage = wgpu.BufferUsage
    out = device.create_buffer(size=16, usage=usage.STORAGE | usage.COPY_SRC)
    module = device.create_shader_module(code=_MEASURE_PLANE_DIM)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"})
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": out, "offset": 0, "size": 16}}])
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(1, 1, 1)
    compute.end()
    device.queue.submit([encoder.finish()])
    size = int.from_bytes(bytes(device.queue.read_buffer(out))[:4], "little")
    out.destroy()
    if not 1 <= size <= 128:
        raise ValueError(f"subgroup_size {size}")
    return size


class WgpuClient(Client):
    """A wgpu-py device. `WgpuClient(0)` takes the high-performance adapter; another
    index picks from `wgpu.gpu.enumerate_adapters_sync()`."""

    runtime = "wgpu"
    target = "wgsl"

    def __init__(self, index: int = 0):
        super().__init__()
        _quiet_vulkan_loader()
        try:
            import wgpu
        except ImportError as e:
            raise missing_package("the wgpu runtime", "wgpu", "wgpu", e) from None
        self._wgpu = wgpu
        self.index = index
        _preparse_ctypes()
        try:
            if index == 0:
                adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
            else:
                adapters = wgpu.gpu.enumerate_adapters_sync()
                if index >= len(adapters):
                    raise LaunchError(f"wgpu adapter {index} does not exist "
                                      f"({len(adapters)} found)")
                adapter = adapters[index]
        except LaunchError:
            raise
        except Exception as e:  # no driver, no adapter
            raise LaunchError(f"no wgpu adapter: {e}") from None
        if adapter is None:
            raise LaunchError("no wgpu adapter (no GPU driver with Vulkan, Metal or D3D12 "
                              "support was found; on Linux without a GPU, "
                              "`apt-get install mesa-vulkan-drivers` gives a software one)")
        features = [f for f in _WANTED_FEATURES if f in adapter.features]
        limits = {k: adapter.limits[k] for k in _WANTED_LIMITS if k in adapter.limits}
        try:
            self._device = adapter.request_device_sync(required_features=features,
                                                       required_limits=limits)
        except Exception as e:
            raise LaunchError(f"cannot open the wgpu device: {e}") from None
        self._adapter = adapter
        info = adapter.info
        self.device = f"{info.get('device') or info.get('description') or 'unknown'} / " \
                      f"{info.get('backend_type', '?')}"
        # A CPU adapter (llvmpipe, SwiftShader, WARP): cubepy.client() then prefers cpu.
        self.is_software = str(info.get("adapter_type", "")).lower() == "cpu"
        self._queue = self._device.queue
        self.features = tuple(sorted(self._device.features))
        self._in_pass_timestamps = "timestamp-query-inside-passes" in self._device.features
        # naga's runtime checks in the modules of generated kernels (wgpu_modules).
        self.generated_checks = GENERATED_CHECKS
        dl = self._device.limits
        self._max_groups = int(dl["max-compute-workgroups-per-dimension"])
        self._max_binding = int(dl["max-storage-buffer-binding-size"])
        self._max_buffer = min(int(dl["max-buffer-size"]), self._max_binding)
        self._info_align = max(int(dl["min-storage-buffer-offset-alignment"]), 4)
        from ..targets import get_target
        record = get_target(self.target)  # WGSL's types; f16 only with shader-f16
        dtypes = set(record.dtype_set())
        if "shader-f16" not in self._device.features:
            dtypes.discard(f16)
        m = self._max_groups
        self.limits = DeviceLimits(
            max_cube_dim=(int(dl["max-compute-workgroup-size-x"]),
                          int(dl["max-compute-workgroup-size-y"]),
                          int(dl["max-compute-workgroup-size-z"])),
            max_units_per_cube=int(dl["max-compute-invocations-per-workgroup"]),
            max_cube_count=(m * m, m, m),  # folded in dispatch when beyond m
            dtypes=frozenset(dtypes),
            atomic_dtypes=record.atomic_dtype_set(),  # f32: native or a CAS loop
            plane_dim=_plane_dim(info, self._device),
            max_shared_bytes=int(dl["max-compute-workgroup-storage-size"]),
            features=self.features,
        )
        usage = wgpu.BufferUsage
        self._storage_usage = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        # Info structs of the current batch: host bytes, one device buffer.
        self._info_host = bytearray(INFO_CAPACITY)
        self._info_buffer = self._device.create_buffer(
            size=INFO_CAPACITY, usage=usage.STORAGE | usage.COPY_DST)
        self._info_used = 0
        self._info_written = b""  # what the device buffer holds (skips equal rewrites)
        self._encoder = None  # the open batch's command encoder
        self._pass = None
        self._marked = False  # the open batch's encoder holds timestamps to submit
        self._timed_end: int | None = None  # the open pass's own end timestamp, if timed
        self._calls = PassCalls()
        self._submitter = Submitter(self._queue, self._info_buffer)
        # Batches closed at their bound are submitted from a thread of their own
        # (wgpu_submit.py), except on a CPU adapter: there the device's work runs on the
        # host's cores, and a thread more only competes with it (on llvmpipe with 2
        # cores a loop of tiny launches took a third longer).
        self.background_submits = not self.is_software
        self._pass_handle = None  # what self._calls takes for the open pass
        self._wait_idle = wait_idle(self._device)
        # The previous launch of the open pass, (executable, cube count, info, tensors)
        # with its grid: an identical launch only dispatches again. Holds the tensors
        # (a tensor's buffer never changes), so none is freed while it can match; a
        # view of the same buffer is another tensor and takes the full path.
        self._last_launch: tuple | None = None
        self._last_grid = (1, 1, 1)
        self._last_info_size = 0  # bytes of the previous launch's info slice
        self._pass_pipeline = None
        self._pass_bind_group = None  # bound in the open pass, with its info bytes
        self._pass_info = b""
        self._pending = 0  # dispatches recorded since the last submit
        self._check_at = 0  # _pending at which the batch next looks at the clock
        self._batch_start = 0.0  # perf_counter() at the batch's first dispatch
        self._unsynced = False  # work submitted since the last sync
        self._staging = None
        self._staging_size = 0
        self._bind_group_users: dict[int, set] = {}  # buffer id -> {(executable, key)}
        self._freed: list[int] = []  # ids of freed buffers whose bind groups must go
        self.submits = 0  # counters for tests and benchmarks
        self.staging_allocations = 0

    # -- memory -----------------------------------------------------------------------
    def _buffer_bytes(self, size: int, dtype: DType) -> int:
        itemsize = 4 if dtype is bool_ else dtype.itemsize
        nbytes = max(size * itemsize, 4)
        # WebGPU wants a multiple of 4; 16 lets a kernel bind any buffer as an array of
        # vec4 (codegen/wgsl_lines.py) and still reach every element below buffer_len
        nbytes = -(-nbytes // VECTOR_BYTES) * VECTOR_BYTES
        if nbytes > self._max_buffer:
            raise LaunchError(f"a {dtype.name} tensor of {size} elements ({nbytes} bytes) "
                              f"exceeds the device's storage buffer limit of "
                              f"{self._max_buffer} bytes ({self.device})")
        return nbytes

    def _device_error(self, error: Exception, what: str) -> LaunchError:
        """The LaunchError for a wgpu call that failed while `what`; a lost device marks
        the client lost, so that later calls fail at once instead of waiting on it."""
        if isinstance(error, LaunchError):
            return error
        text = str(error).strip()
        if _LOST.search(text):
            return self._mark_lost(f"while {what}: {text.splitlines()[-1].strip()}")
        return LaunchError(f"wgpu failed while {what} on {self.device}: {text}")

    def _alloc(self, size: int, dtype: DType) -> Any:
        nbytes = self._buffer_bytes(size, dtype)
        with self._lock:
            self.check_alive()
            try:
                return self._device.create_buffer(size=nbytes, usage=self._storage_usage)
            except Exception as e:
                raise self._device_error(e, "allocating a buffer") from None

    def _upload(self, flat: np.ndarray, dtype: DType) -> Any:
        with self._lock:
            self.check_alive()
            try:
                return self._upload_locked(flat, dtype)
            except Exception as e:
                raise self._device_error(e, "uploading a tensor") from None

    def _upload_locked(self, flat: np.ndarray, dtype: DType) -> Any:
        nbytes = self._buffer_bytes(flat.size, dtype)
        if dtype is bool_:
            flat = flat.astype(np.uint32)
        data = flat.tobytes()
        if len(data) < nbytes:
            data += bytes(nbytes - len(data))
        # A new buffer is not used by any recorded dispatch: no ordering concern.
        return self._device.create_buffer_with_data(data=data, usage=self._storage_usage)

    def _write(self, handle: Any, flat: np.ndarray, dtype: DType) -> None:
        """Ordered after the launches recorded so far: `queue.write_buffer` runs before
        any command buffer submitted after it, so the open batch is submitted first."""
        if dtype is bool_:
            flat = flat.astype(np.uint32)
        data = np.ascontiguousarray(flat).tobytes()
        data += bytes(-len(data) % 4)  # write_buffer copies multiples of 4 bytes
        with self._lock:
            self.check_alive()
            try:
                self._flush()
                self._queue.write_buffer(handle, 0, data)
            except Exception as e:
                raise self._device_error(e, "writing a tensor") from None

    def _download(self, tensor: DeviceTensor) -> np.ndarray:
        with self._lock:
            self.check_alive()
            try:
                return self._download_locked(tensor)
            except Exception as e:
                raise self._device_error(e, "downloading a tensor") from None

    def _download_locked(self, tensor: DeviceTensor) -> np.ndarray:
        buf = tensor.handle
        nbytes = buf.size
        if self._staging_size < nbytes:
            grown = max(nbytes, 2 * self._staging_size, 4096)
            self._staging = self._device.create_buffer(
                size=grown,
                usage=self._wgpu.BufferUsage.MAP_READ | self._wgpu.BufferUsage.COPY_DST)
            self._staging_size = grown
            self.staging_allocations += 1
        # The copy follows the open batch's dispatches in their encoder: one submit.
        self._drain()
        encoder = self._close_batch() or self._device.create_command_encoder()
        encoder.copy_buffer_to_buffer(buf, 0, self._staging, 0, nbytes)
        self._submit(encoder)
        self._staging.map_sync(self._wgpu.MapMode.READ, 0, nbytes)
        try:
            raw = self._staging.read_mapped(0, nbytes)  # a copy
        finally:
            self._staging.unmap()
        self._unsynced = False  # the map waited for every earlier submit
        dtype = tensor.dtype
        if dtype is bool_:
            return np.frombuffer(raw, np.uint32, tensor.buffer_len) != 0
        return np.frombuffer(raw, dtype.numpy, tensor.buffer_len).copy()

    # -- compilation ------------------------------------------------------------------
    def compile(self, kernel: ir.Kernel, abi: KernelABI, checked: bool,
                compiled: Compiled | None = None) -> WgpuExecutable:
        """Builds the pipeline of the kernel's WGSL (generated now unless `compiled`
        carries it)."""
        if compiled is None:
            from ..codegen import generate
            compiled = generate(kernel, "wgsl", abi, checked)
        return self.compile_wgsl(compiled.source, abi, label=kernel.name,
                                 features=compiled.features, render=compiled.render,
                                 checks=self.generated_checks)

    def compile_wgsl(self, source: str, abi: KernelABI, label: str = "",
                     writable: Sequence[bool] | None = None,
                     features: frozenset[str] | None = None,
                     render: Any = None,
                     checks: ShaderChecks = ALL_CHECKS) -> WgpuExecutable:
        """Builds a pipeline for WGSL that follows the launch ABI: buffers at
        @group(0) @binding(i) in `abi.buffers` order (`var<storage, read>` for read-only
        ones), the info struct (read-only storage) at `abi.info_binding`, entry `main`.
        `writable` overrides which buffer bindings are read_write. `features` (names as
        in Compiled.features) says what the shader needs from the device; when None (a
        hand-written shader) it is read from the text. `render(promote)`, when given,
        re-renders the source with the bindings in `promote` read_write. `checks`: naga's
        runtime checks to keep (wgpu_modules: generated kernels drop bounds checks)."""
        if features is None:
            features = scan_features(source)
        wgpu = self._wgpu
        if writable is None:
            writable = [not b.read_only for b in abi.buffers]
        writable = tuple(writable)
        entries = []
        for i, w in enumerate(writable):
            kind = "storage" if w else "read-only-storage"
            entries.append({"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": kind}})
        info_size = -(-abi.size // 4) * 4 if abi.has_info else 0
        if info_size:
            entries.append({"binding": abi.info_binding,
                            "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": "read-only-storage",
                                       "has_dynamic_offset": True,
                                       "min_binding_size": info_size}})
        for name, (feature, what) in _DEVICE_FEATURES.items():
            if name in features and feature not in self.features:
                raise LaunchError(f"{label or 'the kernel'} uses {what}, which the device "
                                  f"{self.device!r} does not support (no {feature!r})")
        with self._lock:
            self.check_alive()
            exe = self._build_pipeline(source, abi, label, writable, entries, info_size,
                                       checks)
        exe.features, exe.render, exe.checks = frozenset(features), render, checks
        return exe

    def _build_pipeline(self, source: str, abi: KernelABI, label: str, writable: tuple,
                        entries: list, info_size: int,
                        checks: ShaderChecks) -> WgpuExecutable:
        device = self._device
        try:
            module = create_module(device, source, label, checks)
            layout = device.create_bind_group_layout(entries=entries)
            pipeline = device.create_compute_pipeline(
                label=label,
                layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
                compute={"module": module, "entry_point": "main"})
        except Exception as e:
            if _LOST.search(str(e)):
                raise self._device_error(e, f"building {label or 'a kernel'}") from None
            # Generated WGSL the device rejects is a compiler bug, not a user's mistake;
            # say so and show the source.
            raise LaunchError(f"the wgpu device rejected the generated WGSL of "
                              f"{label or 'a kernel'} (please report this): {e}\n"
                              f"--- WGSL ---\n{source}") from None
        return WgpuExecutable(source, abi, pipeline, layout, info_size, label=label,
                              writable=writable)

    def _alias_variant(self, exe: WgpuExecutable, handles: tuple) -> WgpuExecutable:
        """The executable to use when some buffer is bound twice: every binding of a
        buffer that is also bound writable becomes read_write (WGSL and layout)."""
        written = {h for h, w in zip(handles, exe.writable) if w}
        promote = frozenset(i for i, (h, w) in enumerate(zip(handles, exe.writable))
                            if not w and h in written)
        if not promote:
            return exe
        variant = exe.alias_variants.get(promote)
        if variant is None:
            if exe.render is not None:
                source = exe.render(promote)
            else:
                source = _promote_bindings(exe, promote)
            writable = tuple(w or i in promote for i, w in enumerate(exe.writable))
            variant = self.compile_wgsl(source, exe.abi, exe.label, writable,
                                        features=exe.features, render=exe.render,
                                        checks=exe.checks)
            exe.alias_variants[promote] = variant
        return variant

    # -- launching --------------------------------------------------------------------
    def _bind_group(self, exe: WgpuExecutable, key: tuple, handles: tuple) -> Any:
        """The bind group for these buffers, cached under their ids. The cache does not
        keep buffers alive: when a buffer is freed, its bind groups are dropped (before
        its id can be reused)."""
        if self._freed:
            self._drop_freed()
        cache = exe.bind_groups
        bg = cache.get(key)
        if bg is not None:
            cache.move_to_end(key)
            return bg
        exe.bind_group_misses += 1
        entries = [{"binding": i, "resource": {"buffer": h, "offset": 0, "size": h.size}}
                   for i, h in enumerate(handles)]
        if exe.info_size:
            entries.append({"binding": exe.abi.info_binding,
                            "resource": {"buffer": self._info_buffer, "offset": 0,
                                         "size": exe.info_size}})
        bg = self._device.create_bind_group(layout=exe.layout, entries=entries)
        cache[key] = bg
        if len(cache) > BIND_GROUP_CACHE:
            cache.popitem(last=False)
        for h in handles:
            users = self._bind_group_users.get(id(h))
            if users is None:
                users = self._bind_group_users[id(h)] = set()
                weakref.finalize(h, self._forget_buffer, id(h)).atexit = False
            users.add((exe, key))
        return bg

    def _forget_buffer(self, handle_id: int) -> None:
        """A buffer's finalizer: runs in whichever thread frees it, possibly while another
        thread holds the lock (or this one holds another client's), so it never waits:
        the id is queued, and dropped now if the lock is free, else by the next
        `_bind_group` (which runs before any new buffer can be bound under that id)."""
        self._freed.append(handle_id)
        if self._lock.acquire(blocking=False):
            try:
                self._drop_freed()
            finally:
                self._lock.release()

    def _drop_freed(self) -> None:
        """Drops the bind groups of freed buffers (the caller holds the lock)."""
        while self._freed:
            for exe, key in self._bind_group_users.pop(self._freed.pop(), ()):
                exe.bind_groups.pop(key, None)

    def _grid(self, cube_count: tuple[int, int, int]) -> tuple[int, int, int]:
        """The workgroup grid for a logical cube count (folded when too large)."""
        m = self._max_groups
        x, y, z = cube_count
        if x <= m and y <= m and z <= m:
            return cube_count
        total = x * y * z
        if total > 0xFFFFFFFF:
            raise LaunchError(f"cube_count {cube_count} has {total} cubes; positions are "
                              f"u32, so at most {0xFFFFFFFF} fit", "cube_count")
        gx = min(total, m)
        gy = min(-(-total // gx), m)
        gz = -(-total // (gx * gy))
        if gz > m:
            raise LaunchError(f"cube_count {cube_count} is too large for the device "
                              f"({self.device})", "cube_count")
        return gx, gy, gz

    def dispatch(self, executable: WgpuExecutable, cube_count: tuple[int, int, int],
                 cube_dim: tuple[int, int, int], buffers: Sequence[DeviceTensor],
                 info: bytes) -> None:
        """Records one launch; it is submitted with the batch (see the module doc)."""
        with self._lock:
            if self.lost is not None:
                self.check_alive()
            try:
                # The common case, a launch repeating the previous one of the open pass
                # (kernel, cube count and buffers): its pipeline and bind group are in
                # place, and so is its info slice when the info bytes are the same;
                # other bytes (a scalar that changes) take the next slice.
                last = self._last_launch
                if (last is not None and last[0] is executable and last[1] == cube_count
                        and self._pending < self._check_at
                        and buffers == last[3]  # the same tensors (`is` per item)
                        and (last[2] == info or self._rebind_info(last, info))):
                    self._calls.dispatch(self._pass_handle, *self._last_grid)
                    self._pending += 1
                    return
                self._record(executable, cube_count, buffers, info)
            except Exception as e:
                raise self._device_error(e, f"recording {executable.label or 'a launch'}") \
                    from None

    def _record(self, executable: WgpuExecutable, cube_count: tuple[int, int, int],
                buffers: Sequence[DeviceTensor], info: bytes) -> None:
        m = self._max_groups
        if cube_count[0] > m or cube_count[1] > m or cube_count[2] > m:
            grid = self._grid(cube_count)
        else:
            grid = cube_count
        handles = tuple([b.handle for b in buffers])
        key = tuple(map(id, handles))
        launched = executable
        if len(set(key)) != len(key):
            executable = self._alias_variant(executable, handles)
        info_size = executable.info_size
        if ((0 < self._check_at <= self._pending and self._batch_due())
                or self._info_used + info_size > INFO_CAPACITY):
            self._flush(background=self.background_submits)
        bg = self._bind_group(executable, key, handles)
        calls = self._calls
        if self._pass is None:
            self._open_pass()
        if self._pass_pipeline is not executable.pipeline:
            calls.set_pipeline(self._pass_handle, executable.pipeline)
            self._pass_pipeline = executable.pipeline
            self._pass_bind_group = None
        # A launch repeating the previous one's buffers and info reuses its binding.
        if bg is not self._pass_bind_group or info != self._pass_info:
            offset = None
            if info_size:
                offset = self._info_used
                self._info_host[offset:offset + len(info)] = info
                self._info_used = (-(-(offset + info_size) // self._info_align)
                                   * self._info_align)
            calls.set_bind_group(self._pass_handle, bg, offset)
            self._pass_bind_group, self._pass_info = bg, info
        calls.dispatch(self._pass_handle, *grid)
        if not self._pending:
            self._batch_start = time.perf_counter()
            self._check_at = min(BATCH_CHECK, MAX_BATCH)
        self._pending += 1
        self._last_launch = (launched, cube_count, info, list(buffers))
        self._last_grid, self._last_info_size = grid, info_size

    def _rebind_info(self, last: tuple, info: bytes) -> bool:
        """Binds the previous launch's bind group again with `info` in the next slice;
        False (nothing done) when the batch's info buffer is full."""
        offset, size = self._info_used, self._last_info_size
        if offset + size > INFO_CAPACITY:
            return False
        self._info_host[offset:offset + len(info)] = info
        self._info_used = -(-(offset + size) // self._info_align) * self._info_align
        self._calls.set_bind_group(self._pass_handle, self._pass_bind_group, offset)
        self._pass_info = info
        self._last_launch = (last[0], last[1], info, last[3])
        return True

    def _batch_due(self) -> bool:
        """Whether the open batch is to be submitted now (it holds MAX_BATCH dispatches
        or has been open BATCH_SECONDS); if not, when to ask again."""
        pending = self._pending
        if pending >= MAX_BATCH or time.perf_counter() - self._batch_start > BATCH_SECONDS:
            return True
        self._check_at = min(pending + BATCH_CHECK, MAX_BATCH)
        return False

    def _open_pass(self, timestamp_writes: dict | None = None) -> None:
        """A compute pass for the next launches, in the open batch's encoder (a new
        encoder when no batch is open), with the pass's own `timestamp_writes` when
        given."""
        if self._encoder is None:
            self._encoder = self._device.create_command_encoder()
        self._pass = self._encoder.begin_compute_pass(timestamp_writes=timestamp_writes)
        self._pass_handle = self._calls.handle(self._pass)
        self._pass_pipeline = None

    def _close_batch(self) -> Any:
        """Ends the open compute pass and returns its encoder (None when no launch is
        recorded: an empty pass stays open), for `_submit` after the caller has recorded
        what must follow."""
        if self._encoder is None or not (self._pending or self._marked):
            return None
        encoder = self._encoder
        self._end_pass()
        self._encoder = None
        self._pending = self._check_at = 0
        self._marked = False
        return encoder

    def _end_pass(self) -> None:
        """Ends the open compute pass, if any; its encoder (the batch) stays open, so
        what is recorded next goes into the same command buffer."""
        cpass = self._pass
        if cpass is None:
            return
        # Reset first: a validation error surfacing later must not wedge the client.
        # The bind group and the last launch go too: they reference their buffers, so
        # keeping them would keep the memory of tensors dropped before this submit.
        self._pass = self._pass_pipeline = self._pass_bind_group = None
        self._pass_handle = self._last_launch = self._timed_end = None
        self._pass_info = b""
        cpass.end()

    def _submit(self, encoder: Any, background: bool = False) -> None:
        """Writes the batch's info structs, then submits `encoder` (the write is queued
        before the submit, so every dispatch in it reads its own slice).

        `background`: handed to the client's submitting thread (wgpu_submit.py), which
        does the write, `finish()` and the submit while this thread records the next
        batch. Otherwise submitted here; the caller has waited for the handed batches
        (`_drain`, before closing the batch), so the queue sees every submit in the
        order the batches were closed."""
        used, self._info_used = self._info_used, 0
        self._unsynced = True
        info = None
        # A repeated launch + sync writes nothing: the device holds those bytes.
        # (A bytearray slice compares with memcmp; a memoryview item by item.)
        if used and (used > 4096 or self._info_host[:used] != self._info_written):
            # Handed over, a copy: the host bytes are the next batch's from now on.
            info = bytes(self._info_host[:used]) if background \
                else memoryview(self._info_host)[:used]
            self._info_written = b""
        self.submits += 1
        try:
            if background:
                self._submitter.hand(encoder, info)
            else:
                self._submitter.submit(encoder, info)
        except Exception as e:
            raise self._submit_error(e) from None
        if info is not None and used <= 4096:
            self._info_written = bytes(info)

    def _drain(self) -> None:
        """Waits for the batches handed to the submitting thread."""
        try:
            self._submitter.drain()
        except Exception as e:
            raise self._submit_error(e) from None

    def _submit_error(self, error: Exception) -> LaunchError:
        """The LaunchError of a failed submit (its batch is dropped). The info bytes on
        the device are then unknown, so the next submit writes them."""
        self._info_written = b""
        return self._device_error(error, "submitting launches")

    def _flush(self, background: bool = False) -> None:
        """Submits the recorded dispatches (with their info structs) if there are any;
        `background`: see `_submit`. A flush in this thread first waits for the handed
        batches, so that what follows it on the queue comes after them (and a handed
        batch's error leaves the open batch as it is)."""
        if not background:
            self._drain()
        encoder = self._close_batch()
        if encoder is not None:
            self._submit(encoder, background)

    def flush(self) -> None:
        """Submits the open batch of launches without waiting for it."""
        with self._lock:
            self.check_alive()
            try:
                self._flush()
            except Exception as e:
                raise self._device_error(e, "submitting launches") from None

    # -- timing (cubepy/timing.py) -----------------------------------------------------
    def timestamp_query_set(self, count: int) -> Any:
        """A query set of `count` timestamps (the device needs `timestamp-query`)."""
        return self._device.create_query_set(type=self._wgpu.QueryType.timestamp,
                                             count=count)

    def start_timed_pass(self, query_set: Any, begin: int, end: int) -> None:
        """Opens the compute pass the next launches go into, in the open batch, with the
        pass's own timestamps: `begin` written as it starts, `end` as it ends.
        `stop_timed_pass` ends it.

        These are the timestamps a raw wgpu-py program takes of its own pass. Marks
        written inside the pass around the launches (`write_timestamp`) read about 2.5 us
        longer on an H200's Vulkan driver (benchmarks/results/wgpu_rows_h200.md), and an
        empty pass of its own before them about 1 us longer."""
        with self._lock:
            self.check_alive()
            self._end_pass()
            if self._encoder is None:
                self._encoder = self._device.create_command_encoder()
            self._open_pass({"query_set": query_set, "beginning_of_pass_write_index": begin,
                             "end_of_pass_write_index": end})
            self._timed_end = end
            self._marked = True

    def stop_timed_pass(self, query_set: Any, fallback: int) -> int:
        """Ends the pass `start_timed_pass` opened, whose end timestamp then follows the
        launches recorded since, and returns its index. When that pass has already
        ended (a submit, a copy or a clear came between), writes timestamp `fallback`
        after the work recorded so far (`write_timestamp`) and returns `fallback`."""
        with self._lock:
            self.check_alive()
            end = self._timed_end
            if self._pass is not None and end is not None:
                self._end_pass()
                return end
            self.write_timestamp(query_set, fallback)
            return fallback

    def write_timestamp(self, query_set: Any, index: int) -> None:
        """Records timestamp `index` into the open batch, written once the work recorded
        before it is done. Nothing is submitted, so the host's time between submits (a
        wgpu submit costs tens of microseconds) is not counted as the launches' time.

        With `timestamp-query-inside-passes` the mark goes into the compute pass the
        launches are recorded in (opened here when none is); else it is an empty pass
        of its own, whose boundaries the GPU pays too (about 1 us before the timed
        launches and 5-6 us after them on an H200's Vulkan driver). The timer takes a
        pass's own timestamps instead (`start_timed_pass`), and this only for a stop
        whose pass has already ended."""
        with self._lock:
            self.check_alive()
            if not self._in_pass_timestamps:
                self._end_pass()
            if self._encoder is None:
                self._encoder = self._device.create_command_encoder()
            if self._in_pass_timestamps:
                if self._pass is None:
                    self._open_pass()
                write_timestamp_in(self._pass, query_set, index)
            else:
                cpass = self._encoder.begin_compute_pass(timestamp_writes={
                    "query_set": query_set, "beginning_of_pass_write_index": index})
                cpass.end()
            self._marked = True

    def read_timestamps(self, query_set: Any, count: int) -> tuple[int, ...]:
        """Waits for the work and returns the first `count` timestamps (nanoseconds)."""
        wgpu = self._wgpu
        with self._lock:
            self.check_alive()
            self._flush()
            size = 8 * count
            resolve = self._device.create_buffer(
                size=size, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
            read = self._device.create_buffer(
                size=size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
            encoder = self._device.create_command_encoder()
            encoder.resolve_query_set(query_set, 0, count, resolve, 0)
            encoder.copy_buffer_to_buffer(resolve, 0, read, 0, size)
            self._queue.submit([encoder.finish()])
            read.map_sync(wgpu.MapMode.READ)
            values = tuple(np.frombuffer(read.read_mapped(), dtype=np.uint64).tolist())
            read.unmap()
            self._unsynced = False
            return values

    def sync(self) -> None:
        """Submits the open batch and waits for every launch so far: wgpuDevicePoll
        with wait (`on_submitted_work_done_sync` fails in wgpu-py 0.32), else a small
        mapped read after the last submit."""
        with self._lock:
            self.check_alive()
            try:
                self._sync_locked()
            except Exception as e:
                raise self._device_error(e, "waiting for launches") from None

    def _sync_locked(self) -> None:
        self._flush()
        if not self._unsynced:
            return
        if self._pass is None:
            # The next batch's encoder and pass, made while the device works (a loop
            # of launch + sync then pays for them inside the wait, not after it).
            self._open_pass()
        if self._wait_idle is not None:
            self._wait_idle()
        else:
            self._mapped_read_wait()
        self._unsynced = False

    def _mapped_read_wait(self) -> None:
        """Waits with a small copy and a mapped read after the last submit."""
        wgpu = self._wgpu
        if getattr(self, "_sync_src", None) is None:
            self._sync_src = self._device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC)
            self._sync_dst = self._device.create_buffer(
                size=4, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        encoder = self._device.create_command_encoder()
        encoder.copy_buffer_to_buffer(self._sync_src, 0, self._sync_dst, 0, 4)
        self._queue.submit([encoder.finish()])
        self.submits += 1
        self._sync_dst.map_sync(wgpu.MapMode.READ)
        self._sync_dst.unmap()
