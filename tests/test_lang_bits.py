"""Integer and bit operations: popcount, clz, ctz, ffs, reverse_bits, mul_hi,
saturating_add/sub, bitcast(T, x), integer abs and min/max of several values.

Each op runs on every runtime present (cpu, wgpu, cuda) against a plain-Python reference
over edge values (0, 1, all ones, the sign bit, the extremes) and random ones, compared
exactly; its source for CUDA, WGSL and Metal is compiled by nvcc, naga and clang++
(tests/source_check.py); what a target lacks (64-bit integers in WGSL) and the user's
mistakes are CompileErrors that say so.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import cubepy
from cubepy import (ABSOLUTE_POS, Array, CompileError, Comptime, CubeCount, CubeDim, Line,
                    cube, f16, bf16, f32, f64, i32, i64, u32, u64)
from cubepy.runtime import cpu_bits
from source_check import validate_sources

AnyInt = cubepy.generic("AnyInt", [i32, u32, i64, u64])
Word = cubepy.generic("Word", [i32, u32, i64, u64, f32, f64])
DIM = 64
INTS = (i32, u32, i64, u64)
COUNTS = ("popcount", "clz", "ctz", "ffs")
BINARY = ("mul_hi", "saturating_add", "saturating_sub")


# -- kernels ------------------------------------------------------------------------------

@cube(launch=True)
def count_kernel(x: Array[AnyInt], out: Array[u32], op: Comptime[str]):
    i = ABSOLUTE_POS
    if op == "popcount":
        out[i] = cubepy.popcount(x[i])
    elif op == "clz":
        out[i] = cubepy.clz(x[i])
    elif op == "ctz":
        out[i] = cubepy.ctz(x[i])
    else:
        out[i] = cubepy.ffs(x[i])


@cube(launch=True)
def reverse_kernel(x: Array[AnyInt], out: Array[AnyInt]):
    out[ABSOLUTE_POS] = cubepy.reverse_bits(x[ABSOLUTE_POS])


@cube(launch=True)
def binary_kernel(a: Array[AnyInt], b: Array[AnyInt], out: Array[AnyInt], op: Comptime[str]):
    i = ABSOLUTE_POS
    if op == "mul_hi":
        out[i] = cubepy.mul_hi(a[i], b[i])
    elif op == "saturating_add":
        out[i] = cubepy.saturating_add(a[i], b[i])
    else:
        out[i] = cubepy.saturating_sub(a[i], b[i])


@cube(launch=True)
def alias_kernel(x: Array[u32], out: Array[u32]):
    i = ABSOLUTE_POS
    v = x[i]
    out[i * u32(7)] = cubepy.count_ones(v)
    out[i * u32(7) + u32(1)] = cubepy.popc(v)
    out[i * u32(7) + u32(2)] = cubepy.leading_zeros(v)
    out[i * u32(7) + u32(3)] = cubepy.trailing_zeros(v)
    out[i * u32(7) + u32(4)] = cubepy.find_first_set(v)
    out[i * u32(7) + u32(5)] = cubepy.brev(v)
    out[i * u32(7) + u32(6)] = cubepy.mulhi(v, v)


@cube(launch=True)
def abs_kernel(x: Array[AnyInt], out: Array[AnyInt]):
    out[ABSOLUTE_POS] = abs(x[ABSOLUTE_POS])


MinMax = cubepy.generic("MinMax", [i32, u32, i64, f32, f64])


@cube(launch=True)
def minmax_kernel(a: Array[MinMax], b: Array[MinMax], c: Array[MinMax], d: Array[MinMax],
                  out: Array[MinMax]):
    i = ABSOLUTE_POS
    out[i * u32(4)] = max(a[i], b[i], c[i])
    out[i * u32(4) + u32(1)] = min(a[i], b[i], c[i])
    out[i * u32(4) + u32(2)] = max(a[i], b[i], c[i], d[i])
    out[i * u32(4) + u32(3)] = min(a[i], 0, c[i], d[i])  # a literal among them


@cube(launch=True)
def line_kernel(x: Array[Line[u32]], counts: Array[Line[u32]], rev: Array[Line[u32]],
                floats: Array[Line[f32]]):
    i = ABSOLUTE_POS
    v = x[i]
    counts[i] = cubepy.popcount(v) + cubepy.ctz(v) * u32(100)
    rev[i] = cubepy.saturating_add(cubepy.reverse_bits(v), u32(1))
    floats[i] = cubepy.bitcast(f32, v)


@cube(launch=True)
def constant_kernel(out: Array[u32]):
    out[0] = cubepy.popcount(u32(0xF0F0)) + cubepy.clz(i32(1)) * u32(100)
    out[1] = cubepy.bitcast(u32, f32(1.0))
    out[2] = u32(cubepy.saturating_add(i32(2147483647), 1))


# -- the reference (plain Python on the bit patterns) ---------------------------------------

def _bits(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def _signed(pattern: int, ty) -> int:
    """The integer of type `ty` whose bits are `pattern`."""
    pattern = _bits(pattern, ty.bits)
    if ty.is_signed and pattern >> (ty.bits - 1):
        return pattern - (1 << ty.bits)
    return pattern


def ref_count(op: str, value: int, ty) -> int:
    u, width = _bits(value, ty.bits), ty.bits
    digits = format(u, f"0{width}b")
    if op == "popcount":
        return digits.count("1")
    if op == "clz":
        return len(digits) - len(digits.lstrip("0"))
    trailing = len(digits) - len(digits.rstrip("0"))
    if op == "ctz":
        return trailing
    return 0 if u == 0 else trailing + 1  # ffs


def ref_reverse(value: int, ty) -> int:
    return _signed(int(format(_bits(value, ty.bits), f"0{ty.bits}b")[::-1], 2), ty)


def ref_binary(op: str, a: int, b: int, ty) -> int:
    lo = -(1 << (ty.bits - 1)) if ty.is_signed else 0
    hi = (1 << (ty.bits - 1)) - 1 if ty.is_signed else (1 << ty.bits) - 1
    if op == "mul_hi":
        return _signed((a * b) >> ty.bits, ty)
    exact = a + b if op == "saturating_add" else a - b
    return min(max(exact, lo), hi)


def edge_values(ty, rng, n: int = DIM * 2) -> np.ndarray:
    """0, 1, all ones, the sign bit, the extremes, single bits, then random values."""
    width = ty.bits
    patterns = [0, 1, 2, 3, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1,
                (1 << (width - 1)) + 1, 0xF0F0F0F0F0F0F0F0 & ((1 << width) - 1),
                0x5555555555555555 & ((1 << width) - 1)]
    patterns += [1 << k for k in range(0, width, 5)]
    patterns += [int(v) for v in rng.integers(0, 1 << 63, n, dtype=np.uint64)]
    values = [_signed(p, ty) for p in patterns][:n]
    return np.array(values, dtype=ty.numpy)


def _client_has(c, *types) -> None:
    missing = [t.name for t in types if t not in c.limits.dtypes]
    if missing:
        pytest.skip(f"{c.runtime} has no {', '.join(missing)} (CompileError tested below)")


def _launch(kernel, c, n, *args, **kw):
    kernel.launch(c, CubeCount(max(1, n // DIM)), CubeDim(DIM), *args, **kw)


# -- runtime tests ------------------------------------------------------------------------

@pytest.mark.parametrize("ty", INTS, ids=lambda t: t.name)
@pytest.mark.parametrize("op", COUNTS)
def test_counts_match_python(runtime_client, op, ty):
    c = runtime_client
    _client_has(c, ty)
    x = edge_values(ty, np.random.default_rng(1))
    out = c.zeros((len(x),), u32)
    _launch(count_kernel, c, len(x), c.tensor(x), out, op=op)
    want = np.array([ref_count(op, int(v), ty) for v in x], np.uint32)
    np.testing.assert_array_equal(out.numpy(), want, err_msg=f"{op} on {ty.name}")


@pytest.mark.parametrize("ty", INTS, ids=lambda t: t.name)
def test_reverse_bits_matches_python(runtime_client, ty):
    c = runtime_client
    _client_has(c, ty)
    x = edge_values(ty, np.random.default_rng(2))
    out = c.zeros((len(x),), ty)
    _launch(reverse_kernel, c, len(x), c.tensor(x), out)
    want = np.array([ref_reverse(int(v), ty) for v in x], ty.numpy)
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("ty", INTS, ids=lambda t: t.name)
@pytest.mark.parametrize("op", BINARY)
def test_mul_hi_and_saturating_match_python(runtime_client, op, ty):
    c = runtime_client
    _client_has(c, ty)
    rng = np.random.default_rng(3)
    edges = edge_values(ty, rng, 16)
    a = np.concatenate([np.repeat(edges, 16), edge_values(ty, rng, DIM * 2)[16:]])
    b = np.concatenate([np.tile(edges, 16), edge_values(ty, rng, DIM * 2)[:len(a) - 256]])
    a, b = a[:len(b)], b[:len(a)]
    n = len(a) - len(a) % DIM
    a, b = a[:n], b[:n]
    out = c.zeros((n,), ty)
    _launch(binary_kernel, c, n, c.tensor(a), c.tensor(b), out, op=op)
    want = np.array([ref_binary(op, int(p), int(q), ty) for p, q in zip(a, b)], ty.numpy)
    np.testing.assert_array_equal(out.numpy(), want, err_msg=f"{op} on {ty.name}")


@cube(launch=True)
def uniform_operand_kernel(x: Array[i32], out: Array[i32]):
    i = ABSOLUTE_POS
    k = i32(-7)  # the same for every unit (the cpu runtime keeps it a scalar)
    out[i * u32(3)] = cubepy.saturating_sub(k, x[i])
    out[i * u32(3) + u32(1)] = cubepy.mul_hi(k, x[i])
    out[i * u32(3) + u32(2)] = cubepy.saturating_add(x[i], k)


def test_a_uniform_operand_meets_per_unit_values(runtime_client):
    c = runtime_client
    x = edge_values(i32, np.random.default_rng(11), DIM)
    out = c.zeros((DIM * 3,), i32)
    _launch(uniform_operand_kernel, c, DIM, c.tensor(x), out)
    want = [[ref_binary("saturating_sub", -7, int(v), i32), ref_binary("mul_hi", -7, int(v), i32),
             ref_binary("saturating_add", int(v), -7, i32)] for v in x]
    np.testing.assert_array_equal(out.numpy().reshape(DIM, 3), np.array(want, np.int32))


def test_cubecl_and_numba_names_are_the_same_functions(runtime_client):
    c = runtime_client
    x = edge_values(u32, np.random.default_rng(4), DIM)
    out = c.zeros((DIM * 7,), u32)
    _launch(alias_kernel, c, DIM, c.tensor(x), out)
    got = out.numpy().reshape(DIM, 7)
    for row, v in zip(got, x):
        v = int(v)
        assert list(row) == [ref_count("popcount", v, u32), ref_count("popcount", v, u32),
                             ref_count("clz", v, u32), ref_count("ctz", v, u32),
                             ref_count("ffs", v, u32), ref_reverse(v, u32),
                             ref_binary("mul_hi", v, v, u32)]
    assert cubepy.count_ones is cubepy.popcount and cubepy.brev is cubepy.reverse_bits


def _float_patterns(ty) -> np.ndarray:
    """Bit patterns of normal floats, zeros and infinities (NaN payloads and subnormals
    are the device's: tested on their own)."""
    info = np.finfo(ty.numpy)
    values = [0.0, -0.0, 1.0, -1.0, 1.5, -2.75, math.inf, -math.inf, float(info.max),
              -float(info.max), float(info.tiny), 3.141592653589793, 1e-30, 12345.678]
    floats = np.array(values, ty.numpy)
    rng = np.random.default_rng(5)
    random = (rng.standard_normal(DIM * 2 - len(values)) * 1e6).astype(ty.numpy)
    return np.concatenate([floats, random])


_BITCASTS = [(u32, f32), (i32, f32), (f32, u32), (f32, i32), (i32, u32), (u32, i32),
             (u64, f64), (i64, f64), (f64, u64), (f64, i64), (i64, u64)]


@pytest.mark.parametrize("src,dst", _BITCASTS, ids=lambda t: t.name)
def test_bitcast_keeps_the_bits(runtime_client, src, dst):
    c = runtime_client
    _client_has(c, src, dst)
    float_ty = src if src.is_float else dst if dst.is_float else None
    if float_ty is not None:
        width = np.dtype(f"u{float_ty.bits // 8}")
        patterns = _float_patterns(float_ty).view(width)
    else:
        patterns = edge_values(src, np.random.default_rng(6)).view(np.dtype(f"u{src.bits // 8}"))
    x = patterns.view(src.numpy)
    out = c.zeros((len(x),), dst)
    _bitcast_launch(c, x, out, src, dst)
    np.testing.assert_array_equal(out.numpy().view(patterns.dtype), patterns)


@cube(launch=True)
def bitcast_between(x: Array[Word], out: Array[AnyInt], to: Comptime[str]):
    i = ABSOLUTE_POS
    if to == "u32":
        out[i] = cubepy.bitcast(u32, x[i])
    elif to == "i32":
        out[i] = cubepy.bitcast(i32, x[i])
    elif to == "u64":
        out[i] = cubepy.bitcast(u64, x[i])
    else:
        out[i] = cubepy.bitcast(i64, x[i])


@cube(launch=True)
def bitcast_to_float(x: Array[AnyInt], out: Array[Word], to: Comptime[str]):
    i = ABSOLUTE_POS
    if to == "f32":
        out[i] = cubepy.bitcast(f32, x[i])
    else:
        out[i] = cubepy.bitcast(f64, x[i])


def _bitcast_launch(c, x, out, src, dst):
    if dst.is_float:
        _launch(bitcast_to_float, c, len(x), c.tensor(x), out, to=dst.name)
    else:
        _launch(bitcast_between, c, len(x), c.tensor(x), out, to=dst.name)


@cube(launch=True)
def nan_bits(x: Array[f32], out: Array[u32]):
    out[ABSOLUTE_POS] = cubepy.bitcast(u32, x[ABSOLUTE_POS])


def test_bitcast_of_a_nan_is_a_nan_pattern(runtime_client):
    """A NaN read from memory gives NaN bits (a device may change the payload; a NaN
    computed in the kernel may even be folded away by a WGSL driver, which may assume
    no NaN arises: docs/LANGUAGE.md, Floats)."""
    c = runtime_client
    x = np.array([0x7FC00000, 0x7FC12345, 0xFFC00000, 0x7F800001] * (DIM // 4),
                 np.uint32).view(np.float32)
    out = c.zeros((DIM,), u32)
    _launch(nan_bits, c, DIM, c.tensor(x), out)
    got = out.numpy()
    assert ((got & 0x7F800000) == 0x7F800000).all() and ((got & 0x7FFFFF) != 0).all()


@pytest.mark.parametrize("ty", INTS, ids=lambda t: t.name)
def test_integer_abs_wraps_at_the_minimum(runtime_client, ty):
    c = runtime_client
    _client_has(c, ty)
    x = edge_values(ty, np.random.default_rng(7))
    out = c.zeros((len(x),), ty)
    _launch(abs_kernel, c, len(x), c.tensor(x), out)
    want = np.array([_signed(abs(int(v)), ty) for v in x], ty.numpy)
    np.testing.assert_array_equal(out.numpy(), want)
    if ty.is_signed:  # abs(MIN) is MIN, as CUDA's abs, WGSL's abs and numpy give
        assert out.numpy()[list(x).index(-(1 << (ty.bits - 1)))] == -(1 << (ty.bits - 1))


@pytest.mark.parametrize("ty", [i32, u32, i64, f32, f64], ids=lambda t: t.name)
def test_min_max_of_several_values(runtime_client, ty):
    c = runtime_client
    _client_has(c, ty)
    rng = np.random.default_rng(8)
    if ty.is_float:
        pool = np.array([math.nan, 0.5, -3.0, math.inf, -math.inf, 2.0, 7.25, -0.5])
    else:
        info = np.iinfo(ty.numpy)
        pool = np.array([info.min, info.max, 0, 1, 5, -3 if ty.is_signed else 3], np.int64)
    a, b, cc, d = (rng.choice(pool, DIM).astype(ty.numpy) for _ in range(4))
    a[:4] = b[:4] = cc[:4] = d[:4] = pool[0]  # all NaN (floats) / all the minimum
    out = c.zeros((DIM * 4,), ty)
    _launch(minmax_kernel, c, DIM, *(c.tensor(v) for v in (a, b, cc, d)), out)
    got = out.numpy().reshape(DIM, 4)
    zero = np.zeros_like(a)
    # fmax/fmin: the non-NaN operand wins (NaN only when every one is NaN)
    hi, lo = (np.fmax, np.fmin) if ty.is_float else (np.maximum, np.minimum)
    want = np.stack([hi(hi(a, b), cc), lo(lo(a, b), cc), hi(hi(hi(a, b), cc), d),
                     lo(lo(lo(a, zero), cc), d)], axis=1)
    np.testing.assert_array_equal(got, want)


def test_bit_functions_on_lines(runtime_client):
    c = runtime_client
    x = edge_values(u32, np.random.default_rng(9), DIM * 4)
    counts, rev = c.zeros((DIM * 4,), u32), c.zeros((DIM * 4,), u32)
    floats = c.zeros((DIM * 4,), f32)
    t = c.tensor(x)
    line_kernel.launch(c, CubeCount(1), CubeDim(DIM), t.with_line_size(4),
                       counts.with_line_size(4), rev.with_line_size(4),
                       floats.with_line_size(4))
    want_counts = [ref_count("popcount", int(v), u32) + 100 * ref_count("ctz", int(v), u32)
                   for v in x]
    want_rev = [ref_binary("saturating_add", ref_reverse(int(v), u32), 1, u32) for v in x]
    np.testing.assert_array_equal(counts.numpy(), np.array(want_counts, np.uint32))
    np.testing.assert_array_equal(rev.numpy(), np.array(want_rev, np.uint32))
    got_bits = floats.numpy().view(np.uint32)
    finite = (x & 0x7F800000) != 0x7F800000  # NaN payloads are the device's
    normal = finite & ((x & 0x7F800000) != 0)  # and a device may flush subnormals
    np.testing.assert_array_equal(got_bits[normal], x[normal])


def test_constant_operands_fold_to_literals():
    text = constant_kernel.ir(cube_dim=(1, 1, 1))
    assert not re.search(r"bits\.\w+\(", text)  # folded by the target-independent passes
    assert "3108:u32" in text  # popcount(0xF0F0) = 8, clz(1) = 31: 8 + 3100
    assert "1065353216:u32" in text and "2147483647:u32" in text
    c = cubepy.client("cpu")
    out = c.zeros((3,), u32)
    constant_kernel.launch(c, CubeCount(1), CubeDim(1), out)
    assert list(out.numpy()) == [3108, 0x3F800000, 2147483647]


def test_cpu_popcount_without_numpy_2_is_exact():
    """The SWAR popcount used where numpy has no bitwise_count (numpy < 2.0)."""
    rng = np.random.default_rng(10)
    for dtype in (np.uint32, np.uint64):
        values = rng.integers(0, np.iinfo(dtype).max, 4096, dtype=dtype, endpoint=True)
        values[:3] = [0, 1, np.iinfo(dtype).max]
        want = [bin(int(v)).count("1") for v in values]
        np.testing.assert_array_equal(cpu_bits._ones(values), want)
    assert cpu_bits.popcount(np.int32(-1)) == 32 and cpu_bits.clz(np.uint64(1)) == 63


# -- source validation: nvcc, naga, clang++ ---------------------------------------------

@pytest.mark.nvcc
@pytest.mark.parametrize("ty", INTS, ids=lambda t: t.name)
def test_sources_compile(tmp_path, ty):
    targets = ("cuda", "wgsl", "metal") if ty.bits == 32 else ("cuda", "metal")
    for op in COUNTS:
        validate_sources(count_kernel, tmp_path / op, targets=targets, AnyInt=ty, op=op)
    for op in BINARY:
        src = validate_sources(binary_kernel, tmp_path / op, targets=targets, AnyInt=ty,
                               op=op)
        if op == "mul_hi":
            hi = {"i32": "__mulhi", "u32": "__umulhi", "i64": "__mul64hi",
                  "u64": "__umul64hi"}[ty.name]
            assert f"{hi}(" in src["cuda"] and "metal::mulhi(" in src["metal"]
    src = validate_sources(reverse_kernel, tmp_path / "rev", targets=targets, AnyInt=ty)
    assert ("__brevll(" if ty.bits == 64 else "__brev(") in src["cuda"]
    validate_sources(abs_kernel, tmp_path / "abs", targets=targets, AnyInt=ty)


@pytest.mark.nvcc
def test_source_spellings_per_target(tmp_path):
    src = validate_sources(count_kernel, tmp_path, AnyInt=i32, op="ffs")
    assert "__ffs(" in src["cuda"] and "firstTrailingBit(" in src["wgsl"]
    assert "metal::ctz(" in src["metal"]
    src = validate_sources(count_kernel, tmp_path / "p", AnyInt=u32, op="popcount")
    assert "__popc(" in src["cuda"] and "countOneBits(" in src["wgsl"]
    assert "metal::popcount(" in src["metal"]
    src = validate_sources(count_kernel, tmp_path / "c", AnyInt=i64, op="ctz",
                           targets=("cuda", "metal"))
    assert "__clzll(" in src["cuda"] and "__brevll(" in src["cuda"]
    src = validate_sources(binary_kernel, tmp_path / "s", AnyInt=i32, op="saturating_add")
    assert "cube_saturating_add_i32" in src["wgsl"] and "metal::addsat(" in src["metal"]


@pytest.mark.nvcc
@pytest.mark.parametrize("src_ty,dst", [(u32, "f32"), (i32, "f32"), (u64, "f64"),
                                        (i64, "f64")], ids=lambda t: str(t))
def test_bitcast_sources_compile(tmp_path, src_ty, dst):
    targets = ("cuda", "wgsl", "metal") if dst == "f32" else ("cuda",)  # no f64: Metal, WGSL
    validate_sources(bitcast_to_float, tmp_path / "to", targets=targets, AnyInt=src_ty,
                     Word=cubepy.f32 if dst == "f32" else f64, to=dst)
    validate_sources(bitcast_between, tmp_path / "from", targets=targets, AnyInt=src_ty,
                     Word=cubepy.f32 if dst == "f32" else f64, to=src_ty.name)


@cube(launch=True)
def half_bits(x: Array[f16], out: Array[bf16]):
    out[ABSOLUTE_POS] = cubepy.bitcast(bf16, x[ABSOLUTE_POS])


@pytest.mark.nvcc
def test_bitcast_between_the_16_bit_floats_compiles(tmp_path):
    src = validate_sources(half_bits, tmp_path, targets=("cuda", "metal"))
    assert "__ushort_as_bfloat16(__half_as_ushort(" in src["cuda"]
    assert "as_type<bfloat>(" in src["metal"]


@pytest.mark.nvcc
def test_lines_and_min_max_sources_compile(tmp_path):
    validate_sources(line_kernel, tmp_path / "lines", line_sizes={"x": 4, "counts": 4,
                                                                    "rev": 4, "floats": 4})
    for ty in (i32, u32, f32):
        validate_sources(minmax_kernel, tmp_path / ty.name, MinMax=ty)


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ty", [i64, u64], ids=lambda t: t.name)
def test_64_bit_integers_are_a_compile_error_on_wgsl(ty):
    with pytest.raises(CompileError, match=f"WGSL has no {ty.name}"):
        count_kernel.source("wgsl", AnyInt=ty, op="popcount")
    with pytest.raises(CompileError, match=f"WGSL has no {ty.name}"):
        binary_kernel.source("wgsl", AnyInt=ty, op="mul_hi")


@cube(launch=True)
def bad_bitcast_size(x: Array[u32], out: Array[f64]):
    out[ABSOLUTE_POS] = cubepy.bitcast(f64, x[ABSOLUTE_POS])


@cube(launch=True)
def bad_popcount_float(x: Array[f32], out: Array[u32]):
    out[ABSOLUTE_POS] = cubepy.popcount(x[ABSOLUTE_POS])


@cube(launch=True)
def bad_mixed_mul_hi(x: Array[u32], y: Array[i32], out: Array[u32]):
    out[ABSOLUTE_POS] = cubepy.mul_hi(x[ABSOLUTE_POS], y[ABSOLUTE_POS])


@cube(launch=True)
def bad_bitcast_bool(x: Array[u32], out: Array[u32]):
    out[ABSOLUTE_POS] = u32(cubepy.bitcast(cubepy.bool_, x[ABSOLUTE_POS]))


@cube(launch=True)
def bad_max_one_value(x: Array[u32], out: Array[u32]):
    out[ABSOLUTE_POS] = max(x[ABSOLUTE_POS])


@pytest.mark.parametrize("kernel,message", [
    (bad_bitcast_size, r"bitcast\(f64, x\) needs a value of 64 bits, but x is u32 \(32 bits\)"),
    (bad_popcount_float, r"popcount\(\) takes integers .*not f32.*bitcast\(u32, x\)"),
    (bad_mixed_mul_hi, r"mul_hi\(\) operands mix u32 and i32"),
    (bad_bitcast_bool, r"cannot give bool"),
    (bad_max_one_value, r"max\(\) takes 2 or more values, got 1"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_mistakes_are_compile_errors_at_the_call(kernel, message):
    with pytest.raises(CompileError, match=message) as info:
        kernel.source("cuda")
    assert info.value.filename.endswith("test_lang_bits.py")  # at the user's line
    assert "cubepy." in info.value.source_line or "max(" in info.value.source_line


@cube(launch=True)
def bad_half_bitcast(x: Array[u32], out: Array[f16]):
    out[ABSOLUTE_POS] = cubepy.bitcast(f16, x[ABSOLUTE_POS])


def test_a_16_bit_bitcast_names_the_16_bit_types():
    with pytest.raises(CompileError, match=r"needs a value of 16 bits, but x is u32 \(32 "
                                           r"bits\).*f16 and bf16.*no 16-bit integers"):
        bad_half_bitcast.source("cuda")


@pytest.mark.parametrize("ty", INTS, ids=lambda t: t.name)
def test_the_constant_folder_agrees_with_the_cpu_runtime(ty):
    """ir/bitops.py (folding) and runtime/cpu_bits.py (running) are two implementations:
    they agree on edge and random values of every width."""
    from cubepy.ir.bitops import fold_bits
    rng = np.random.default_rng(12)
    xs, ys = edge_values(ty, rng, 48), edge_values(ty, rng, 48)[::-1]
    for x, y in zip(xs, ys):
        for op in COUNTS + ("reverse_bits",):
            want = getattr(cpu_bits, op)(x)
            result_ty = ty if op == "reverse_bits" else u32
            assert fold_bits(op, result_ty, ty, (int(x),)) == int(want), (op, x)
        for op in BINARY:
            assert fold_bits(op, ty, ty, (int(x), int(y))) == int(getattr(cpu_bits, op)(x, y))
