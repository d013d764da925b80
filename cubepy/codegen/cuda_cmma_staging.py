"""cmma loads and stores of a checked CUDA launch, through a per-plane staging tile.

wmma::load_matrix_sync / store_matrix_sync need a 32-byte aligned tile pointer and a row
pitch (ldm) that is a multiple of 16 bytes, and check no bounds: a misaligned offset or
stride kills the CUDA context and a tile past a buffer's end reads or writes outside it.
A checked launch therefore moves every tile through shared memory: the plane's 32 lanes
copy it element by element with the usual checked-launch rule (an element past the
buffer's length reads 0; a store there is dropped) between the buffer and an aligned
staging tile of the plane, whose ldm is the tile's contiguous extent (a multiple of 8
elements, so of 16 bytes), and the fragment loads from / stores to that tile.

A tile in a SharedMemory at a constant, aligned offset and stride, wholly inside it, is
accessed directly (provably_direct). The kernel declares one staging tile per plane (`__shared__ __align__(32) unsigned char
cube_cmma_staging[...]`), sized for the largest tile it accesses; each access is a call
of a prelude helper per fragment shape, type and layout.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.visit import walk_stmts
from ..targets import CUDA_PLANE, WMMA_STRIDE_ALIGN, WMMA_TILE_ALIGN, cmma_staging_bytes

if TYPE_CHECKING:
    from .clike import CEmitter

PLANE_LANES = CUDA_PLANE  # a CUDA warp
STAGING = "cube_cmma_staging"  # the kernel's shared staging memory (every plane's tile)
TILE = "cube_cmma_tile"  # this plane's tile in it
LANE = "cube_cmma_lane"  # this unit's lane in its plane


def provably_direct(kernel: n.Kernel, s: n.MatrixLoad | n.MatrixStore) -> bool:
    """Whether a tile is safe for wmma without staging: in a SharedMemory (32-byte
    aligned when cmma uses it), at a constant offset and stride that meet wmma's
    alignment rule, and wholly inside the array."""
    if s.buffer.space != "shared" or not isinstance(s.offset, n.Const) \
            or not isinstance(s.stride, n.Const):
        return False
    d, size = s.frag.matrix, s.frag.matrix.storage.itemsize
    offset, stride = int(s.offset.value), int(s.stride.value)
    layout = s.layout or d.layout
    outer, inner = (d.rows, d.cols) if layout == "row_major" else (d.cols, d.rows)
    length = next(x.size for x in kernel.shared if x.buffer.name == s.buffer.name)
    return (offset * size % WMMA_TILE_ALIGN == 0 and stride * size % WMMA_STRIDE_ALIGN == 0
            and stride >= inner
            and 0 <= offset and offset + (outer - 1) * stride + inner <= length)


def staged_tile_bytes(kernel: n.Kernel) -> int:
    """Bytes of the largest tile the kernel's staged cmma loads and stores move (0 if
    none)."""
    sizes = [s.frag.matrix.rows * s.frag.matrix.cols * s.frag.matrix.storage.itemsize
             for s in walk_stmts(kernel.body)
             if isinstance(s, (n.MatrixLoad, n.MatrixStore)) and not s.frag.matrix.warpgroup
             and not provably_direct(kernel, s)]
    return max(sizes, default=0)


def staging_bytes(kernel: n.Kernel, checked: bool) -> int:
    """Shared memory a checked CUDA launch of `kernel` adds for cmma staging: one tile
    per plane of the cube (0 when unchecked or without cmma loads and stores)."""
    if not checked:
        return 0
    return cmma_staging_bytes(kernel.units_per_cube, staged_tile_bytes(kernel))


def _declare_staging(em: CEmitter) -> None:
    """The staging memory, this plane's tile in it and the unit's lane, once at entry."""
    if STAGING in em.prologue_names:
        return
    em.prologue_names[STAGING] = STAGING
    tile_bytes = staged_tile_bytes(em.kernel)
    unit = em.composite_builtin("unit_pos")
    em.prologue.append(f"__shared__ __align__({WMMA_TILE_ALIGN}) unsigned char "
                       f"{STAGING}[{staging_bytes(em.kernel, True)}];")
    em.prologue.append(f"unsigned char* const {TILE} = "
                       f"{STAGING} + ({unit} / {PLANE_LANES}u) * {tile_bytes}u;")
    em.prologue.append(f"const unsigned {LANE} = {unit} % {PLANE_LANES}u;")


def _limit(em: CEmitter, buffer: n.BufferRef) -> str:
    """The buffer's length in elements, as the bounds rule of a checked launch reads it."""
    if buffer.space == "shared":
        return f"{em.shared_size[buffer.name]}u"
    return em.info("buffer_len", buffer.name)


def _helper_name(kind: str, d: n.MatrixDecl, layout: str) -> str:
    return (f"cube_cmma_{kind}_{d.ident}_{d.m}x{d.n}x{d.k}_{d.elem}_"
            f"{layout.replace('_major', '')}")


def _ldm(d: n.MatrixDecl, layout: str) -> int:
    """The staging tile's pitch: its contiguous extent (columns when row major)."""
    return d.cols if layout == "row_major" else d.rows


def load(em: CEmitter, s: n.MatrixLoad, frag_type: str, frag: str, elem: str,
         wmma: str, load_call) -> None:
    """A checked cmma.load / load_with_layout: buffer -> staging tile -> fragment
    (`load_call`: the spelling's statement for a fragment load, WmmaSpelling.load_call)."""
    d = s.frag.matrix
    layout = s.layout or d.layout
    ldm = _ldm(d, layout)
    zero = em.d.literal(0, d.storage)[0]
    fragment_load = load_call(em, d, "frag", "tile", str(ldm), s.layout, True)
    name = em.helper(_helper_name("load", d, layout), f"""
// the {d.rows}x{d.cols} {layout} tile at buf[offset], `stride` apart, copied by the
// plane's lanes into its aligned staging tile (elements at or past len read 0), then
// loaded from there: any offset, stride and length is safe
{{fn}} void {_helper_name("load", d, layout)}({frag_type}& frag, const {elem}* buf,
        unsigned long long offset, unsigned long long stride, unsigned long long len,
        unsigned char* staging, unsigned lane) {{
    {elem}* tile = reinterpret_cast<{elem}*>(staging);
    for (unsigned e = lane; e < {d.rows * d.cols}u; e += {PLANE_LANES}u) {{
        const unsigned long long i = offset + (e / {ldm}u) * stride + e % {ldm}u;
        tile[e] = i < len ? buf[i] : {zero};
    }}
    __syncwarp();
    {fragment_load}
    __syncwarp();  // every lane has its elements before the tile is reused
}}""")
    _declare_staging(em)
    em.line(f"{name}({frag}, {em.buffer(s.buffer)}, {em.expr(s.offset)}, "
            f"{em.expr(s.stride)}, {_limit(em, s.buffer)}, {TILE}, {LANE});")


def store(em: CEmitter, s: n.MatrixStore, frag_type: str, frag: str, elem: str,
          wmma: str) -> None:
    """A checked cmma.store: fragment -> staging tile -> buffer."""
    d = s.frag.matrix
    ldm = _ldm(d, s.layout)
    mem_layout = f"{wmma}::mem_{s.layout.replace('_major', '')}_major"
    name = em.helper(_helper_name("store", d, s.layout), f"""
// the fragment stored into the plane's aligned staging tile, then copied by its lanes
// to the {d.rows}x{d.cols} {s.layout} tile at buf[offset], `stride` apart (elements at
// or past len are dropped): any offset, stride and length is safe
{{fn}} void {_helper_name("store", d, s.layout)}({elem}* buf, unsigned long long offset,
        const {frag_type}& frag, unsigned long long stride, unsigned long long len,
        unsigned char* staging, unsigned lane) {{
    {elem}* tile = reinterpret_cast<{elem}*>(staging);
    {wmma}::store_matrix_sync(tile, frag, {ldm}, {mem_layout});
    __syncwarp();
    for (unsigned e = lane; e < {d.rows * d.cols}u; e += {PLANE_LANES}u) {{
        const unsigned long long i = offset + (e / {ldm}u) * stride + e % {ldm}u;
        if (i < len) {{
            buf[i] = tile[e];
        }}
    }}
    __syncwarp();  // every lane has copied its elements before the tile is reused
}}""")
    _declare_staging(em)
    em.line(f"{name}({em.buffer(s.buffer)}, {em.expr(s.offset)}, {frag}, "
            f"{em.expr(s.stride)}, {_limit(em, s.buffer)}, {TILE}, {LANE});")
