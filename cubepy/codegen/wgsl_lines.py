"""Whole-line accesses (LoadLine / StoreLine) as WGSL vector loads and stores.

A storage buffer or workgroup array whose lines are read or written whole is declared
as an array of vectors, `array<vec4<f32>>` instead of `array<f32>`, and a line is then
`buf[line]`: one access instead of one per element. Vectors hold at most 4 components,
so a line of 8 f32 is two vectors, `buf[line * 2u]` and `buf[line * 2u + 1u]`.
Element accesses to such a buffer index a vector's component (`buf[i / 4][i % 4]`,
wgsl_memory.element_slot); atomics never meet one (scalarize_lines keeps the lines of
a buffer used atomically element by element, and so does a misaligned specialisation,
which wgpu never makes: it binds every buffer from its start).

A line of 8 f16 is one 16-byte access instead of two 8-byte ones: the buffer is
`array<vec4<u32>>`, two f16 to a word, low half first (the order of memory), and a line
converts through f32 with `unpack2x16float` / `pack2x16float` (naga types
`bitcast<vec2<f16>>(u32)` as f32, so it cannot reinterpret the bits). f16 -> f32 -> f16
gives back every f16 but a NaN's payload: a NaN stays a NaN, its payload bits may
change. An element read unpacks its word. An element store would be a read-modify-write
of a 32-bit word whose other half may belong to another unit's line, racing with that
unit's store, so an f16 buffer takes this form only when every write to it is a
whole-line store of 8 (no element store, no memcpy_async or matrix store into it) and
it is never used atomically; the buffer is otherwise `array<vec4<f16>>` (two vectors a
line). Buffers that are only read take it whatever their element reads. The one
element store such a buffer meets is a checked launch's tail path for a line partly
past the end (wgsl_memory.write_slot): both halves of each word it rewrites lie in that
same line, written by that same unit one element after the other, and the store
replaces only its own 16 bits, so the half past the end keeps its bits.

The wgpu runtime rounds every buffer up to 16 bytes, so that each element below
`buffer_len` lies inside the array of vectors, and bounds stay counted in elements. A
checked launch keeps the vector access for lines wholly in range and checks each
element of the others, exactly as the element path does:

    if (line * 4u + 3u < info.x_buffer_len) { vector access } else { element accesses }
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..ir import nodes as n
from ..ir.passes.line_access import element_accesses, line_element_index
from ..ir.visit import walk_stmts
from .wgsl_expr import wgsl_type
from .wgsl_memory import F16_WORDS, BufferView, f16_half, f16_pair, store_helper

if TYPE_CHECKING:
    from .wgsl import _WgslEmitter

VECTOR_ELEMS = frozenset({"f32", "i32", "u32", "f16"})  # WGSL's vector component types
MAX_WIDTH = 4  # vec4: WGSL's widest vector
XYZW = "xyzw"


def vector_widths(kernel: n.Kernel) -> dict[tuple[str, str], int]:
    """(space, name) -> the elements of one stored vector, for every buffer and
    shared array all of whose whole-line accesses have one line size that whole
    vectors cover: 8 for an f16 buffer stored as `vec4<u32>` word groups, else at most
    4. The others stay arrays of scalars (their lines go element by element)."""
    sizes: dict[tuple[str, str], set[int]] = {}
    atomic: set[tuple[str, str]] = set()
    element_stores: set[tuple[str, str]] = set()
    for s in walk_stmts(kernel.body):
        if isinstance(s, (n.LoadLine, n.StoreLine)):
            count = len(s.parts) if isinstance(s, n.LoadLine) else len(s.values)
            sizes.setdefault((s.buffer.space, s.buffer.name), set()).add(count)
        elif isinstance(s, n.AtomicOp):
            atomic.add((s.buffer.space, s.buffer.name))
        elif isinstance(s, (n.Store, n.MatrixStore)):
            element_stores.add((s.buffer.space, s.buffer.name))
        elif isinstance(s, n.AsyncCopy):  # element stores where it is no native copy
            element_stores.add((s.dst.space, s.dst.name))
    elems = {("global", p.name): p.dtype for p in kernel.params if p.kind != "scalar"}
    elems.update({("shared", d.buffer.name): d.buffer.elem for d in kernel.shared})
    shared_sizes = {d.buffer.name: d.size for d in kernel.shared}
    widths = {}
    for key, found in sizes.items():
        if len(found) != 1 or key in atomic or key not in elems:
            continue
        (size,) = found
        width = min(size, MAX_WIDTH)
        if elems[key].name not in VECTOR_ELEMS or size % width or width < 2:
            continue
        if key[0] == "shared" and shared_sizes[key[1]] % width:
            continue
        words = (elems[key].name == "f16" and size == F16_WORDS
                 and key not in element_stores
                 and not (key[0] == "shared" and shared_sizes[key[1]] % F16_WORDS))
        widths[key] = F16_WORDS if words else width
    return widths


def load_line(em: "_WgslEmitter", s: n.LoadLine) -> None:
    """`parts = buffer[line]` as vector loads (in a checked launch, the elements past
    the end read 0)."""
    view = em.view(s.buffer)
    size, width = len(s.parts), view.width

    def elements() -> None:
        for x in element_accesses(s):
            em.stmt_assign(x)
    if width == 1:
        elements()
        return

    def vector() -> None:
        if view.f16_words:
            _load_words(em, s, view)
            return
        for first in range(0, size, width):
            tmp = em.fresh("line")
            em.line(f"let {tmp}: {view.store_type} = "
                    f"{view.name}[{_vector_index(em, s.line, size, first, width)}];")
            for k in range(width):
                em.line(f"{em.var_name(s.parts[first + k])} = {tmp}.{XYZW[k]};")
    _checked_or_not(em, s, size, vector, elements)


def store_line(em: "_WgslEmitter", s: n.StoreLine) -> None:
    """`buffer[line] = values` as vector stores (in a checked launch, the elements past
    the end are dropped)."""
    view = em.view(s.buffer)
    size, width = len(s.values), view.width
    if width == 1:
        for x in element_accesses(s):
            em.stmt_store(x)
        return
    values = [em.expr(v, True) for v in s.values]
    if em.checked and not all(isinstance(v, (n.Load, n.Const)) for v in s.values):
        # each computed once, before the access (both paths of the check use them)
        for k, v in enumerate(s.values):
            tmp = em.fresh("value")
            em.line(f"let {tmp}: {wgsl_type(v.ty, v.loc)} = {values[k]};")
            values[k] = tmp

    def vector() -> None:
        if view.f16_words:
            words = [f16_pair(values[k], values[k + 1]) for k in range(0, size, 2)]
            em.line(f"{view.name}[{em.expr(s.line, True)}] = "
                    f"vec4<u32>({', '.join(words)});")
            return
        for first in range(0, size, width):
            em.line(f"{view.name}[{_vector_index(em, s.line, size, first, width)}] = "
                    f"{view.store_type}({', '.join(values[first:first + width])});")

    def elements() -> None:
        store = store_helper(em.prelude, view)
        for k in range(size):
            index = em.index(line_element_index(s.line, size, k))
            em.line(f"{store}({index}, {values[k]});")
    _checked_or_not(em, s, size, vector, elements)


def _load_words(em: "_WgslEmitter", s: n.LoadLine, view: BufferView) -> None:
    """A line of 8 f16 from one `vec4<u32>`: each word unpacked to two f32, each part
    the f16 of its f32."""
    group = em.fresh("line")
    em.line(f"let {group}: vec4<u32> = {view.name}[{em.expr(s.line, True)}];")
    for word in range(F16_WORDS // 2):
        pair = em.fresh("halves")
        em.line(f"let {pair}: vec2<f32> = unpack2x16float({group}.{XYZW[word]});")
        for half in range(2):
            em.line(f"{em.var_name(s.parts[2 * word + half])} = "
                    f"f16({pair}.{XYZW[half]});")


def element_slot(em: "_WgslEmitter", view: BufferView, index: n.Expr) -> str | None:
    """The unchecked memory of element `index` of a vector buffer as `buf[j][k]`, when
    `index` is `line * m + k` with m a multiple of the vector width (an element of a
    line, `x[i][1]`); None for other indices (wgsl_memory.element_slot divides them).
    For f16 word groups: the element's value, read from its word (they are never
    stored element by element unchecked)."""
    first = 0
    if isinstance(index, n.Binary) and index.op == "add" and isinstance(index.rhs, n.Const):
        first, index = int(index.rhs.value), index.lhs
    if not (isinstance(index, n.Binary) and index.op == "mul"
            and isinstance(index.rhs, n.Const) and int(index.rhs.value) > 0
            and int(index.rhs.value) % view.width == 0 and first >= 0):
        return None
    vector = _vector_index(em, index.lhs, int(index.rhs.value), first - first % view.width,
                           view.width)
    if view.f16_words:
        k = first % F16_WORDS
        return f16_half(f"{view.name}[{vector}][{k // 2}]", str(k % 2))
    return f"{view.name}[{vector}][{first % view.width}]"


def _vector_index(em: "_WgslEmitter", line: n.Expr, size: int, first: int,
                  width: int) -> str:
    """The index of the vector holding element `first` of line `line` (lines of `size`
    elements)."""
    pieces, piece = size // width, first // width
    if pieces > 1:
        return em.expr(line_element_index(line, pieces, piece), True)
    if piece == 0:
        return em.expr(line, True)
    return em.expr(n.Binary(ty=line.ty, op="add", lhs=line, loc=line.loc,
                            rhs=n.Const(ty=line.ty, value=piece, loc=line.loc)), True)


def _checked_or_not(em: "_WgslEmitter", s: n.LoadLine | n.StoreLine, size: int,
                    vector: Callable[[], None], elements: Callable[[], None]) -> None:
    """`vector()` alone, or (checked) when the whole line is in range, else `elements()`
    (whose element accesses check their own bounds)."""
    if not em.checked:
        vector()
        return
    last = em.index(line_element_index(s.line, size, size - 1))
    em.branch(f"{last} < {em.view(s.buffer).bound}", vector, elements)
