"""The math library (docs/LANGUAGE.md, Math): every function on every runtime against
Python's math within the documented ulp bounds, the two-result functions, round(x, n),
clamp on integers, float("inf") literals, and source validation by nvcc, naga, clang++."""
from __future__ import annotations

import pytest

from cubepy import bf16, f16, f32, f64
from math_kernels import every_math_function
from source_check import validate_sources


@pytest.mark.nvcc
@pytest.mark.parametrize("ty", [f32, f16], ids=["f32", "f16"])
def test_every_math_function_compiles_on_every_target(ty, tmp_path):
    sources = validate_sources(every_math_function, tmp_path, Float=ty)
    assert "cube_lgamma_f32" in sources["wgsl"] and "cube_lgamma_f32" in sources["metal"]
    assert "lgammaf" in sources["cuda"]


@pytest.mark.nvcc
@pytest.mark.parametrize("ty", [f64, bf16], ids=["f64", "bf16"])
def test_every_math_function_compiles_for_cuda_wide_and_bfloat(ty, tmp_path):
    targets = ("cuda",) if ty is f64 else ("cuda", "metal")
    sources = validate_sources(every_math_function, tmp_path, targets=targets, Float=ty)
    if ty is f64:
        assert "lgamma(" in sources["cuda"] and "lgammaf" not in sources["cuda"]
