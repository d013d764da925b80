"""The warpgroup matrix multiply in CUDA: PTX's wgmma (sm_90a) through inline asm.

A warpgroup accumulator (64 x n f32) is `float acc[n / 2]` per unit, in wgmma's register
fragment order: unit t of the warpgroup (warp w = t / 32, lane l = t % 32) holds in
acc[j * 4 + i * 2 + c] the element at row 16 * w + l / 4 + 8 * i, column 8 * j +
2 * (l % 4) + c (i, c in {0, 1}, j < n / 8; PTX ISA, "Register Fragments", wgmma
.m64nNk16 accumulator D). A and B are read from shared memory through 64-bit matrix
descriptors built here from the array's address and the layout of wgmma_layout.py (no
swizzle, or the 128-byte swizzle). The cuda runtime compiles a source using wgmma for sm_90a (cuda_compile.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..wgmma_layout import descriptor_strides

if TYPE_CHECKING:
    from .clike import CEmitter

WARPGROUP_UNITS = 128
_ELEMS = {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float"}
_CONVERT = {"f16": "__float2half_rn({})", "bf16": "__float2bfloat16_rn({})", "f32": "{}"}
_SYNC = {"fence": "wgmma.fence.sync.aligned;",
         "commit": "wgmma.commit_group.sync.aligned;",
         "wait": "wgmma.wait_group.sync.aligned {};"}


def declaration(em: CEmitter, d: n.MatrixDecl) -> str:
    return f"float {em.matrix_name(d)}[{d.n // 2}];"


def _unit_in_warpgroup(em: CEmitter) -> str:
    """This unit's index in its warpgroup (128 consecutive units of the cube)."""
    return f"({em.composite_builtin('unit_pos')} & {WARPGROUP_UNITS - 1}u)"


def fill(em: CEmitter, s: n.MatrixFill) -> None:
    name = em.matrix_name(s.frag.matrix)
    i = em.fresh("i")
    em.line("#pragma unroll")
    em.line(f"for (int {i} = 0; {i} < {s.frag.matrix.n // 2}; ++{i}) "
            f"{name}[{i}] = {em.expr(s.value)};")


def scale(em: CEmitter, s: n.MatrixScale) -> None:
    name = em.matrix_name(s.frag.matrix)
    i, f = em.fresh("i"), em.fresh("f")
    em.line("{")
    em.line(f"    const float {f} = {em.expr(s.value)};")
    em.line("    #pragma unroll")
    em.line(f"    for (int {i} = 0; {i} < {s.frag.matrix.n // 2}; ++{i}) {name}[{i}] *= {f};")
    em.line("}")


def scale_by(em: CEmitter, s: n.MatrixScaleBy) -> None:
    """Row r (or column c) of the accumulator times p[r] (p[c]), p = buffer + offset:
    each unit reads the factors of its own elements (two rows, or n / 4 columns; see
    `store` for which). A checked launch takes 0 for a factor past the buffer's end."""
    from .clike_cmma import _pointer
    acc = em.matrix_name(s.frag.matrix)
    t, p = em.fresh("t"), em.fresh("p")
    em.line("{")
    em.line(f"    const unsigned {t} = {_unit_in_warpgroup(em)};")
    em.line(f"    const float* const {p} = {_pointer(em, s.buffer, s.offset)};")
    room = None
    if em.checked:
        from .cuda_cmma_staging import _limit
        room = em.fresh("room")
        em.line(f"    const long long {room} = (long long)({_limit(em, s.buffer)}) - "
                f"(long long)({em.expr(s.offset)});")

    def factor(index: str) -> str:
        if room is None:
            return f"{p}[{index}]"
        return f"((long long)({index}) < {room} ? {p}[{index}] : 0.0f)"
    j = em.fresh("j")
    if s.axis == "rows":
        r, f0, f1 = em.fresh("r"), em.fresh("f0"), em.fresh("f1")
        em.line(f"    const unsigned {r} = ({t} >> 5) * 16u + (({t} & 31u) >> 2);")
        em.line(f"    const float {f0} = {factor(r)};")
        em.line(f"    const float {f1} = {factor(f'{r} + 8u')};")
        em.line("    #pragma unroll")
        em.line(f"    for (int {j} = 0; {j} < {s.frag.matrix.n // 8}; ++{j}) {{")
        em.line(f"        {acc}[{j} * 4] *= {f0}; {acc}[{j} * 4 + 1] *= {f0};")
        em.line(f"        {acc}[{j} * 4 + 2] *= {f1}; {acc}[{j} * 4 + 3] *= {f1};")
    else:
        c, g0, g1 = em.fresh("c"), em.fresh("g0"), em.fresh("g1")
        em.line(f"    const unsigned {c} = ({t} & 3u) * 2u;")
        em.line("    #pragma unroll")
        em.line(f"    for (int {j} = 0; {j} < {s.frag.matrix.n // 8}; ++{j}) {{")
        em.line(f"        const float {g0} = {factor(f'8u * {j} + {c}')};")
        em.line(f"        const float {g1} = {factor(f'8u * {j} + {c} + 1u')};")
        em.line(f"        {acc}[{j} * 4] *= {g0}; {acc}[{j} * 4 + 1] *= {g1};")
        em.line(f"        {acc}[{j} * 4 + 2] *= {g0}; {acc}[{j} * 4 + 3] *= {g1};")
    em.line("    }")
    em.line("}")


_PAIRS = {"f16": ("__half2", "__floats2half2_rn({}, {})"),
          "bf16": ("__nv_bfloat162", "__floats2bfloat162_rn({}, {})"),
          "f32": ("float2", "make_float2({}, {})")}
_PAIR_BYTES = {"f16": 4, "bf16": 4, "f32": 8}


def store(em: CEmitter, s: n.MatrixStore) -> None:
    """Each unit writes its n / 2 values, converted to the buffer's type: its two
    adjacent columns (c = 0, 1) as one 2-element store where the row stride is even and
    the tile's first element is aligned to the pair (tested at run time once per store),
    else element by element. Addresses are two row pointers (rows r and r + 8) plus
    constant offsets, which the stores take as immediates. A checked launch drops the
    elements past the buffer's end, as the cpu runtime does: a pair reaching past it is
    stored element by element."""
    from .clike_cmma import _pointer
    d = s.frag.matrix
    acc = em.matrix_name(d)
    elem = s.buffer.elem.name
    t, p, st = em.fresh("t"), em.fresh("p"), em.fresh("st")
    rows = [em.fresh("q0"), em.fresh("q1")]  # this unit's first element of rows r, r + 8
    em.line("{")
    em.line(f"    const unsigned {t} = {_unit_in_warpgroup(em)};")
    em.line(f"    const unsigned {st} = {em.expr(s.stride)};")
    em.line(f"    {_ELEMS[elem]}* const {p} = {_pointer(em, s.buffer, s.offset)};")
    first = f"(({t} >> 5) * 16u + (({t} & 31u) >> 2)) * {st} + ({t} & 3u) * 2u"
    em.line(f"    {_ELEMS[elem]}* const {rows[0]} = {p} + {first};")
    em.line(f"    {_ELEMS[elem]}* const {rows[1]} = {rows[0]} + 8u * {st};")
    rooms = None
    if em.checked:
        from .cuda_cmma_staging import _limit
        size = _limit(em, s.buffer)
        # elements from each row's first to the buffer's end
        rooms = [em.fresh("room0"), em.fresh("room1")]
        em.line(f"    const long long {rooms[0]} = (long long)({size}) - "
                f"(long long)({em.expr(s.offset)}) - (long long)({rows[0]} - {p});")
        em.line(f"    const long long {rooms[1]} = {rooms[0]} - 8ll * {st};")
    convert = _CONVERT[elem]
    pair_type, make_pair = _PAIRS[elem]
    # every pair starts at an even column of an even-strided row: aligned with the tile
    em.line(f"    if (({st} & 1u) == 0u && ((unsigned long long)(const void*){p} & "
            f"{_PAIR_BYTES[elem] - 1}ull) == 0ull) {{")
    j = em.fresh("j")
    em.line("        #pragma unroll")
    em.line(f"        for (int {j} = 0; {j} < {d.n // 8}; ++{j}) {{")
    for h, q in enumerate(rows):
        v0, v1 = f"{acc}[{j} * 4 + {2 * h}]", f"{acc}[{j} * 4 + {2 * h + 1}]"
        pair = (f"*reinterpret_cast<{pair_type}*>({q} + 8 * {j}) = "
                f"{make_pair.format(v0, v1)};")
        if rooms is None:
            em.line(f"            {pair}")
        else:
            em.line(f"            if (8 * {j} + 1 < {rooms[h]}) {pair}")
            em.line(f"            else if (8 * {j} < {rooms[h]}) "
                    f"{q}[8 * {j}] = {convert.format(v0)};  // the last one")
    em.line("        }")
    em.line("    } else {")
    j = em.fresh("j")
    em.line("        #pragma unroll")
    em.line(f"        for (int {j} = 0; {j} < {d.n // 8}; ++{j}) {{")
    for h, q in enumerate(rows):
        for c in range(2):
            store_one = f"{q}[8 * {j} + {c}] = {convert.format(f'{acc}[{j} * 4 + {2 * h + c}]')};"
            if rooms is None:
                em.line(f"            {store_one}")
            else:
                em.line(f"            if (8 * {j} + {c} < {rooms[h]}) {store_one}")
    em.line("        }")
    em.line("    }")
    em.line("}")


def _swizzled_descriptor_helper(em: CEmitter) -> str:
    name = "cube_wgmma_desc_sw128"
    return em.helper(name, f"""
// A wgmma matrix descriptor, 128-byte swizzle: the start address, the leading and the
// stride byte offsets, each (x & 0x3FFFF) >> 4, in bits 0-13, 16-29 and 32-45, the base
// offset (bits 49-51) 0 (the swizzle atoms are 1024-byte aligned), the layout type
// (bits 62-63) 1 (PTX ISA, "Matrix Descriptor Format"; CUTLASS's LayoutType::B128).
{{fn}} unsigned long long {name}(const void* p, unsigned lbo, unsigned sbo) {{
    const unsigned at = (unsigned)__cvta_generic_to_shared(p);
    return (unsigned long long)((at & 0x3FFFFu) >> 4)
        | ((unsigned long long)((lbo & 0x3FFFFu) >> 4) << 16)
        | ((unsigned long long)((sbo & 0x3FFFFu) >> 4) << 32)
        | (1ull << 62);
}}""")


def _descriptor_helper(em: CEmitter) -> str:
    name = "cube_wgmma_desc"
    return em.helper(name, f"""
// A wgmma matrix descriptor, no swizzle: the start address, the leading and the stride
// byte offsets, each (x & 0x3FFFF) >> 4, in bits 0-13, 16-29 and 32-45 (PTX ISA,
// "Matrix Descriptor Format"); the swizzle mode (bits 62-63) is 0.
{{fn}} unsigned long long {name}(const void* p, unsigned lbo, unsigned sbo) {{
    const unsigned at = (unsigned)__cvta_generic_to_shared(p);
    return (unsigned long long)((at & 0x3FFFFu) >> 4)
        | ((unsigned long long)((lbo & 0x3FFFFu) >> 4) << 16)
        | ((unsigned long long)((sbo & 0x3FFFFu) >> 4) << 32);
}}""")


def _mma_helper(em: CEmitter, width: int, a_elem: str, b_elem: str, trans_b: bool) -> str:
    """The helper issuing one wgmma.mma_async: k16 for f16/bf16 (with imm-trans-a 0 and
    imm-trans-b), k32 for 8-bit floats (A and B K-major: PTX has no transpose for
    them)."""
    regs = width // 2
    fp8 = a_elem in n.WARPGROUP_FP8
    k = 32 if fp8 else 16
    types = f"{a_elem}_{b_elem}" if fp8 else a_elem
    name = f"cube_wgmma_m64n{width}k{k}_f32_{types}{'_tb' if trans_b else ''}"
    outs = ", ".join(f'"+f"(d[{r}])' for r in range(regs))
    operands = ", ".join(f"%{r}" for r in range(regs))
    transpose = "" if fp8 else f", 0, {int(trans_b)}"
    return em.helper(name, f"""
// d += A @ B for one warpgroup: A 64 x {k} {a_elem} and B {k} x {width} {b_elem} read
// through the descriptors da and db, d this unit's {regs} f32 of the 64 x {width}
// accumulator.
{{fn}} void {name}(float (&d)[{regs}], unsigned long long da, unsigned long long db) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{regs + 2}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{width}k{k}.f32.{a_elem}.{b_elem} "
        "{{{operands}}}, %{regs}, %{regs + 1}, p, 1, 1{transpose};\\n}}\\n"
        : {outs}
        : "l"(da), "l"(db), "r"(1));
}}""")


def mma(em: CEmitter, s: n.WarpgroupMma) -> None:
    from .clike_cmma import _pointer
    desc = _swizzled_descriptor_helper(em) if s.swizzle else _descriptor_helper(em)
    a_lbo, a_sbo, _ = descriptor_strides("a", s.a_rows, swizzle=s.swizzle)
    b_lbo, b_sbo, trans_b = descriptor_strides("b", s.b_rows, s.b_layout, s.swizzle)
    fn = _mma_helper(em, s.acc.matrix.n, s.a.elem.name, s.b.elem.name, trans_b)
    a = f"{desc}({_pointer(em, s.a, s.a_offset)}, {a_lbo}u, {a_sbo}u)"
    b = f"{desc}({_pointer(em, s.b, s.b_offset)}, {b_lbo}u, {b_sbo}u)"
    em.line(f"{fn}({em.matrix_name(s.acc.matrix)}, {a}, {b});")


def _pin_accumulators(em: CEmitter) -> None:
    """An empty asm reading and writing every warpgroup accumulator: the compiler must
    not move their reads or writes across it (the registers change under wgmma's
    asynchronous writes, which it does not see; CUTLASS's warpgroup_fence_operand)."""
    for d in em.kernel.matrices:
        if not d.warpgroup:
            continue
        regs = d.n // 2
        name = f"cube_wgmma_pin_{regs}"
        outs = ", ".join(f'"+f"(d[{r}])' for r in range(regs))
        fn = em.helper(name, f"""
{{fn}} void {name}(float (&d)[{regs}]) {{
    asm volatile("" : {outs} :: "memory");
}}""")
        em.line(f"{fn}({em.matrix_name(d)});")


def sync(em: CEmitter, s: n.WarpgroupSync) -> None:
    if s.op == "wait":
        em.line(f'asm volatile("{_SYNC[s.op].format(s.pending)}" ::: "memory");')
        _pin_accumulators(em)
        return
    if s.op == "fence":
        _pin_accumulators(em)
        # shared memory the units wrote (generic proxy) made visible to wgmma's reads
        # (async proxy), then the register fence wgmma asks for before it reads the
        # accumulators other instructions wrote
        em.line('asm volatile("fence.proxy.async.shared::cta;\\n'
                'wgmma.fence.sync.aligned;" ::: "memory");')
        return
    em.line(f'asm volatile("{_SYNC[s.op]}" ::: "memory");')


def uses_wgmma(kernel: n.Kernel) -> bool:
    return any(d.warpgroup for d in kernel.matrices)
