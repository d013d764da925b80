"""The launch ABI: how a specialised kernel receives its buffers, metadata and scalars.

One layout serves every target, so code generators and runtimes agree by construction:

- Buffers: every tensor/array parameter the kernel uses, in parameter order. CUDA takes
  them as pointer parameters, WGSL as `@group(0) @binding(i)` storage buffers, Metal as
  `[[buffer(i)]]`.
- Info: one struct holding shapes, strides, lengths, scalar parameters and (where a
  target needs it) the cube count. CUDA receives it by value as the last parameter, WGSL
  as a read-only storage buffer at binding len(buffers), Metal as a `constant` buffer at
  index len(buffers). Fields use natural alignment (C and WGSL storage rules agree for
  these types) and are ordered by decreasing alignment, so no padding is needed between
  them. Shapes and strides are `u32[MAX_RANK]`; bool scalars travel as u32.
- Addresses: a line buffer's address is a multiple of `line_access_bytes` unless the
  specialisation names it misaligned (then its lines are accessed element by element).

The host packs the info with one precompiled `struct.Struct` per ABI.
"""
from __future__ import annotations

import struct
from .ir.batched_dataclass import dataclass  # (frozen classes, cheap to create)

from typing import TYPE_CHECKING

from .ir.dtype_facts import facts
from .ir.types import DType, bool_, f32, u32

if TYPE_CHECKING:  # the IR loads with the first compile or runtime, not with `import cubepy`
    from .ir import nodes as n

MAX_RANK = 8
MAX_LINE_ACCESS_BYTES = 16  # the widest vector access of a line (CUDA's float4, uint4)


def line_access_bytes(line_size: int, dtype: DType) -> int:
    """The alignment whole-line accesses need: the line's bytes, at most 16 (a wider
    line is accessed 16 bytes at a time)."""
    return min(line_size * dtype.itemsize, MAX_LINE_ACCESS_BYTES)


def scalar_storage(t: DType) -> DType:
    """The type a scalar parameter of type `t` travels as in the info struct: bool as
    u32 (WGSL has no bool in a uniform), a float type that `struct` cannot pack (bf16)
    as f32, which the kernel converts on entry; others as themselves."""
    if t is bool_:
        return u32
    return t if facts(t).struct_code is not None else f32


def _struct_code(t: DType) -> str:
    code = facts(t).struct_code
    if code is None:  # pragma: no cover - scalar_storage keeps such types out
        raise KeyError(t.name)
    return code


@dataclass(frozen=True)
class BufferBinding:
    """A global buffer parameter as the kernel sees it."""

    name: str
    dtype: DType
    kind: str  # "tensor" or "array"
    read_only: bool  # never stored to nor used atomically
    atomic: bool  # some atomic operation targets it


@dataclass(frozen=True)
class InfoField:
    """One field of the info struct.

    kind: "buffer_len", "len", "rank", "shape", "stride" (of buffer `param`),
    "scalar" (parameter `param`), or "cube_count" (u32[3]).
    """

    name: str
    kind: str
    param: str
    dtype: DType  # storage type (bool scalars are stored as u32, bf16 ones as f32)
    count: int  # 1, MAX_RANK for shape/stride, 3 for cube_count
    offset: int  # bytes from the start of the struct


@dataclass(frozen=True)
class KernelABI:
    buffers: tuple[BufferBinding, ...]
    fields: tuple[InfoField, ...]
    size: int  # bytes of the info struct, 0 when there is none
    struct_format: str  # struct module format of the info struct

    @property
    def has_info(self) -> bool:
        return bool(self.fields)

    def field(self, kind: str, param: str = "") -> InfoField | None:
        for f in self.fields:
            if f.kind == kind and f.param == param:
                return f
        return None

    def binding_index(self, name: str) -> int:
        for i, b in enumerate(self.buffers):
            if b.name == name:
                return i
        raise KeyError(name)

    @property
    def info_binding(self) -> int:
        return len(self.buffers)


def compute_abi(kernel: n.Kernel, checked: bool, needs_cube_count: bool = False) -> KernelABI:
    """The ABI of a specialised kernel. `checked` keeps the buffer lengths used by bounds
    checks; `needs_cube_count` adds the cube count for targets that compute positions
    themselves (WGSL folds dispatches larger than 65535 per dimension)."""
    from .ir import nodes as n
    from .ir.visit import walk_all_exprs, walk_stmts
    meta_used: set[tuple[str, str]] = set()
    stored: set[str] = set()
    atomic: set[str] = set()
    accessed: set[str] = set()
    tiled: set[str] = set()  # buffers cmma fragments load from or store to
    tile_stored: set[str] = set()  # those stored to
    uses_cube_count = needs_cube_count
    for expr in walk_all_exprs(kernel.body):
        if isinstance(expr, n.Meta):
            meta_used.add((expr.buffer.name, expr.kind))
        elif isinstance(expr, n.Index):
            accessed.add(expr.buffer.name)
        elif isinstance(expr, n.Builtin) and expr.name.startswith("cube_count"):
            uses_cube_count = True
    for stmt in walk_stmts(kernel.body):
        if isinstance(stmt, (n.Store, n.StoreLine)):
            stored.add(stmt.buffer.name)
        elif isinstance(stmt, (n.LoadLine, n.MatrixScaleBy)):
            accessed.add(stmt.buffer.name)
        elif isinstance(stmt, n.AsyncCopy):
            accessed.add(stmt.src.name)
            stored.add(stmt.dst.name)
        elif isinstance(stmt, n.AtomicOp):
            atomic.add(stmt.buffer.name)
        elif isinstance(stmt, n.MatrixLoad):
            tiled.add(stmt.buffer.name)
        elif isinstance(stmt, n.MatrixStore):
            tiled.add(stmt.buffer.name)
            tile_stored.add(stmt.buffer.name)
    # element accesses are bounds-checked against buffer_len, and so are cmma tiles (a
    # checked CUDA launch stages them through shared memory; the cpu runtime checks
    # every access); an unchecked launch needs no length
    checked_access = accessed | stored | atomic | tiled
    stored |= tile_stored
    accessed |= stored | atomic | tiled

    buffers = []
    candidates: list[tuple[int, InfoField]] = []  # (alignment, field without offset)
    for p in kernel.params:
        if p.kind == "scalar":
            storage = scalar_storage(p.dtype)
            candidates.append((storage.itemsize,
                               InfoField(p.name, "scalar", p.name, storage, 1, 0)))
            continue
        used_kinds = {k for (name, k) in meta_used if name == p.name}
        if p.name not in accessed and not used_kinds:
            continue
        buffers.append(BufferBinding(p.name, p.dtype, p.kind, p.name not in stored | atomic,
                                     p.name in atomic))
        if checked and p.name in checked_access:
            used_kinds.add("buffer_len")
        for kind in ("buffer_len", "len", "rank", "shape", "stride"):
            if kind in used_kinds:
                count = MAX_RANK if kind in ("shape", "stride") else 1
                candidates.append((4, InfoField(f"{p.name}_{kind}", kind, p.name, u32,
                                                count, 0)))
    if uses_cube_count:
        candidates.append((4, InfoField("cube_count", "cube_count", "", u32, 3, 0)))

    # Decreasing alignment: every field then starts aligned without padding.
    candidates.sort(key=lambda c: -c[0])
    fields, offset, fmt = [], 0, "<"
    for _, f in candidates:
        fields.append(InfoField(f.name, f.kind, f.param, f.dtype, f.count, offset))
        offset += f.dtype.itemsize * f.count
        fmt += (f"{f.count}" if f.count > 1 else "") + _struct_code(f.dtype)
    align = max((c[0] for c in candidates), default=1)
    size = -(-offset // align) * align if fields else 0
    if size > offset:
        fmt += f"{size - offset}x"
    return KernelABI(tuple(buffers), tuple(fields), size, fmt)


def info_values(abi: KernelABI, tensor_meta: dict, scalars: dict,
                cube_count: tuple[int, int, int]) -> list:
    """The flat value list for `struct.pack(abi.struct_format, *values)`.

    tensor_meta maps a buffer name to an object with `buffer_len`, `len`, `shape` and
    `strides` (in elements); scalars maps a scalar parameter to its Python value.
    Runtimes on a hot path may precompile this; this is the reference.
    """
    values: list = []
    for f in abi.fields:
        if f.kind == "scalar":
            v = scalars[f.param]
            values.append(int(bool(v)) if f.dtype is u32 and isinstance(v, bool) else v)
        elif f.kind == "cube_count":
            values.extend(cube_count)
        else:
            t = tensor_meta[f.param]
            if f.kind == "buffer_len":
                values.append(t.buffer_len)
            elif f.kind == "len":
                values.append(t.len)
            elif f.kind == "rank":
                values.append(len(t.shape))
            else:
                seq = t.shape if f.kind == "shape" else t.strides
                values.extend(tuple(seq) + (0,) * (MAX_RANK - len(seq)))
    return values


def pack_info(abi: KernelABI, tensor_meta: dict, scalars: dict,
              cube_count: tuple[int, int, int]) -> bytes:
    """The info struct's bytes for one launch."""
    return struct.pack(abi.struct_format, *info_values(abi, tensor_meta, scalars, cube_count))
