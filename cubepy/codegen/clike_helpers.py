"""Module-level pieces of the C-like core: Python-semantics helper texts (floor division,
modulo, integer pow), loop-bound analysis, literals, scalar-parameter locals, templates."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..abi import KernelABI
from ..ir import nodes as n
from ..ir.types import DType
from ..ir.visit import walk_all_exprs, walk_stmts
from .names import field_name

if TYPE_CHECKING:
    from .clike import CEmitter


def divmod_helper(em, kind: str, ty: DType, nonzero: bool) -> str:
    """`cube_floordiv_i32` / `cube_mod_u32` ...: Python floor semantics, total."""
    t = em.d.type_name(ty)
    name = f"cube_{kind}{'_nz' if nonzero else ''}_{ty.name}"
    if not ty.is_signed:
        body = ("return b == 0 ? 0 : a / b;" if kind == "floordiv"
                else "return b == 0 ? a : a % b;")
    else:
        ut = em.d.type_name(n.U32 if ty.bits == 32 else _u64())
        checks = ""
        if not nonzero:
            if kind == "floordiv":  # a // 0 == 0; MIN // -1 == MIN (wraps)
                checks = ("    if (b == 0) return 0;\n"
                          f"    if (b == -1) return ({t})(({ut})0 - ({ut})a);\n")
            else:  # a % 0 == a; a % -1 == 0
                checks = "    if (b == 0) return a;\n    if (b == -1) return 0;\n"
        if kind == "floordiv":
            core = ("    const {t} q = a / b;\n"
                    "    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;")
        else:
            core = ("    const {t} r = a % b;\n"
                    "    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;")
        body = "\n" + checks + core.format(t=t) + "\n"
        return em.helper(name, f"{{fn}} {t} {name}({t} a, {t} b) {{{body}}}")
    return em.helper(name, f"{{fn}} {t} {name}({t} a, {t} b) {{ {body} }}")


def float_divmod_text(kind: str, name: str, t: str, ops: dict[str, str]) -> str:
    """C text of `cube_mod_f32` / `cube_floordiv_f32` ...: numpy's (CPython's) float
    divmod, exact on every target. `ops` gives the target's correctly rounded `sub`,
    `add`, `div` as templates ("__fsub_rn({}, {})": nothing may be contracted or
    approximated), `fmod` (exact in IEEE), `floor`, `copysign`, and the literals `zero`,
    `one`, `half`. As numpy's npy_divmod: mod = fmod(a, b), moved to the sign of b;
    div = (a - mod) / b, minus 1 when mod moved, snapped to the nearest integer (the 0.5
    correction); b == 0 gives a / b (inf or nan) and nan (numpy's values: Python raises);
    a zero remainder takes b's sign, a zero quotient the sign of a / b."""
    sub, add, div = ops["sub"].format, ops["add"].format, ops["div"].format
    fmod, floor, sign = ops["fmod"], ops["floor"], ops["copysign"]
    zero, one, half = ops["zero"], ops["one"], ops["half"]
    if kind == "mod":
        body = f"""
    {t} m = {fmod}(a, b);
    if (m != {zero}) {{
        if ((b < {zero}) != (m < {zero})) m = {add("m", "b")};
    }} else {{
        m = {sign}({zero}, b);
    }}
    return m;"""
    else:
        body = f"""
    if (b == {zero}) return {div("a", "b")};
    const {t} m = {fmod}(a, b);
    {t} d = {div(sub("a", "m"), "b")};
    if (m != {zero} && (b < {zero}) != (m < {zero})) d = {sub("d", one)};
    if (d == {zero}) return {sign}({zero}, {div("a", "b")});
    {t} f = {floor}(d);
    if ({sub("d", "f")} > {half}) f = {add("f", one)};
    return f;"""
    return f"\n{{fn}} {t} {name}({t} a, {t} b) {{{body}\n}}"


def float_divmod_via(em, name: str, t: str, to_wide: str, from_wide: str,
                     wide_helper: str) -> str:
    """`name` computing in the wider type (half/bfloat via float, as numpy's half does),
    rounded once to `t` at the end."""
    return em.helper(name, f"{{fn}} {t} {name}({t} a, {t} b) {{ return "
                           f"{from_wide}({wide_helper}({to_wide}(a), {to_wide}(b))); }}")


def int_pow_helper(em, ty: DType) -> str:
    t = em.d.type_name(ty)
    name = f"cube_pow_{ty.name}"
    return em.helper(name, f"""
{{fn}} {t} {name}({t} base, {t} e) {{
{t} result = 1;
while (e > 0) {{
    if (e & 1) result *= base;
    base *= base;
    e >>= 1;
}}
return result;
}}""")


def _u64() -> DType:
    from ..ir.types import u64
    return u64


def _assigned_vars(block: n.Block) -> set[str]:
    """Names of the variables a block may write (assignments and atomic results)."""
    out = set()
    for s in walk_stmts(block):
        if isinstance(s, (n.Assign, n.Declare)):
            out.add(s.var.name)
        elif isinstance(s, n.AtomicOp) and s.result is not None:
            out.add(s.result.name)
        elif isinstance(s, n.LoadLine):
            out.update(v.name for v in s.parts)
    return out


def _invariant(e: n.Expr, assigned: set[str]) -> bool:
    """True when `e` cannot change while a loop whose body writes `assigned` runs
    (memory reads may: stores or other units can change them)."""
    from ..ir.visit import walk_exprs
    for sub in walk_exprs(e):
        if isinstance(sub, n.Index):
            return False
        if isinstance(sub, n.Load) and sub.var.name in assigned:
            return False
    return True


def float_literal(value: float, suffix: str) -> str:
    """A C float literal with `suffix` ("f" or ""), exact for the value's repr."""
    text = repr(float(value))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + suffix


def uses_builtins(kernel: n.Kernel) -> set[str]:
    return {e.name for e in walk_all_exprs(kernel.body) if isinstance(e, n.Builtin)}


def scalar_locals(kernel: n.Kernel, abi: KernelABI, em: "CEmitter") -> list[str]:
    """`T name = info.name;` for each scalar parameter (the body may assign to it)."""
    out = []
    for p in kernel.params:
        if p.kind != "scalar":
            continue
        field = abi.field("scalar", p.name)
        if field is None:
            continue
        src = f"info.{field_name(abi, em.d.name, 'scalar', p.name)}"
        value = f"{src} != 0u" if p.dtype.is_bool else src
        if field.dtype is not p.dtype and p.dtype.is_float:  # bf16, sent as f32
            value = f"{em.d.type_name(p.dtype)}({src})"
        out.append(f"{em.d.type_name(p.dtype)} {em.var(n.Var(p.name, p.dtype))} = {value};")
    return out


def matrix_decls(kernel: n.Kernel, em: "CEmitter") -> list[str]:
    """The declaration of each cmma fragment (or array of them), in the dialect's form."""
    return [em.d.matrix.declaration(em, d) for d in kernel.matrices]


def local_array_decls(kernel: n.Kernel, em: "CEmitter") -> list[str]:
    """`T name[size] = {};` for each LocalArray: one per unit, zero-filled (CUDA and Metal
    leave a plain `T name[size];` uninitialised; zero makes every read defined)."""
    return [f"{em.d.type_name(d.buffer.elem)} {em.buffer(d.buffer)}[{d.size}] = {{}};"
            for d in kernel.local_arrays]
