"""The target registry, dtype facts, scalar semantics, op table and NameTable hold
exactly the facts the compiler used before they were gathered (literal copies below)."""
from __future__ import annotations

import numpy as np
import pytest

from cubepy import targets
from cubepy.codegen import reserved
from cubepy.errors import OptionError
from cubepy.ir import dtype_facts, nodes, ops, scalar
from cubepy.ir.names import NameTable
from cubepy.ir.passes import consteval
from cubepy.ir.types import ALL_DTYPES, bf16, bool_, f16, f32, f64, i32, i64, u32, u64

ALL = {"f16", "bf16", "f32", "f64", "i32", "i64", "u32", "u64", "bool"}
# The tables as they stood (legalize.py UNSUPPORTED, calls.py atomics and planes,
# kernel.py LINE_SIZES and :152/:417, explore.py/explore_html.py names).
OLD_UNSUPPORTED = {"wgsl": {"f64": "f32", "i64": "i32", "u64": "u32", "bf16": "f32 or f16"},
                   "metal": {"f64": "f32"}, "cpu": {"bf16": "f32 or f16"}, "cuda": {}}
OLD_TITLES = {"wgsl": "WGSL", "metal": "Metal", "cpu": "the cpu runtime", "cuda": "CUDA"}
OLD_SHORT = {"cuda": "cu", "wgsl": "wg", "metal": "mt"}
OLD_ATOMIC_FLOAT_OK = ("add", "sub", "exchange", "min", "max")
OLD_ATOMIC_OPS = ("add", "sub", "min", "max", "and", "or", "xor", "exchange",
                  "compare_exchange")
OLD_PLANE_TYPES = {"i32", "u32", "f32", "f16", "bool"}
NEW_ATOMIC_OPS = ("load", "store", "inc", "dec")  # added with the atomics breadth
WIDE_LOAD_STORE = {"cuda": {"i64", "u64", "f64"}, "cpu": {"i64", "u64", "f64"},
                   "wgsl": set(), "metal": set()}
# Added since: the product scans and votes (ballot's argument is its mask word), and the
# 64-bit and bf16 plane types of the targets that have them.
NEW_PLANE = {"inclusive_prod": False, "exclusive_prod": False, "ballot": True,
             "elect": False}
NEW_PLANE_TYPES = {"cuda": {"f64", "i64", "u64", "bf16"}, "cpu": {"f64", "i64", "u64"},
                   "wgsl": set(), "metal": set()}
# Added since: the 8-bit floats, on CUDA and the cpu runtime (emulated) only.
FP8 = {"e4m3", "e5m2"}
NEW_UNSUPPORTED = {"wgsl": {"e4m3": "f16 or f32", "e5m2": "f16 or f32"},
                   "metal": {"e4m3": "f16 or f32", "e5m2": "f16 or f32"},
                   "cpu": {}, "cuda": {}}


def test_builtin_targets_in_order():
    assert [t.name for t in targets.all_targets()][:4] == ["cuda", "wgsl", "metal", "cpu"]
    assert targets.source_targets()[:3] == ("cuda", "wgsl", "metal")
    assert "cpu" not in targets.source_targets()


@pytest.mark.parametrize("name", ["cuda", "wgsl", "metal", "cpu"])
def test_target_tables_match_the_old_ones(name):
    t = targets.get_target(name)
    assert t.dtypes == (ALL | FP8) - set(OLD_UNSUPPORTED[name]) - set(NEW_UNSUPPORTED[name])
    assert dict(t.replacements) == {**OLD_UNSUPPORTED[name], **NEW_UNSUPPORTED[name]}
    assert t.title == OLD_TITLES[name]
    old_atomics = {op: {"i32", "u32"} | ({"f32"} if op in OLD_ATOMIC_FLOAT_OK else set())
                   for op in OLD_ATOMIC_OPS}
    got = {op: set(d) for op, d in t.atomic_dtypes.items()}
    if name in ("wgsl", "metal"):
        assert {op: got[op] for op in OLD_ATOMIC_OPS} == old_atomics
    else:  # CUDA and the cpu runtime add 64-bit, f64 and half atomics
        assert all(got[op] >= types for op, types in old_atomics.items())
        assert got == {op: set(d) - ({"bf16"} if name == "cpu" else set())
                       for op, d in targets.WIDE_ATOMICS.items()}
    assert {op: got[op] for op in NEW_ATOMIC_OPS} == {
        "load": {"i32", "u32", "f32"} | WIDE_LOAD_STORE[name],
        "store": {"i32", "u32", "f32"} | WIDE_LOAD_STORE[name],
        "inc": {"u32"}, "dec": {"u32"}}
    assert t.plane_ops == set(OLD_PLANE) | set(NEW_PLANE)
    assert t.plane_dtypes == OLD_PLANE_TYPES | NEW_PLANE_TYPES[name]
    assert t.line_sizes == (1, 2, 4, 8)
    assert t.bool_storage_bytes == (4 if name == "wgsl" else 1)
    assert t.needs_cube_count == (name == "wgsl")
    assert t.default_shared_bytes == 48 * 1024
    assert t.unroll_pragma == ("#pragma unroll" if name == "cuda" else "")
    if name in OLD_SHORT:
        assert t.short == OLD_SHORT[name]


def test_reserved_names_come_from_the_reserved_tables():
    for name in ("cuda", "wgsl", "metal"):
        assert targets.get_target(name).reserved is reserved.BY_TARGET[name]
    assert "threadIdx" in targets.get_target("wgsl").reserved  # COMMON to every target


def test_the_registry_imports_no_code_generator_and_no_runtime():
    import subprocess
    import sys
    code = ("import sys, cubepy.targets; bad = sorted(m for m in sys.modules if m.startswith("
            "('cubepy.codegen', 'cubepy.runtime.cpu', 'cubepy.runtime.cuda', "
            "'cubepy.runtime.wgpu'))); print(bad); assert not bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_portable_is_the_frontends_table():
    p = targets.PORTABLE
    for op in OLD_ATOMIC_OPS:
        assert p.atomic_dtypes[op] == {"i32", "u32"} | (
            {"f32"} if op in OLD_ATOMIC_FLOAT_OK else set())
    assert p.plane_dtypes == OLD_PLANE_TYPES and p.line_sizes == (1, 2, 4, 8)


def test_unknown_target_is_an_option_error_listing_the_names():
    with pytest.raises(OptionError, match="unknown target 'hip'.*cuda, wgsl, metal, cpu"):
        targets.get_target("hip")


def test_registered_adds_and_removes_a_target_without_touching_portable():
    base = targets.get_target("cuda")
    toy = targets.Target(**{**base.__dict__, "name": "toy", "atomic_dtypes": {},
                            "plane_ops": frozenset(), "line_sizes": (1,)})
    before = targets.PORTABLE
    with targets.registered(toy):
        assert targets.get_target("toy") is toy
        assert not toy.supports_op(ops.AtomicOp.ADD)
        assert not toy.supports_op(ops.PlaneOp.SUM)
    assert "toy" not in targets.target_names()
    assert targets.PORTABLE is before and targets.PORTABLE.line_sizes == (1, 2, 4, 8)
    with pytest.raises(ValueError, match="already registered"):
        targets.register(base)


def test_op_overrides_win_over_the_family_default():
    base = targets.get_target("cuda")
    toy = targets.Target(**{**base.__dict__, "name": "toy2",
                            "op_overrides": {"math.round": "roundf"}})
    assert toy.spelling(ops.MathFn.ROUND) == "roundf"
    assert base.spelling(ops.MathFn.ROUND) == "rintf"
    assert toy.spelling(ops.MathFn.EXP) == "expf"


# -- ops --------------------------------------------------------------------------------

OLD_MATH = {"exp": 1, "exp2": 1, "log": 1, "log2": 1, "sqrt": 1, "rsqrt": 1, "sin": 1,
            "cos": 1, "tan": 1, "tanh": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2,
            "sinh": 1, "cosh": 1, "pow": 2, "hypot": 2, "floor": 1, "ceil": 1, "round": 1,
            "trunc": 1, "erf": 1, "fma": 3, "clamp": 3, "isnan": 1, "isinf": 1}
OLD_PLANE = {"sum": False, "prod": False, "min": False, "max": False, "all": False,
             "any": False, "inclusive_sum": False, "exclusive_sum": False, "broadcast": True,
             "shuffle": True, "shuffle_xor": True, "shuffle_up": True, "shuffle_down": True}


def test_op_enums_and_ir_names_equal_the_old_tables():
    binary = ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "bitand", "bitor",
              "bitxor", "shl", "shr", "max", "min")
    assert tuple(ops.BinaryOp) == nodes.BINARY_OPS == binary
    assert tuple(ops.CompareOp) == nodes.COMPARE_OPS == ("eq", "ne", "lt", "le", "gt", "ge")
    assert tuple(ops.UnaryOp) == nodes.UNARY_OPS == ("neg", "bitnot", "not", "abs")
    assert tuple(ops.LogicalOp) == nodes.LOGICAL_OPS == ("and", "or")
    assert {k: nodes.MATH_FUNCS[k] for k in OLD_MATH} == OLD_MATH  # (+ the math library)
    assert tuple(ops.AtomicOp) == nodes.ATOMIC_OPS == OLD_ATOMIC_OPS + NEW_ATOMIC_OPS
    assert nodes.PLANE_OPS == OLD_PLANE | NEW_PLANE
    assert ops.BinaryOp.ADD == "add" and f"{ops.BinaryOp.ADD}" == "add"


def test_ops_sharing_a_name_keep_separate_rows():
    assert ops.info("max", "binary").op is ops.BinaryOp.MAX
    assert ops.info("max", "atomic").spell["c"] == "atomicMax"
    assert ops.info("max", "plane").spell["msl"] == "simd_max"
    assert len(ops.OPS) == sum(len(cls) for cls in ops.KINDS.values())
    with pytest.raises(TypeError, match="needs its kind"):
        ops.info("max")


def test_op_typing_rules():
    assert ops.info(ops.CompareOp.LT).typing([i32, i32]) is bool_
    assert ops.info(ops.MathFn.ISNAN).typing([f32]) is bool_
    assert ops.info(ops.MathFn.CLAMP).typing([f16, f16, f16]) is f16
    assert ops.info(ops.BinaryOp.ADD).typing([u64, u64]) is u64


def test_op_folding_uses_the_shared_semantics():
    assert ops.info(ops.BinaryOp.FLOORDIV).fold(ops.BinaryOp.FLOORDIV, i32, -7, 2) == -4
    assert ops.info(ops.UnaryOp.NEG).fold(ops.UnaryOp.NEG, i32, -2**31) == -2**31
    assert ops.info(ops.CompareOp.LT).fold(ops.CompareOp.LT, i32, 1, 2) is True


# -- dtype facts and scalar semantics ---------------------------------------------------

OLD_INT_RANGE = {"i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
                 "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}
OLD_FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38,
                 "f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308}
OLD_STRUCT = {"f16": "e", "f32": "f", "f64": "d", "i32": "i", "i64": "q", "u32": "I",
              "u64": "Q", "bool": "I"}


def test_dtype_facts_match_the_old_tables():
    for t in ALL_DTYPES:
        f = dtype_facts.facts(t)
        if t.name in OLD_INT_RANGE:
            assert dtype_facts.int_range(t) == OLD_INT_RANGE[t.name]
        else:
            assert f.lo is None and f.hi is None
        assert f.float_max == {**OLD_FLOAT_MAX, "e4m3": 448.0, "e5m2": 57344.0}.get(t.name)
        assert f.struct_code == OLD_STRUCT.get(t.name)
        if t is not bf16 and t.name not in FP8:
            assert np.dtype(f.numpy_name) == t.numpy
    assert dtype_facts.spell("c", u64) == "unsigned long long"
    assert dtype_facts.spell("msl", f64) is None and dtype_facts.spell("wgsl", i64) is None
    with pytest.raises(ValueError):
        dtype_facts.int_range(f32)


EDGES = [0, 1, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**63 - 1,
         2**63, -2**63, -2**63 - 1, 2**64 - 1, 2**64, 12345678901234567890123]


@pytest.mark.parametrize("t", [i32, i64, u32, u64], ids=str)
def test_one_wrap_rule(t):
    half = 1 << (t.bits - 1)
    for v in EDGES:
        w = dtype_facts.wrap(v, t)
        reference = (v + half) % (2 * half) - half if t.is_signed else v % (2 * half)
        assert w == reference == consteval.wrap(v, t)
        assert dtype_facts.fits(w, t)


@pytest.mark.parametrize("t", [i32, i64, u32, u64], ids=str)
def test_scalar_rules_agree_between_scalars_and_arrays(t):
    lo, hi = dtype_facts.int_range(t)
    pairs = [(7, 2), (lo, 3), (hi, 7), (5, 0), (0, 5)]
    if t.is_signed:
        pairs += [(-7, 2), (7, -2), (lo, -1), (-5, 0)]
    for a, b in pairs:
        arr_a, arr_b = np.array([a], t.numpy), np.array([b], t.numpy)
        with np.errstate(all="ignore"):
            assert scalar.int_floordiv(arr_a, arr_b, t)[0] == scalar.int_floordiv(a, b, t)
            assert scalar.int_mod(arr_a, arr_b, t)[0] == scalar.int_mod(a, b, t)
        assert scalar.int_floordiv(a, b, t) == consteval.int_floordiv(a, b, t)
        assert scalar.int_mod(a, b, t) == consteval.int_mod(a, b, t)
    for amount in (0, 1, t.bits - 1, t.bits, t.bits + 3):
        for op in ("shl", "shr"):
            a = lo + 5 if t.is_signed else hi - 5
            arr = scalar.shift(op, np.array([a], t.numpy), np.array([amount], t.numpy), t)
            assert arr[0] == scalar.shift(op, a, amount, t) == consteval.binary(op, t, a, amount)


@pytest.mark.parametrize("t", [i32, i64, u32, u64], ids=str)
def test_float_to_int_saturates_like_the_folder(t):
    values = [0.0, 3.7, -3.7, 1e30, -1e30, float("inf"), float("-inf"), float("nan"),
              2.0**31, 2.0**32, 2.0**63, 2.0**64, -2.0**31 - 1]
    folded = [consteval.cast(v, f64, t) for v in values]
    assert [scalar.float_to_int(v, t) for v in values] == folded
    assert list(scalar.float_to_int(np.array(values), t)) == folded


def test_round_float():
    assert scalar.round_float(1 / 3, f16) == float(np.float16(1 / 3))
    assert scalar.round_float(1e6, f16) == float("inf")
    assert scalar.round_float(0.1, bf16) is None
    assert scalar.round_float(np.array([0.1]), f32).dtype == np.float32


# -- NameTable --------------------------------------------------------------------------

def test_name_styles_reproduce_each_convention():
    t = NameTable({"x", "x_1"})
    assert [t.fresh("x"), t.fresh("x"), t.fresh("y")] == ["x_2", "x_3", "y"]  # build.py
    t = NameTable({"i_1"}, style="always_n")
    assert [t.fresh("i"), t.fresh("i"), t.fresh("j")] == ["i_2", "i_3", "j_1"]  # rewrite.py
    t = NameTable({"cube_active"}, style="append_")
    assert [t.fresh("cube_active"), t.fresh("cube_active")] == ["cube_active_",
                                                                "cube_active__"]
    t = NameTable({"a"}, style="n")
    assert [t.fresh("a"), t.fresh("a"), t.fresh("b")] == ["a1", "a2", "b"]
    t = NameTable()
    assert [t.counter("cube_t"), t.counter("cube_load"), t.counter("_t")] == [
        "cube_t1", "cube_load2", "_t3"]
    t.reserve("z")
    assert "z" in t and t.fresh("z") == "z_1"
    with pytest.raises(ValueError, match="unknown name style"):
        NameTable(style="dots")
