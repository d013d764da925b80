"""The `cubepy` command line: emit, ir and info."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cubepy.cli import main

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "fused_matmul_add_relu.py")
SEED = f"{EXAMPLE}:fused_matmul_add_relu_kernel"


@pytest.mark.parametrize("target, marker", [
    ("cuda", "__launch_bounds__(256)"),
    ("wgsl", "@workgroup_size(16, 16, 1)"),
    ("metal", "kernel void fused_matmul_add_relu_kernel"),
])
def test_emit_prints_the_target_source(capsys, target, marker):
    assert main(["emit", SEED, "--target", target, "--cube-dim", "16,16,1",
                 "-D", "Float=f32"]) == 0
    out = capsys.readouterr().out
    assert marker in out
    assert "sum" in out and "offset_lhs" in out  # user names kept


def test_emit_matches_the_python_api(capsys):
    from examples_loader import seed_kernel
    main(["emit", SEED, "--target", "wgsl", "--cube-dim", "16,16,1", "-D", "Float=f16"])
    out = capsys.readouterr().out
    assert out.rstrip("\n") == seed_kernel().source("wgsl", cube_dim=(16, 16, 1),
                                                    Float="f16").rstrip("\n")


def test_ir_prints_typed_ir(capsys):
    assert main(["ir", SEED, "-D", "Float=f32"]) == 0
    out = capsys.readouterr().out
    assert "f32" in out and "u32" in out and "offset_lhs" in out


def test_compile_error_is_reported_with_caret(tmp_path, capsys):
    src = tmp_path / "bad.py"
    src.write_text(textwrap.dedent("""
        from cubepy import cube, Array, u32, i32, ABSOLUTE_POS

        @cube(launch=True)
        def mix(a: Array[u32], b: Array[i32]):
            a[ABSOLUTE_POS] = a[ABSOLUTE_POS] + b[ABSOLUTE_POS]
    """))
    assert main(["emit", f"{src}:mix", "--target", "cuda"]) == 1
    err = capsys.readouterr().err
    assert "u32" in err and "i32" in err and f"{src}:6:" in err and "^" in err


@pytest.mark.parametrize("argv, text", [
    (["emit", "no_colon.py", "--target", "cuda"], "FILE.py:KERNEL"),
    (["emit", "missing.py:k", "--target", "cuda"], "no such file"),
    (["emit", f"{EXAMPLE}:nope", "--target", "cuda"], "has no 'nope'"),
    (["emit", SEED, "-D", "Float"], "NAME=VALUE"),
])
def test_bad_arguments_exit_with_a_message(argv, text):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert text in str(info.value)


def test_unknown_specialisation_names_the_choices(capsys):
    assert main(["emit", SEED, "-D", "Double=f32"]) == 2
    assert "Float" in capsys.readouterr().err


def test_info_lists_the_cpu_runtime():
    out = subprocess.run([sys.executable, "-m", "cubepy", "info"], capture_output=True,
                         text=True, check=True).stdout
    assert "cpu" in out and "numpy" in out and "units/cube" in out


def test_info_prints_each_targets_capabilities_under_its_runtime():
    out = subprocess.run([sys.executable, "-m", "cubepy", "info"], capture_output=True,
                         text=True, check=True).stdout
    runtimes, _, source_only = out.partition("source-only targets")
    for name in ("cuda", "wgsl", "cpu"):  # even where the runtime is unavailable
        assert f"target {name}: types" in runtimes
    assert "target cpu: types bool, e4m3, e5m2, f16, f32, f64, i32, i64, u32, u64\n" in runtimes
    assert "and, or, xor, compare_exchange on i32, u32" in runtimes
    assert "metal Metal" in source_only and "target metal: types bf16," in source_only
