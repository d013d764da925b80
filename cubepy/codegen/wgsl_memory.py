"""How the WGSL emitter declares and accesses buffers: storage element types (bool as
u32, atomics as atomic<T>, f32 atomics as atomic<u32> with bitcasts, vectors for buffers
whose lines are accessed whole: wgsl_lines.py), bounds-checked accessors and atomic
helpers. Accessors are per-buffer helper functions, because WGSL cannot pass storage
pointers to functions.

Element `i` of a buffer stored as `array<vec4<T>>` is the component `buf[i / 4][i % 4]`
(WGSL indexes a vector in memory by a runtime value, for reads and writes alike), so
element accesses keep their meaning and their bounds (counted in elements). An f16
buffer stored as 16-byte word groups (`array<vec4<u32>>`, wgsl_lines.py) holds element
`i` in half `i % 2` of word `(i % 8) / 2` of group `i / 8`: a read unpacks that word, a
write replaces its 16 bits and keeps the other half's bits.
"""
from __future__ import annotations

from ..ir.batched_dataclass import dataclass  # (cheap to create)
from ..ir.ops import LOWERED, AtomicOp
from ..ir.types import DType, dtype_from_name
from ..targets import get_target
from .wgsl_expr import WGSL_TYPES, literal
from .wgsl_prelude import PreludeBuilder

ZERO = {name: literal(0, dtype_from_name(name)) for name in WGSL_TYPES}  # 0.0f, 0i, false
F16_WORDS = 8  # the f16 of one `vec4<u32>` word group


@dataclass(frozen=True)
class BufferView:
    """A buffer as the shader stores it.

    storage: "plain", "bool" (array<u32>), "atomic" (atomic<i32|u32>) or "atomic_f32"
    (atomic<u32> holding f32 bits). `bound` is the WGSL expression of its length in
    elements in a checked launch (the info field or the shared array's size). `width`
    (plain storage only): the elements of one stored vector, 1 for scalars; an f16
    buffer of width 8 is stored as `vec4<u32>` word groups (see `f16_words`).
    """

    name: str  # mangled WGSL name
    elem: str  # WGSL type of an element as the kernel sees it
    storage: str
    bound: str
    stem: str  # accessor helpers are named cube_<kind>_<stem> (see HELPER_KINDS)
    width: int = 1

    @property
    def f16_words(self) -> bool:
        """Whether each 8 f16 are one `vec4<u32>`, two f16 to a word (low half first)."""
        return self.elem == "f16" and self.width == F16_WORDS

    @property
    def store_type(self) -> str:
        if self.f16_words:
            return "vec4<u32>"
        if self.width > 1:
            return f"vec{self.width}<{self.elem}>"
        if self.storage == "bool":
            return "u32"
        if self.storage == "atomic":
            return f"atomic<{self.elem}>"
        if self.storage == "atomic_f32":
            return "atomic<u32>"
        return self.elem


def storage_kind(elem: DType, atomic: bool) -> str:
    if atomic:
        return "atomic_f32" if elem.name == "f32" else "atomic"
    return "bool" if elem.is_bool else "plain"


def element_slot(b: BufferView, idx: str) -> str:
    """The memory of element `idx`: `buf[idx]`, or a vector's component `buf[idx / 4][idx
    % 4]` (untyped literals, which fit an i32 or a u32 index alike); for f16 word groups,
    the u32 word holding it."""
    if b.width == 1:
        return f"{b.name}[{idx}]"
    idx = _grouped(idx)
    if b.f16_words:
        return f"{b.name}[{idx} / {F16_WORDS}][({idx} % {F16_WORDS}) / 2]"
    return f"{b.name}[{idx} / {b.width}][{idx} % {b.width}]"


def f16_half(word: str, half: str) -> str:
    """Half `half` (0: the low 16 bits) of the u32 `word` as an f16. Through f32, which
    holds every f16 exactly (a NaN stays a NaN; its payload bits may change)."""
    return f"f16(unpack2x16float({word})[{half}])"


def f16_pair(low: str, high: str) -> str:
    """Two f16 values as one u32 word, `low` in the low 16 bits."""
    return f"pack2x16float(vec2<f32>(f32({low}), f32({high})))"


def _simple(text: str) -> bool:
    """Whether `text` is a name or a literal, which needs no parentheses."""
    return text.replace("_", "a").isalnum()


def _grouped(text: str) -> str:
    return text if _simple(text) else f"({text})"


def read_slot(b: BufferView, idx: str) -> str:
    """An unchecked read of element `idx`."""
    slot = element_slot(b, idx)
    if b.f16_words:
        return f16_half(slot, f"{_grouped(idx)} % 2")
    if b.storage == "bool":
        return f"({slot} != 0u)"
    if b.storage == "atomic":
        return f"atomicLoad(&{slot})"
    if b.storage == "atomic_f32":
        return f"bitcast<f32>(atomicLoad(&{slot}))"
    return slot


def write_slot(b: BufferView, idx: str, value: str) -> str:
    """An unchecked store statement of `value` into element `idx`."""
    slot = element_slot(b, idx)
    if b.f16_words:
        # Only the unit that writes the rest of the word's line comes here (wgsl_lines.py):
        # a read-modify-write of the word, the other half's bits kept as they are.
        shift = f"((u32({idx}) % 2u) * 16u)"
        bits = f"(pack2x16float(vec2<f32>(f32({value}), 0.0f)) & 0xffffu)"
        return f"{slot} = ({slot} & ~(0xffffu << {shift})) | ({bits} << {shift});"
    if b.storage == "bool":
        return f"{slot} = select(0u, 1u, {value});"
    if b.storage == "atomic":
        return f"atomicStore(&{slot}, {value});"
    if b.storage == "atomic_f32":
        return f"atomicStore(&{slot}, bitcast<u32>({value}));"
    return f"{slot} = {value};"


def load_helper(prelude: PreludeBuilder, b: BufferView) -> str:
    """`cube_load_<buf>(i: u32)`: the element, or zero when i is out of range."""
    name = f"cube_load_{b.stem}"
    return prelude.add(name, (
        f"fn {name}(i: u32) -> {b.elem} {{\n"
        f"    if (i < {b.bound}) {{ return {read_slot(b, 'i')}; }}\n"
        f"    return {ZERO[b.elem]};\n}}"))


def store_helper(prelude: PreludeBuilder, b: BufferView) -> str:
    """`cube_store_<buf>(i: u32, v)`: stores unless i is out of range."""
    name = f"cube_store_{b.stem}"
    return prelude.add(name, (
        f"fn {name}(i: u32, v: {b.elem}) {{\n"
        f"    if (i < {b.bound}) {{ {write_slot(b, 'i', 'v')} }}\n}}"))


# The atomics WGSL has as built-ins (ir/ops.py: atomicAdd ... atomicExchange); the
# compare-exchange is a helper of its own.
_NATIVE = {op.value: name for op in AtomicOp
           if (name := get_target("wgsl").spelling(op)) not in (None, LOWERED)}
# The <kind> of every per-buffer helper name, cube_<kind>_<stem>.
HELPER_KINDS = ("load", "store") + tuple(f"atomic_{op}" for op in (*_NATIVE,
                                                                   "compare_exchange",
                                                                   "inc", "dec"))
_F32_COMBINE = {"add": "bitcast<f32>(old) + v", "sub": "bitcast<f32>(old) - v",
                "min": "cube_min_f32(bitcast<f32>(old), v)",
                "max": "cube_max_f32(bitcast<f32>(old), v)"}


def atomic_helper(prelude: PreludeBuilder, b: BufferView, op: str, checked: bool) -> str:
    """`cube_atomic_<op>_<buf>(i, [expected,] v)`: the atomic op on element i, returning
    the old value (0 and no effect when i is out of range in a checked launch).
    Callers make sure `op` is legal for the element type."""
    name = f"cube_atomic_{op}_{b.stem}"
    t = b.elem
    slot = f"&{b.name}[i]"
    if op in ("load", "store"):
        return _load_store_helper(prelude, b, op, checked)
    params = f"i: u32, expected: {t}, v: {t}" if op == "compare_exchange" else f"i: u32, v: {t}"
    guard = f"    if (i >= {b.bound}) {{ return {ZERO[t]}; }}\n" if checked else ""
    if op in _WRAP:  # u32 only
        body = (f"    var old = atomicLoad({slot});\n"
                "    loop {\n"
                f"        let r = atomicCompareExchangeWeak({slot}, old, {_WRAP[op]});\n"
                "        if (r.exchanged) { break; }\n"
                "        old = r.old_value;\n"
                "    }\n"
                "    return old;\n")
    elif b.storage == "atomic_f32":
        if op == "exchange":
            body = f"    return bitcast<f32>(atomicExchange({slot}, bitcast<u32>(v)));\n"
        elif op == "compare_exchange":
            # Compares bit patterns, as the hardware would.
            body = ("    let want = bitcast<u32>(expected);\n"
                    "    var old: u32;\n"
                    "    loop {\n"
                    f"        let r = atomicCompareExchangeWeak({slot}, want, bitcast<u32>(v));\n"
                    "        old = r.old_value;\n"
                    "        if (r.exchanged || old != want) { break; }\n"
                    "    }\n"
                    "    return bitcast<f32>(old);\n")
        else:
            if op in ("min", "max"):
                prelude.use(op, "f32")
            body = (f"    var old = atomicLoad({slot});\n"
                    "    loop {\n"
                    f"        let r = atomicCompareExchangeWeak({slot}, old, "
                    f"bitcast<u32>({_F32_COMBINE[op]}));\n"
                    "        if (r.exchanged) { break; }\n"
                    "        old = r.old_value;\n"
                    "    }\n"
                    "    return bitcast<f32>(old);\n")
    elif op == "compare_exchange":
        # atomicCompareExchangeWeak may fail spuriously: retry until it either swaps or
        # sees a different value.
        body = (f"    var old: {t};\n"
                "    loop {\n"
                f"        let r = atomicCompareExchangeWeak({slot}, expected, v);\n"
                "        old = r.old_value;\n"
                "        if (r.exchanged || old != expected) { break; }\n"
                "    }\n"
                "    return old;\n")
    else:
        body = f"    return {_NATIVE[op]}({slot}, v);\n"
    return prelude.add(name, f"fn {name}({params}) -> {t} {{\n{guard}{body}}}")


# atomic_inc/atomic_dec (CUDA's wrap-around at the limit v), as compare-exchange loops
_WRAP = {"inc": "select(old + 1u, 0u, old >= v)",
         "dec": "select(old - 1u, v, old == 0u || old > v)"}


def _load_store_helper(prelude: PreludeBuilder, b: BufferView, op: str,
                       checked: bool) -> str:
    """`cube_atomic_load_<buf>(i)` / `cube_atomic_store_<buf>(i, v)`: atomicLoad and
    atomicStore (relaxed), skipped (load: 0) out of range in a checked launch."""
    name = f"cube_atomic_{op}_{b.stem}"
    t = b.elem
    if op == "load":
        guard = f"    if (i >= {b.bound}) {{ return {ZERO[t]}; }}\n" if checked else ""
        return prelude.add(name, f"fn {name}(i: u32) -> {t} {{\n{guard}"
                                 f"    return {read_slot(b, 'i')};\n}}")
    guard = f"    if (i >= {b.bound}) {{ return; }}\n" if checked else ""
    return prelude.add(name, f"fn {name}(i: u32, v: {t}) {{\n{guard}"
                             f"    {write_slot(b, 'i', 'v')}\n}}")
