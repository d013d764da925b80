"""Host-side fp8 conversions (cubepy.fp8): against the bit fields, rounding rules and CUDA.

tests/data/fp8_cuda_reference.npz holds the codes that CUDA's own conversions
(``__nv_cvt_float_to_fp8`` / ``__nv_cvt_double_to_fp8`` with ``__NV_SATFINITE``, and
``__nv_cvt_fp8_to_halfraw``; cuda_fp8.hpp's host path) gave on ~77k float32 and ~10k float64
inputs. CI has no nvcc, so it is stored. (An H200's ``cvt.rn.satfinite`` -- SASS
``F2FP.SATFINITE`` -- gave the same float32 codes and decode values, checked once.)
Regenerate it, where nvcc is (no GPU needed), with

    python tests/test_fp8_host.py --regenerate

which compiles the generator with ``nvcc -x cu tests/data/fp8_cuda_reference.cu -o gen``, runs
``gen OUT.bin`` and packs OUT.bin into the .npz.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

from cubepy import fp8

DATA = os.path.join(os.path.dirname(__file__), "data")
REFERENCE = os.path.join(DATA, "fp8_cuda_reference.npz")
NAN_CODES = {"e4m3": {0x7F, 0xFF}, "e5m2": {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}}
INF_CODES = {"e4m3": set(), "e5m2": {0x7C, 0xFC}}
MIN_SUBNORMAL = {"e4m3": 2.0 ** -9, "e5m2": 2.0 ** -16}
CODES = np.arange(256, dtype=np.uint8)


def field_value(code: int, fmt: str) -> float:
    """The value of `code`, derived from its bit fields with plain Python arithmetic."""
    ebits, mbits = (4, 3) if fmt == "e4m3" else (5, 2)
    bias = (1 << (ebits - 1)) - 1
    sign = -1.0 if code & 0x80 else 1.0
    exp = (code >> mbits) & ((1 << ebits) - 1)
    man = code & ((1 << mbits) - 1)
    if fmt == "e4m3" and exp == 15 and man == 7:
        return math.nan
    if fmt == "e5m2" and exp == 31:
        return sign * math.inf if man == 0 else math.nan
    if exp == 0:
        return sign * math.ldexp(man, 1 - bias - mbits)
    return sign * math.ldexp((1 << mbits) + man, exp - bias - mbits)


def finite_ladder(fmt: str) -> list[tuple[float, int]]:
    """(value, code) of every finite value of `fmt` in increasing order, -0 left out."""
    pairs = [(field_value(c, fmt), c) for c in range(256) if c != 0x80]
    return sorted(p for p in pairs if math.isfinite(p[0]))


def assert_codes(values, fmt: str, expected) -> None:
    got = fp8.encode(np.asarray(values, dtype=np.float64), fmt)
    expected = np.asarray(expected, dtype=np.uint8)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, [(float(np.ravel(values)[i]), hex(got.flat[i]),
                            hex(expected.flat[i])) for i in bad[:8]]


@pytest.mark.parametrize("fmt", fp8.FORMATS)
def test_decode_every_code_matches_bit_fields(fmt):
    got = fp8.decode(CODES, fmt)
    assert got.dtype == np.float32 and got.shape == (256,)
    for code in range(256):
        want = field_value(code, fmt)
        if math.isnan(want):
            assert code in NAN_CODES[fmt] and np.isnan(got[code]), hex(code)
        else:
            assert got[code] == want and math.copysign(1, got[code]) == math.copysign(1, want), (
                hex(code), got[code], want)
    assert {int(c) for c in CODES[np.isnan(got)]} == NAN_CODES[fmt]
    assert {int(c) for c in CODES[np.isinf(got)]} == INF_CODES[fmt]
    assert np.nanmax(np.where(np.isinf(got), np.nan, got)) == fp8.MAX_FINITE[fmt]
    assert got[1] == MIN_SUBNORMAL[fmt]


@pytest.mark.parametrize("fmt", fp8.FORMATS)
def test_encode_decode_round_trips_every_finite_code(fmt):
    values = fp8.decode(CODES, fmt)
    finite = np.isfinite(values)
    assert_codes(values[finite], fmt, CODES[finite])
    assert_codes([0.0, -0.0], fmt, [0x00, 0x80])
    # float16 and float32 inputs give the same codes as float64 ones.
    assert np.array_equal(fp8.encode(values[finite].astype(np.float16), fmt), CODES[finite])
    assert np.array_equal(fp8.round_to(values[finite], fmt), values[finite])


@pytest.mark.parametrize("fmt", fp8.FORMATS)
def test_midpoints_round_to_even_and_neighbours_to_nearest(fmt):
    ladder = finite_ladder(fmt)
    mids, even, below, above = [], [], [], []
    for (lo, lo_code), (hi, hi_code) in zip(ladder, ladder[1:]):
        mid = (lo + hi) / 2
        hi_code = 0x80 if hi_code == 0 and mid < 0 else hi_code  # rounding to 0 keeps the sign
        # Codes of neighbours differ by one in magnitude: the even one takes the tie.
        even.append(lo_code if lo_code % 2 == 0 else hi_code)
        mids.append(mid)
        below.append(lo_code)
        above.append(hi_code)
    mids = np.array(mids)
    assert_codes(mids, fmt, even)
    assert_codes(mids.astype(np.float32), fmt, even)  # midpoints are exact in float32
    assert_codes(np.nextafter(mids, -np.inf), fmt, below)
    assert_codes(np.nextafter(mids, np.inf), fmt, above)
    f32 = mids.astype(np.float32)
    assert_codes(np.nextafter(f32, np.float32(-np.inf)), fmt, below)
    assert_codes(np.nextafter(f32, np.float32(np.inf)), fmt, above)


@pytest.mark.parametrize("fmt", fp8.FORMATS)
def test_saturation_and_nan(fmt):
    top = fp8.MAX_FINITE[fmt]
    step = {"e4m3": 32.0, "e5m2": 8192.0}[fmt]  # spacing in the top binade
    max_code = {"e4m3": 0x7E, "e5m2": 0x7B}[fmt]
    huge = [top, top + step / 4, top + step / 2, np.nextafter(top + step / 2, np.inf),
            top + step, 2 * top, 1e6, float(np.finfo(np.float32).max), 1e300, np.inf]
    huge = np.array(huge)
    assert_codes(huge, fmt, [max_code] * len(huge))
    assert_codes(-huge, fmt, [max_code | 0x80] * len(huge))
    assert np.array_equal(fp8.round_to(np.array([np.inf, -np.inf]), fmt), [top, -top])
    assert fp8.MAX_FINITE[fmt] == fp8.decode(np.uint8(max_code), fmt)
    assert_codes([np.nextafter(top, 0.0), top - step / 4], fmt, [max_code, max_code])
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FFFFFFF],
                    dtype=np.uint32).view(np.float32)
    # The header turns every float NaN into 0x7FFFFFFF first: 0x7F in both formats.
    assert np.array_equal(fp8.encode(nans, fmt), [0x7F] * len(nans))
    assert np.array_equal(fp8.encode([np.nan, -np.nan], fmt), [0x7F, 0x7F])
    assert np.isnan(fp8.round_to(np.nan, fmt))


@pytest.mark.parametrize("fmt", fp8.FORMATS)
def test_subnormals_and_underflow(fmt):
    tiny = MIN_SUBNORMAL[fmt]
    mbits = 3 if fmt == "e4m3" else 2
    k = np.arange(1, 1 << mbits)
    assert_codes(k * tiny, fmt, k)  # every subnormal code
    assert_codes(-k * tiny, fmt, k | 0x80)
    assert_codes([(1 << mbits) * tiny], fmt, [1 << mbits])  # the smallest normal
    # Half the smallest subnormal ties to zero (even); anything above it rounds up.
    assert_codes([tiny / 2, -tiny / 2, np.nextafter(tiny / 2, 1), -np.nextafter(tiny / 2, 1)],
                 fmt, [0x00, 0x80, 0x01, 0x81])
    assert_codes([1.5 * tiny, 2.5 * tiny, 1.25 * tiny, 1.75 * tiny], fmt, [2, 2, 1, 2])
    # Underflow keeps the sign, down to float32 and float64 subnormals.
    small = np.array([tiny / 3, 1e-30, float(np.finfo(np.float32).smallest_subnormal),
                      5e-324])
    assert_codes(small, fmt, [0x00] * len(small))
    assert_codes(-small, fmt, [0x80] * len(small))
    assert np.signbit(fp8.round_to(-1e-30, fmt))


def test_matches_cuda_host_conversion_bit_for_bit():
    ref = np.load(REFERENCE)
    xs = ref["f32_inputs"]
    assert xs.dtype == np.float32 and xs.size > 70000 and np.isnan(xs).any()
    for fmt in fp8.FORMATS:
        want = ref[f"f32_{fmt}"]
        got = fp8.encode(xs, fmt)
        bad = np.flatnonzero(got != want)  # NaN outputs too: the header's are always 0x7F
        assert bad.size == 0, [(hex(xs[i:i + 1].view(np.uint32)[0]), hex(got[i]), hex(want[i]))
                               for i in bad[:8]]
        # float64 inputs are rounded once, as __nv_cvt_double_to_fp8 does.
        assert np.array_equal(fp8.encode(ref["f64_inputs"], fmt), ref[f"f64_{fmt}"])
        table = ref[f"decode_{fmt}"]
        assert np.array_equal(fp8.decode(CODES, fmt), table, equal_nan=True)
        assert np.array_equal(np.signbit(fp8.decode(CODES, fmt)), np.signbit(table))


def test_shapes_scalars_and_errors():
    x = np.linspace(-500, 500, 12, dtype=np.float32).reshape(3, 4)
    for fmt in fp8.FORMATS:
        codes = fp8.encode(x, fmt)
        assert codes.shape == (3, 4) and codes.dtype == np.uint8
        assert np.array_equal(codes.ravel(), fp8.encode(x.ravel(), fmt))
        assert fp8.round_to(x, fmt).shape == (3, 4)
        assert fp8.round_to(x, fmt).dtype == np.float32
        assert fp8.decode(codes, fmt).shape == (3, 4)
        one = fp8.encode(1.0, fmt)
        assert isinstance(one, np.ndarray) and one.shape == () and one.dtype == np.uint8
        assert float(fp8.decode(one, fmt)) == 1.0
        assert fp8.encode([1.0, -2.0], fmt).tolist() == fp8.encode(np.array([1, -2]), fmt).tolist()
        assert fp8.decode(np.array([0x38]), "e4m3") == 1.0  # int bits other than uint8
    assert fp8.round_to(0.3, "e4m3") == 0.3125 and fp8.round_to(0.3, "e5m2") == 0.3125
    for bad in ("e3m4", "E4M3", "fp8", None):
        with pytest.raises(ValueError, match="e4m3.*e5m2"):
            fp8.encode(1.0, bad)
        with pytest.raises(ValueError, match="e4m3.*e5m2"):
            fp8.decode(np.zeros(1, np.uint8), bad)
    with pytest.raises(ValueError):
        fp8.decode(np.array([256]), "e4m3")


def regenerate() -> None:
    """Compile and run tests/data/fp8_cuda_reference.cu; pack its output into the .npz."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        gen, out = os.path.join(tmp, "gen"), os.path.join(tmp, "out.bin")
        src = os.path.join(DATA, "fp8_cuda_reference.cu")
        subprocess.run(["nvcc", "-x", "cu", src, "-o", gen], check=True)
        subprocess.run([gen, out], check=True)
        with open(out, "rb") as f:
            raw = f.read()
    arrays, offset = [], 0
    for dtype in (np.float32, np.uint8, np.uint8, np.float64, np.uint8, np.uint8,
                  np.float32, np.float32):
        n = int(np.frombuffer(raw, np.uint32, 1, offset)[0])
        arrays.append(np.frombuffer(raw, dtype, n, offset + 4))
        offset += 4 + n * np.dtype(dtype).itemsize
    assert offset == len(raw)
    xs, e4, e5, ds, d4, d5, t4, t5 = arrays
    # Inputs once each, by bit pattern (the generator's lists overlap).
    _, first = np.unique(xs.view(np.uint32), return_index=True)
    _, dfirst = np.unique(ds.view(np.uint64), return_index=True)
    np.savez_compressed(REFERENCE, f32_inputs=xs[first], f32_e4m3=e4[first], f32_e5m2=e5[first],
                        f64_inputs=ds[dfirst], f64_e4m3=d4[dfirst], f64_e5m2=d5[dfirst],
                        decode_e4m3=t4, decode_e5m2=t5)
    print(f"wrote {REFERENCE}: {first.size} float32 and {dfirst.size} float64 inputs")


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(f"usage: python {sys.argv[0]} --regenerate   (needs nvcc)")
    regenerate()
