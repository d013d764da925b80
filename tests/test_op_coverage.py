"""Every target covers every op it claims, and says so clearly for the ops it does not.

For each registered target (the built-in ones, and the toy C-like target of
tests/toy_target.py registered for the test) and each op of ir/ops.py's table: when the
target claims the op (`supports_op`), its spelling resolves and its code generator emits
a kernel using the op; when it does not, compiling such a kernel is a CompileError
naming the target, never a KeyError from a table deep inside a generator.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from cubepy import targets
from cubepy.abi import compute_abi
from cubepy.errors import CompileError
from cubepy.ir import nodes as n
from cubepy.ir.ops import OPS, LOWERED, AtomicOp, BinaryOp, BitOp, CompareOp, Helper, \
    LogicalOp, MathFn, PlaneOp, SyncOp, UnaryOp
from cubepy.ir.passes import run_pipeline
from cubepy.ir.types import bool_, f32, i32, u32

import corpus
import toy_target
from clike_kernels import C, idx, kernel, ld, pos

BUILTIN = ("cuda", "wgsl", "metal", "cpu")
TARGETS = BUILTIN + ("toyc",)
_INT_BINARY = {"bitand", "bitor", "bitxor", "shl", "shr"}


@pytest.fixture(autouse=True)
def toyc():
    with targets.registered(toy_target.TOYC) as t:
        yield t


def _one_op_kernel(op) -> n.Kernel:
    """A kernel whose only work is `op` (an ir.ops enum member)."""
    xf, yf = (n.BufferRef(name, f32, "global") for name in ("xf", "yf"))
    xi = n.BufferRef("xi", i32, "global")
    flag = n.BufferRef("flag", bool_, "global")
    params = [n.Param("xf", "array", f32), n.Param("yf", "array", f32),
              n.Param("xi", "array", i32), n.Param("flag", "array", bool_)]
    a, b, k = idx(xf, pos()), idx(yf, pos()), idx(xi, pos())
    cond = n.Compare(ty=bool_, op="lt", lhs=a, rhs=b)
    v = op.value
    if isinstance(op, BinaryOp):
        body = [n.Store(buffer=xi, index=pos(), value=n.Binary(ty=i32, op=v, lhs=k, rhs=k))
                if v in _INT_BINARY else
                n.Store(buffer=xf, index=pos(), value=n.Binary(ty=f32, op=v, lhs=a, rhs=b))]
    elif isinstance(op, CompareOp):
        body = [n.Store(buffer=flag, index=pos(),
                        value=n.Compare(ty=bool_, op=v, lhs=a, rhs=b))]
    elif isinstance(op, UnaryOp):
        operand, buf = {"bitnot": (k, xi), "not": (cond, flag)}.get(v, (a, xf))
        body = [n.Store(buffer=buf, index=pos(),
                        value=n.Unary(ty=operand.ty, op=v, operand=operand))]
    elif isinstance(op, LogicalOp):
        other = n.Compare(ty=bool_, op="gt", lhs=b, rhs=C(0.0, f32))
        body = [n.Store(buffer=flag, index=pos(),
                        value=n.Logical(ty=bool_, op=v, lhs=cond, rhs=other))]
    elif isinstance(op, MathFn):
        call_ty = OPS[op].typing([f32])  # bool (isnan, ...), i32 (frexp_exp) or f32
        args = (a, k) if v == "ldexp" else (a, b, a)[:OPS[op].arity]  # ldexp(x, i32)
        call = n.Call(ty=call_ty, func=v, args=args)
        out = {bool_: flag, i32: xi}.get(call_ty, xf)
        body = [n.Store(buffer=out, index=pos(), value=call)]
    elif isinstance(op, BitOp):
        if op is BitOp.BITCAST:
            value = n.Bits(ty=i32, op=v, args=(a,))
        else:
            ty = u32 if OPS[op].typing([i32]) is u32 else i32
            value = n.Bits(ty=ty, op=v, args=(k, k)[:OPS[op].arity])
            if ty is u32:
                value = n.Cast(ty=i32, operand=value)
        body = [n.Store(buffer=xi, index=pos(), value=value)]
    elif isinstance(op, AtomicOp):
        old = n.Var("old", i32)
        body = [n.Declare(var=old),
                n.AtomicOp(op=v, buffer=xi, index=C(0, u32),
                           value=None if op is AtomicOp.LOAD else C(1, i32),
                           result=None if op is AtomicOp.STORE else old,
                           compare=C(0, i32) if op is AtomicOp.COMPARE_EXCHANGE else None),
                n.Store(buffer=xi, index=pos(), value=ld(old))]
    elif isinstance(op, SyncOp):
        body = [n.Store(buffer=xf, index=pos(), value=a), n.Barrier(op=v)]
    elif v in ("ballot", "elect"):  # a u32 word of the lane mask; a bool
        value = cond if v == "ballot" else C(True, bool_)
        ty = u32 if v == "ballot" else bool_
        out = n.Var("got", ty)
        plane = n.Plane(ty=ty, op=v, value=value, arg=C(0, u32) if v == "ballot" else None)
        stored = n.Cast(ty=i32, operand=ld(out)) if ty is u32 else ld(out)
        body = [n.Assign(var=out, value=plane, declare=True),
                n.Store(buffer=xi if ty is u32 else flag, index=pos(), value=stored)]
    else:
        value = cond if v in ("all", "any") else a
        out = n.Var("got", value.ty)
        plane = n.Plane(ty=value.ty, op=v, value=value,
                        arg=C(1, u32) if OPS[op].takes_lane else None)
        body = [n.Assign(var=out, value=plane, declare=True),
                n.Store(buffer=flag if value.ty is bool_ else xf, index=pos(), value=ld(out))]
    return kernel(f"one_{type(op).__name__}_{v}", params, body, cube_dim=(32, 1, 1))


def _generate(kernel_ir: n.Kernel, target: targets.Target):
    """The target's code for a kernel after its passes, from its registered emitter
    (the cpu target's: a program holding its numpy code)."""
    legal = run_pipeline(kernel_ir, target.name)
    abi = compute_abi(legal, True, needs_cube_count=target.needs_cube_count)
    if not target.shows_source:
        return target.emit_function()(legal, abi).source
    return target.emit_function()(legal, abi, True)


@pytest.mark.parametrize("name", TARGETS)
@pytest.mark.parametrize("op", list(OPS), ids=lambda op: f"{type(op).__name__}.{op.value}")
def test_every_claimed_op_is_generated_and_every_other_is_a_clear_error(name, op):
    target = targets.get_target(name)
    kernel_ir = _one_op_kernel(op)
    if target.supports_op(op) and (not isinstance(op, AtomicOp)
                                   or "i32" in target.atomic_dtypes.get(op.value, ())):
        assert target.spelling(op) is not None
        assert _generate(kernel_ir, target)
    else:
        with pytest.raises(CompileError, match=target.title):
            _generate(kernel_ir, target)


def test_the_toy_target_claims_less_than_the_builtin_ones(toyc):
    assert not any(toyc.supports_op(op) for op in PlaneOp)
    assert not any(toyc.supports_op(op) for op in BitOp)
    assert not toyc.supports_op(SyncOp.SYNC_PLANE)  # no planes
    assert not toyc.supports_op(SyncOp.FENCE_DEVICE)  # its override
    assert [op for op in AtomicOp if toyc.supports_op(op)] == [AtomicOp.ADD]
    assert toyc.spelling(MathFn.RSQRT) == LOWERED  # its override
    assert toyc.spelling(MathFn.EXP) == "expf"  # the C family's default
    # WGSL alone lacks one op: a device-scope fence (targets/wgsl.py says why)
    lacking = {(t, op) for t in BUILTIN for op in OPS
               if not targets.get_target(t).supports_op(op)}
    assert lacking == {("wgsl", SyncOp.FENCE_DEVICE)}


# Today's spellings (before the op table), frozen: the table must reproduce each one.
OLD_CUDA_MATH = {"exp": "expf", "exp2": "exp2f", "log": "logf", "log2": "log2f",
                 "sqrt": "sqrtf", "rsqrt": "rsqrtf", "sin": "sinf", "cos": "cosf",
                 "tan": "tanf", "tanh": "tanhf", "asin": "asinf", "acos": "acosf",
                 "atan": "atanf", "atan2": "atan2f", "sinh": "sinhf", "cosh": "coshf",
                 "pow": "powf", "hypot": "hypotf", "floor": "floorf", "ceil": "ceilf",
                 "round": "rintf", "trunc": "truncf", "erf": "erff", "fma": "fmaf"}
OLD_METAL_MATH = {f: f for f in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
                                 "cos", "tan", "tanh", "asin", "acos", "atan", "atan2",
                                 "sinh", "cosh", "pow", "floor", "ceil", "trunc", "fma",
                                 "isnan", "isinf")} | {"round": "rint"}
OLD_WGSL_MATH = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
                 "rsqrt": "inverseSqrt", "sin": "sin", "cos": "cos", "tan": "tan",
                 "tanh": "tanh", "asin": "asin", "acos": "acos", "atan": "atan",
                 "sinh": "sinh", "cosh": "cosh", "floor": "floor",
                 "ceil": "ceil", "round": "round", "trunc": "trunc", "fma": "fma",
                 "clamp": "clamp"}
OLD_NUMPY_MATH = {"exp": "np.exp", "exp2": "np.exp2", "log": "np.log", "log2": "np.log2",
                  "sqrt": "np.sqrt", "rsqrt": "_ops.rsqrt", "sin": "np.sin", "cos": "np.cos",
                  "tan": "np.tan", "tanh": "np.tanh", "asin": "np.arcsin",
                  "acos": "np.arccos", "atan": "np.arctan", "atan2": "np.arctan2",
                  "sinh": "np.sinh", "cosh": "np.cosh", "pow": "np.power",
                  "hypot": "np.hypot", "floor": "np.floor", "ceil": "np.ceil",
                  "round": "np.rint", "trunc": "np.trunc", "erf": "_ops.erf",
                  "fma": "_ops.fma", "clamp": "_ops.clamp", "isnan": "np.isnan",
                  "isinf": "np.isinf"}
OLD_CUDA_ATOMICS = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin",
                    "max": "atomicMax", "and": "atomicAnd", "or": "atomicOr",
                    "xor": "atomicXor", "exchange": "atomicExch"}
OLD_WGSL_ATOMICS = {**OLD_CUDA_ATOMICS, "exchange": "atomicExchange"}
OLD_METAL_PLANE = {"sum": "simd_sum", "prod": "simd_product", "min": "simd_min",
                   "max": "simd_max", "all": "simd_all", "any": "simd_any",
                   "inclusive_sum": "simd_prefix_inclusive_sum",
                   "exclusive_sum": "simd_prefix_exclusive_sum",
                   "broadcast": "simd_broadcast", "shuffle": "simd_shuffle",
                   "shuffle_xor": "simd_shuffle_xor", "shuffle_up": "simd_shuffle_up",
                   "shuffle_down": "simd_shuffle_down"}
OLD_WGSL_PLANE = {"sum": "subgroupAdd", "prod": "subgroupMul", "min": "subgroupMin",
                  "max": "subgroupMax", "all": "subgroupAll", "any": "subgroupAny",
                  "inclusive_sum": "subgroupInclusiveAdd",
                  "exclusive_sum": "subgroupExclusiveAdd", "broadcast": "subgroupBroadcast",
                  "shuffle": "subgroupShuffle", "shuffle_xor": "subgroupShuffleXor",
                  "shuffle_up": "subgroupShuffleUp", "shuffle_down": "subgroupShuffleDown"}


def _named(target: str, kind) -> dict[str, str]:
    t = targets.get_target(target)
    return {op.value: s for op in kind
            if (s := t.spelling(op)) != LOWERED and not isinstance(s, Helper)}


# the math ops the old tables covered (the math library added more rows since)
OLD_MATH_OPS = set(OLD_NUMPY_MATH)


def _named_old_math(target: str) -> dict[str, str]:
    return {k: v for k, v in _named(target, MathFn).items() if k in OLD_MATH_OPS}


def test_resolved_spellings_equal_the_old_tables():
    assert _named_old_math("cuda") == OLD_CUDA_MATH
    assert _named_old_math("metal") == OLD_METAL_MATH
    assert _named_old_math("wgsl") == OLD_WGSL_MATH
    assert _named_old_math("cpu") == OLD_NUMPY_MATH
    wgsl_helpers = {op.value for op in MathFn if op.value in OLD_MATH_OPS
                    and isinstance(targets.get_target("wgsl").spelling(op), Helper)}
    assert wgsl_helpers == {"pow", "hypot", "erf", "atan2"}  # atan2: its divisor range
    assert _named("cuda", AtomicOp) == {**OLD_CUDA_ATOMICS, "compare_exchange": "atomicCAS",
                                        "inc": "atomicInc", "dec": "atomicDec"}
    assert _named("wgsl", AtomicOp) == {**OLD_WGSL_ATOMICS, "load": "atomicLoad",
                                        "store": "atomicStore"}
    # (later plane ops add spellings of their own)
    assert {k: v for k, v in _named("metal", PlaneOp).items() if k in OLD_METAL_PLANE} \
        == OLD_METAL_PLANE
    assert {k: v for k, v in _named("wgsl", PlaneOp).items() if k in OLD_WGSL_PLANE} \
        == OLD_WGSL_PLANE


# -- the toy C-like target on corpus kernels --------------------------------------------

TOY_CASES = ("seed_f32", "shared_reduce", "histogram16", "math_mix")


def _toy_source(case_id: str) -> str:
    cid, k, dim, spec, _ = next(c for c in corpus.SOURCE_CASES if c[0] == case_id)
    return k.source("toyc", cube_dim=dim, **spec)


@pytest.mark.parametrize("case_id", TOY_CASES)
def test_toy_target_generates_corpus_kernels(case_id):
    src = _toy_source(case_id)
    assert "generated by cubepy for ToyC" in src
    assert "__launch_bounds__" not in src and "__syncthreads" not in src


def test_toy_target_spells_through_its_override_and_its_family():
    src = _toy_source("math_mix")
    assert "rsqrtf" not in src  # its override: written as 1 / sqrtf
    assert "__atomic_fetch_add" in _toy_source("histogram16")


def test_toy_target_rejects_what_it_lacks_by_name():
    cases = {c[0]: c for c in corpus.SOURCE_CASES}
    for case_id, what in (("seed_f16", "ToyC has no f16"),
                          ("atomic_max_units", "ToyC has no atomic_max on i32"),
                          ("plane_reductions_f32", "ToyC has no plane_sum")):
        _, k, dim, spec, _ = cases[case_id]
        with pytest.raises(CompileError, match=what):
            k.source("toyc", cube_dim=dim, **spec)


@pytest.mark.clang
@pytest.mark.skipif(shutil.which("clang++") is None, reason="clang++ not installed")
@pytest.mark.parametrize("case_id", TOY_CASES)
def test_toy_target_source_compiles_with_clang(case_id, tmp_path):
    path = tmp_path / f"{case_id}.cpp"
    path.write_text(_toy_source(case_id))
    r = subprocess.run(["clang++", "-std=c++17", "-fsyntax-only", "-Wall", str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


def test_a_registered_target_appears_in_the_explorer_and_the_cli(tmp_path, capsys):
    pytest.importorskip("pygments")
    from cubepy.cli import main
    cid, k, dim, spec, _ = next(c for c in corpus.SOURCE_CASES if c[0] == "axpy_f32")
    page = k.explore(cube_dim=dim, **spec)
    toy = next(v for v in page.targets if v.name == "toyc")
    assert toy.title == "ToyC" and any(toy.py_lines)  # lines mapped back to Python
    assert 'data-target="toyc"' in page.html() and ">tc</a>" in page.html()
    assert main(["emit", f"{corpus.__file__}:axpy", "-D", "Float=f32",
                 "--target", "toyc"]) == 0
    assert "generated by cubepy for ToyC" in capsys.readouterr().out


@pytest.mark.parametrize("name", TARGETS)
def test_every_generator_takes_whole_line_accesses(name):
    """LoadLine/StoreLine reach the emitters of targets with vector accesses; the others
    get element accesses from their passes, so every generator handles a line kernel."""
    from cubepy.ir.parser import parse_kernel
    from cubepy.ir.types import f32
    from cubepy.ir.visit import walk_stmts
    target = targets.get_target(name)
    k = parse_kernel(corpus.line_axpy.ir(cube_dim=(64, 1, 1), Float=f32,
                                         line_sizes={"x": 4, "y": 4}))
    assert any(isinstance(s, (n.LoadLine, n.StoreLine)) for s in walk_stmts(k.body))
    legal = run_pipeline(k, name)
    whole = any(isinstance(s, (n.LoadLine, n.StoreLine)) for s in walk_stmts(legal.body))
    assert whole is target.vector_lines
    code = _generate(k, target)
    source = code if isinstance(code, str) else code.source
    vector = "vec4<f32>" if target.family == "wgsl" else "float4"
    assert (vector in source) is target.vector_lines
