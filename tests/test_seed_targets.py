"""The seed kernel of the API contract compiles for every target and float type it
names, and f64 where a target lacks it is a CompileError that says so."""
from __future__ import annotations

import inspect

import pytest

import cubepy
from cubepy import CompileError, CubeDim, f16, f32, f64
from corpus import fused_matmul_add_relu_kernel as seed

CUBE = CubeDim(16, 16, 1)


@pytest.mark.parametrize("target", ["cuda", "wgsl", "metal"])
@pytest.mark.parametrize("dtype", [f32, f16])
def test_seed_compiles_for_every_target(target, dtype):
    src = seed.source(target, cube_dim=CUBE, Float=dtype)
    assert "offset_lhs" in src and "dim_k" in src
    if target == "wgsl" and dtype is f16:
        assert src.startswith("enable f16;")


def test_seed_f64_on_cuda():
    src = seed.source("cuda", cube_dim=CUBE, Float=f64)
    assert "double sum = 0.0;" in src and "fmax(" in src


@pytest.mark.parametrize("target, name", [("wgsl", "WGSL"), ("metal", "Metal")])
def test_seed_f64_is_a_compile_error_where_the_target_lacks_it(target, name):
    with pytest.raises(CompileError) as info:
        seed.source(target, cube_dim=CUBE, Float=f64)
    err = info.value
    assert f"{name} has no f64" in err.msg
    lines, first = inspect.getsourcelines(seed.fn)
    assert first <= err.lineno < first + len(lines)  # at the user's line in the kernel
    assert err.filename == inspect.getsourcefile(seed.fn)
    assert "^" in str(err)


def test_ir_text_of_the_seed_is_typed_as_the_contract_says():
    text = seed.ir(cube_dim=CUBE, Float=f32)
    assert "%offset_lhs" in text and "%sum" in text
    # offset_lhs = 0 becomes u32 from its uses; sum is the bound float
    assert any("offset_lhs" in line and "u32" in line for line in text.splitlines())
    assert any("sum" in line and "f32" in line for line in text.splitlines())


def test_source_is_cached():
    first = seed.source("wgsl", cube_dim=CUBE, Float=f32)
    assert seed.source("wgsl", cube_dim=CUBE, Float=f32) is first
