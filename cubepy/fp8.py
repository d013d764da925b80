"""Host-side (numpy) conversions between floats and NVIDIA's 8-bit float formats (OCP FP8).

- ``e4m3`` (PyTorch ``float8_e4m3fn``, CUDA ``__nv_fp8_e4m3``): exponent bias 7, 3 mantissa
  bits, no infinities, NaN is ``S.1111.111``; largest finite 448, smallest subnormal 2^-9.
- ``e5m2`` (PyTorch ``float8_e5m2``, CUDA ``__nv_fp8_e5m2``): exponent bias 15, 2 mantissa
  bits, IEEE-like with infinities (0x7C/0xFC) and NaNs; largest finite 57344, smallest
  subnormal 2^-16.

`encode` matches CUDA's ``__nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt)`` (PTX
``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32``) bit for bit: round to nearest, ties to even;
magnitudes beyond the largest finite, infinities included, saturate to the signed largest
finite; every NaN gives 0x7F; the sign survives underflow to zero.
"""
from __future__ import annotations

import functools

import numpy as np

FORMATS = ("e4m3", "e5m2")
MAX_FINITE = {"e4m3": 448.0, "e5m2": 57344.0}

# fmt -> (exponent bias, mantissa bits, code of the largest finite positive value)
_PARAMS = {"e4m3": (7, 3, 0x7E), "e5m2": (15, 2, 0x7B)}
# The header's float path makes every NaN the float 0x7FFFFFFF first, and that encodes to
# 0x7F in both formats (the hardware's canonical NaN too).
_NAN_CODE = 0x7F


def _params(fmt: str) -> tuple[int, int, int]:
    try:
        return _PARAMS[fmt]
    except (KeyError, TypeError):
        raise ValueError(f"unknown fp8 format {fmt!r}; expected one of {FORMATS}") from None


@functools.cache
def _table(fmt: str) -> np.ndarray:
    """The float32 value of each of the 256 codes of `fmt` (read-only)."""
    bias, mbits, _ = _params(fmt)
    codes = np.arange(256)
    exp = (codes >> mbits) & (0x7F >> mbits)
    man = codes & ((1 << mbits) - 1)
    # Exponent field 0 is subnormal: no implicit bit, same scale as field 1.
    signif = np.where(exp == 0, man, man + (1 << mbits)).astype(np.float64)
    mag = np.ldexp(signif, np.maximum(exp, 1) - bias - mbits)
    top = exp == (0x7F >> mbits)  # all-ones exponent field
    if fmt == "e4m3":
        mag[top & (man == (1 << mbits) - 1)] = np.nan  # only S.1111.111 is NaN
    else:
        mag[top] = np.where(man[top] == 0, np.inf, np.nan)
    table = np.where(codes & 0x80, -mag, mag).astype(np.float32)
    table[np.isnan(table)] = np.nan  # NaNs lose their sign, as in CUDA (fp16 NaN 0x7FFF)
    table.setflags(write=False)
    return table


def decode(bits: np.ndarray, fmt: str) -> np.ndarray:
    """Exact float32 values of the fp8 bit patterns `bits` (uint8, any shape) in `fmt`."""
    table = _table(fmt)
    b = np.asarray(bits)
    if b.dtype != np.uint8:
        if b.dtype.kind not in "iu" or (b.size and (b.min() < 0 or b.max() > 255)):
            raise ValueError("fp8 bit patterns must be integers in [0, 255]")
        b = b.astype(np.uint8)
    return table[b]


def encode(values, fmt: str) -> np.ndarray:
    """Round `values` to the fp8 format `fmt`; uint8 bit patterns of the same shape.

    Same bits as CUDA's ``__nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt)``: round to nearest,
    ties to even (subnormals too); beyond the largest finite (and +-inf) gives +-max finite;
    -0.0 and values that underflow keep their sign; NaN gives 0x7F. Values are rounded once,
    exactly, from float64 (float32/float16 inputs are exact there), as
    ``__nv_cvt_double_to_fp8`` does for non-NaN doubles.
    """
    bias, mbits, max_code = _params(fmt)
    with np.errstate(invalid="ignore"):  # a float32 signalling NaN widens with a warning
        x = np.asarray(values, dtype=np.float64)
    flat = x.ravel()
    nan = np.isnan(flat)
    mag = np.abs(flat)
    big = mag >= MAX_FINITE[fmt]  # ties there round to max (even) too; inf lands here
    mag = np.where(nan | big, 0.0, mag)
    # Quantum of the binade of `mag`, never below the subnormal step: with E the unbiased
    # exponent clamped to emin, round(mag / 2^(E - mbits)) + ((E - emin) << mbits) is the code,
    # a round-up carrying into the exponent field by itself.
    emin = 1 - bias
    e = np.maximum(np.frexp(mag)[1] - 1, emin)
    e[mag == 0] = emin  # frexp(0) gives exponent 0, not -inf
    steps = np.rint(np.ldexp(mag, mbits - e))  # np.rint: ties to even; scaling is exact
    code = ((e - emin) << mbits) + steps.astype(np.int64)
    code = np.where(big, max_code, code)
    code = np.where(np.signbit(flat), code | 0x80, code)
    code = np.where(nan, _NAN_CODE, code)
    return code.astype(np.uint8).reshape(x.shape)


def round_to(values, fmt: str) -> np.ndarray:
    """`values` cast to fp8 `fmt` and back, as float32."""
    return decode(encode(values, fmt), fmt)
