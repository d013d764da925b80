"""cmma fragments in the C-like targets: CUDA's nvcuda::wmma and Metal's simdgroup_matrix.

Each dialect gets a `MatrixSpelling` (its `matrix` attribute): how a fragment is declared
and how each cmma statement is written. The legalize pass has already checked shapes and
element types against the target's `matrix_shapes`, so nothing here rejects a kernel.
Neither API checks bounds, and wmma needs aligned tiles: a checked CUDA launch moves
every tile through a per-plane staging tile in shared memory (cuda_cmma_staging.py); an
unchecked one, and Metal, access the buffer directly, so the tile must lie inside it
(docs/LANGUAGE.md, Matrix units).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from . import clike_wgmma as wgmma
from . import cuda_cmma_staging as staging

if TYPE_CHECKING:
    from .clike import CEmitter

WMMA = "nvcuda::wmma"
_CUDA_ELEMS = {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float",
               "tf32": f"{WMMA}::precision::tf32"}
_CUDA_IDENTS = {"a": "matrix_a", "b": "matrix_b", "accumulator": "accumulator"}
_MSL_ELEMS = {"f16": "half", "f32": "float"}


def frag_text(em: CEmitter, f: n.Frag) -> str:
    """A fragment operand: its name, indexed for an array of fragments."""
    name = em.matrix_name(f.matrix)
    return name if f.index is None else f"{name}[{em.expr(f.index)}]"


def _pointer(em: CEmitter, buffer: n.BufferRef, offset: n.Expr) -> str:
    from .clike import ADD
    base = em.buffer(buffer)
    if isinstance(offset, n.Const) and offset.value == 0:
        return base
    return f"{base} + {em.expr_prec(offset, ADD + 1)}"


class MatrixSpelling:
    """How one C-like target writes fragments (subclassed per target)."""

    def declaration(self, em: CEmitter, d: n.MatrixDecl) -> str:
        raise NotImplementedError

    def statement(self, em: CEmitter, s: n.Stmt) -> None:
        """Writes cmma statement `s` through `em.line`."""
        raise NotImplementedError


class WmmaSpelling(MatrixSpelling):
    """CUDA: nvcuda::wmma (mma.h), sm_70+ (bf16 and tf32: sm_80+)."""

    def fragment_type(self, d: n.MatrixDecl) -> str:
        args = [f"{WMMA}::{_CUDA_IDENTS[d.ident]}", str(d.m), str(d.n), str(d.k),
                _CUDA_ELEMS[d.elem]]
        if d.layout is not None:
            args.append(f"{WMMA}::{d.layout}")
        return f"{WMMA}::fragment<{', '.join(args)}>"

    def declaration(self, em: CEmitter, d: n.MatrixDecl) -> str:
        if d.warpgroup:
            return wgmma.declaration(em, d)
        count = f"[{d.count}]" if d.count is not None else ""
        return f"{self.fragment_type(d)} {em.matrix_name(d)}{count};"

    def load_call(self, em: CEmitter, d: n.MatrixDecl, frag: str, pointer: str,
                  stride: str, layout: str | None, shared: bool) -> str:
        """The statement loading fragment `frag` from `pointer` (`layout`: the memory
        layout of an accumulator's load_with_layout, else None)."""
        if shared and d.elem == "bf16" and d.ident in ("a", "b") and d.layout:
            return f"{_bf16_shared_load(em, d)}({frag}, {pointer}, {stride});"
        args = [frag, pointer, stride]
        if layout is not None:
            args.append(f"{WMMA}::mem_{layout.replace('_major', '')}_major")
        return f"{WMMA}::load_matrix_sync({', '.join(args)});"

    def statement(self, em: CEmitter, s: n.Stmt) -> None:
        if isinstance(s, n.WarpgroupMma):
            wgmma.mma(em, s)
        elif isinstance(s, n.WarpgroupSync):
            wgmma.sync(em, s)
        elif isinstance(s, n.MatrixFill) and s.frag.matrix.warpgroup:
            wgmma.fill(em, s)
        elif isinstance(s, n.MatrixStore) and s.frag.matrix.warpgroup:
            wgmma.store(em, s)
        elif isinstance(s, n.MatrixScale) and s.frag.matrix.warpgroup:
            wgmma.scale(em, s)
        elif isinstance(s, n.MatrixScaleBy):  # (warpgroup accumulators only)
            wgmma.scale_by(em, s)
        elif isinstance(s, n.MatrixFill):
            em.line(f"{WMMA}::fill_fragment({frag_text(em, s.frag)}, {em.expr(s.value)});")
        elif isinstance(s, n.MatrixLoad):
            frag = frag_text(em, s.frag)
            d = s.frag.matrix
            if em.checked and not staging.provably_direct(em.kernel, s):
                # through the plane's staging tile: any offset, stride and length
                staging.load(em, s, self.fragment_type(d), frag,
                             _CUDA_ELEMS[d.storage.name], WMMA, self.load_call)
            else:
                em.line(self.load_call(em, d, frag, _pointer(em, s.buffer, s.offset),
                                       em.expr(s.stride), s.layout,
                                       s.buffer.space == "shared"))
            if d.elem == "tf32":  # loaded as f32: rounded to tf32 per element
                i = em.fresh("i")
                em.line(f"for (int {i} = 0; {i} < {frag}.num_elements; ++{i}) {{")
                em.line(f"    {frag}.x[{i}] = {WMMA}::__float_to_tf32({frag}.x[{i}]);")
                em.line("}")
        elif isinstance(s, n.MatrixStore):
            d = s.frag.matrix
            if em.checked and not staging.provably_direct(em.kernel, s):
                staging.store(em, s, self.fragment_type(d), frag_text(em, s.frag),
                              _CUDA_ELEMS[d.storage.name], WMMA)
                return
            layout = f"{WMMA}::mem_{s.layout.replace('_major', '')}_major"
            em.line(f"{WMMA}::store_matrix_sync({_pointer(em, s.buffer, s.offset)}, "
                    f"{frag_text(em, s.frag)}, {em.expr(s.stride)}, {layout});")
        elif isinstance(s, n.MatrixExecute):
            a, b, c, d = (frag_text(em, f) for f in (s.a, s.b, s.c, s.d))
            em.line(f"{WMMA}::mma_sync({d}, {a}, {b}, {c});")
        elif isinstance(s, n.MatrixScale):
            # each unit's own elements: a product needs no layout
            frag, i, f = frag_text(em, s.frag), em.fresh("i"), em.fresh("f")
            em.line("{")
            em.line(f"    const {_CUDA_ELEMS[s.frag.matrix.storage.name]} {f} = "
                    f"{em.expr(s.value)};")
            em.line(f"    for (int {i} = 0; {i} < {frag}.num_elements; ++{i}) "
                    f"{frag}.x[{i}] = {frag}.x[{i}] * {f};")
            em.line("}")
        elif isinstance(s, n.MatrixCast):
            # element by element, as CubeCL does: accumulators of one shape hold their
            # elements in the same places whatever the element type
            src, dst = frag_text(em, s.src), frag_text(em, s.dst)
            convert = _CUDA_CONVERT[(s.src.matrix.elem, s.dst.matrix.elem)]
            i = em.fresh("i")
            em.line(f"for (int {i} = 0; {i} < {dst}.num_elements; ++{i}) {{")
            em.line(f"    {dst}.x[{i}] = {convert.format(f'{src}.x[{i}]')};")
            em.line("}")


def _bf16_shared_load(em: CEmitter, d: n.MatrixDecl) -> str:
    """A helper loading a bf16 A or B fragment from shared memory with PTX's
    `wmma.load...shared.bf16`. mma.h's bf16 load_matrix_sync compiles to the generic
    address form, whose loads ptxas cannot turn into ldmatrix as it does for f16's
    `.shared` form (measured on an H200: the bf16 matmul ran at 77% of the f16 one's
    speed, with 16 more registers and spills)."""
    layout = d.layout.replace("_major", "")
    name = f"cube_wmma_load_{d.ident}_{layout}_{d.m}x{d.n}x{d.k}_bf16_shared"
    regs = d.rows * d.cols // 32 // 2  # two bf16 per 32-bit register, per lane
    outs = ", ".join(f'"=r"(r[{i}])' for i in range(regs))
    operands = ", ".join(f"%{i}" for i in range(regs))
    frag_type = WmmaSpelling().fragment_type(d)
    return em.helper(name, f"""
{{fn}} void {name}({frag_type}& frag, const __nv_bfloat16* p, unsigned ldm) {{
    unsigned* r = reinterpret_cast<unsigned*>(frag.x);
    const unsigned at = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("wmma.load.{d.ident}.sync.aligned.{layout}.m{d.m}n{d.n}k{d.k}.shared.bf16 "
                 "{{{operands}}}, [%{regs}], %{regs + 1};"
                 : {outs} : "r"(at), "r"(ldm) : "memory");
}}""")


_CUDA_CONVERT = {("f32", "f16"): "__float2half({})", ("f16", "f32"): "__half2float({})",
                 ("f32", "f32"): "{}", ("f16", "f16"): "{}"}


class SimdgroupSpelling(MatrixSpelling):
    """Metal: simdgroup_matrix<T, 8, 8> (metal_simdgroup_matrix), MSL 2.3+."""

    def _type(self, d: n.MatrixDecl) -> str:
        # simdgroup_matrix<T, Cols, Rows>
        return f"simdgroup_matrix<{_MSL_ELEMS[d.elem]}, {d.cols}, {d.rows}>"

    def declaration(self, em: CEmitter, d: n.MatrixDecl) -> str:
        count = f"[{d.count}]" if d.count is not None else ""
        return f"{self._type(d)} {em.matrix_name(d)}{count};"

    def statement(self, em: CEmitter, s: n.Stmt) -> None:
        if isinstance(s, n.MatrixFill):
            d = s.frag.matrix
            em.line(f"{frag_text(em, s.frag)} = make_filled_simdgroup_matrix<"
                    f"{_MSL_ELEMS[d.elem]}, {d.cols}, {d.rows}>({em.expr(s.value)});")
        elif isinstance(s, n.MatrixLoad):
            layout = s.layout or s.frag.matrix.layout
            em.line(f"simdgroup_load({frag_text(em, s.frag)}, "
                    f"{_pointer(em, s.buffer, s.offset)}, {em.expr(s.stride)}, ulong2(0, 0), "
                    f"{_transpose(layout)});")
        elif isinstance(s, n.MatrixStore):
            em.line(f"simdgroup_store({frag_text(em, s.frag)}, "
                    f"{_pointer(em, s.buffer, s.offset)}, {em.expr(s.stride)}, ulong2(0, 0), "
                    f"{_transpose(s.layout)});")
        elif isinstance(s, n.MatrixExecute):
            a, b, c, d = (frag_text(em, f) for f in (s.a, s.b, s.c, s.d))
            em.line(f"simdgroup_multiply_accumulate({d}, {a}, {b}, {c});")
        elif isinstance(s, n.MatrixScale):
            # each lane's two elements (thread_elements), multiplied in place
            frag, f = frag_text(em, s.frag), em.fresh("f")
            em.line("{")
            em.line(f"    const {_MSL_ELEMS[s.frag.matrix.elem]} {f} = {em.expr(s.value)};")
            for i in range(2):
                em.line(f"    {frag}.thread_elements()[{i}] *= {f};")
            em.line("}")
        elif isinstance(s, n.MatrixCast):
            # each lane's two elements (thread_elements), converted in place
            src, dst = frag_text(em, s.src), frag_text(em, s.dst)
            elem = _MSL_ELEMS[s.dst.matrix.elem]
            for i in range(2):
                em.line(f"{dst}.thread_elements()[{i}] = "
                        f"{elem}({src}.thread_elements()[{i}]);")


def _transpose(layout: str) -> str:
    """simdgroup_load/store read rows of `stride` elements; a column-major tile is the
    transpose of that."""
    return "true" if layout == "col_major" else "false"
