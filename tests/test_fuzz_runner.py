"""The long differential fuzz run (tests/fuzz.py, `python -m tests.fuzz`): it runs,
skips absent runtimes, and reports a mismatch with a reproducer."""
from __future__ import annotations

import json

import fuzz
import fuzz_kernels as fk


def test_a_small_run_checks_every_kernel_and_skips_absent_runtimes():
    report = fuzz.run(12, seed=3, runtimes=["cpu", "no-such-runtime"], batch=4,
                      share=0.25, progress=False)
    assert report.kernels == 12 and report.programs == 3 and report.expressions == 9
    assert "no-such-runtime" in report.absent
    # 3 expression batches (+ 3 folded batches) and 3 programs compiled on cpu
    assert report.compiles["cpu"] == 9
    assert not report.mismatches and not report.internal_errors
    assert not report.compile_errors


def test_a_wrong_result_is_reported_with_a_reproducer(monkeypatch):
    real = fk.Bin.ev

    def off_by_one(self, env):  # a reference that disagrees with every target
        value = real(self, env)
        return value + 1 if self.ty != "f32" and self.op == "add" else value

    monkeypatch.setattr(fk.Bin, "ev", off_by_one)
    report = fuzz.run(40, seed=0, runtimes=["cpu"], batch=8, share=0.0, progress=False)
    assert report.mismatches
    found = report.mismatches[0]
    assert found["runtime"] == "cpu" and "@cube(launch=True)" in found["source"]
    assert " + " in found["source"] and found["got"] != found["want"]
    assert "seed" in found and found["inputs"]


def test_an_internal_error_is_reported_apart_from_compile_errors(monkeypatch):
    import cubepy

    def broken(self, client, *args):  # stands for a crash inside the compiler
        raise ZeroDivisionError("compiler bug")

    monkeypatch.setattr(cubepy.kernel.CubeFunction, "launch", broken)
    report = fuzz.run(4, seed=0, runtimes=["cpu"], batch=4, share=0.0, progress=False)
    assert report.internal_errors and "ZeroDivisionError" in report.internal_errors[0]["error"]
    assert not report.compile_errors


def test_the_command_line_writes_a_json_report(tmp_path, capsys):
    out = tmp_path / "fuzz.json"
    status = fuzz.main(["--kernels", "6", "--seed", "2", "--runtimes", "cpu,cuda-absent",
                        "--batch", "3", "--out", str(out)])
    data = json.loads(out.read_text())
    assert status == 0 and data["kernels"] == 6 and data["mismatch_count"] == 0
    assert "cuda-absent" in data["absent"]
    assert "6 kernels" in capsys.readouterr().out


def test_a_float_chain_under_an_integer_cast_is_compared_on_cpu_only():
    """i32(x + a % b): a GPU may reassociate the float chain (seen on llvmpipe: -1 +
    (2**32 - q * b) computed as (-1 + 2**32) - q * b), so only the cpu runtime, which
    rounds every operation in order, must match the reference there."""
    c0, c1 = fk.Leaf("c0", "f32"), fk.Leaf("c1", "f32")
    root = fk.Cast(fk.Bin("add", c1, fk.Bin("mod", c0, fk.Lit(3276753.0, "f32"), "f32"),
                          "f32"), "i32")
    env = {"c0": 4294967296.0, "c1": -1.0}
    want = root.ev(env)
    assert fuzz.lane_ok(root, env, want, "cpu")
    assert not fuzz.lane_ok(root, env, want + 1, "cpu")
    assert fuzz.lane_ok(root, env, want + 1, "wgpu")


def test_wgsl_accuracy_table_applies_to_wgpu_sin_cos_only():
    """The H200 run's cos(min(max(c0 - c1, -3), 3)) on NVIDIA's Vulkan driver was 3e-7
    off: within WGSL's absolute error 2^-11 for cos on [-pi, pi] (docs/LANGUAGE.md), so a
    mismatch on wgpu only; cuda and cpu keep the tight bound, `//` stays exact."""
    c0, c1 = fk.Leaf("c0", "f32"), fk.Leaf("c1", "f32")
    clamp = fk.Bin("min", fk.Bin("max", fk.Bin("sub", c0, c1, "f32"), fk.Lit(-3.0, "f32"),
                                 "f32"), fk.Lit(3.0, "f32"), "f32")
    root = fk.Un("cos", clamp, "f32")
    env = {"c0": 2.5, "c1": 0.348246693611145}
    want = root.ev(env)
    assert fuzz.lane_ok(root, env, -0.5488239526748657, "wgpu")
    assert not fuzz.lane_ok(root, env, want + 2.0**-10, "wgpu")
    assert not fuzz.lane_ok(root, env, -0.5488239526748657, "cuda")
    floordiv = fk.Bin("floordiv", c0, fk.Un("ceil", c0, "f32"), "f32")
    env = {"c0": 399970272.0, "c1": 0.0}
    assert floordiv.ev(env) == 1.0
    assert not fuzz.lane_ok(floordiv, env, 0.0, "wgpu")  # c0 // ceil(c0): exact


def test_a_signed_zero_choice_under_an_integer_result_is_not_compared():
    """max(-0.0, 0.0) may be either zero on every target (docs/LANGUAGE.md); dividing by
    it and comparing turns that choice into an integer result (seen on seed 5: the cpu
    runtime and the reference chose differently). Without such a choice ints must match."""
    c0 = fk.Leaf("c0", "f32")
    zero = fk.Bin("max", fk.Lit(-0.0, "f32"), c0, "f32")
    cond = fk.Cmp("le", fk.Bin("floordiv", fk.Lit(13.0, "f32"), zero, "f32"),
                  fk.Lit(7.0, "f32"))
    root = fk.Sel(cond, fk.Lit(1, "u32"), fk.Lit(2, "u32"), "u32")
    want = root.ev({"c0": 0.0})
    assert fuzz.lane_ok(root, {"c0": 0.0}, 3 - want, "cpu")  # the other zero's answer
    assert fuzz.lane_ok(root, {"c0": 1.0}, root.ev({"c0": 1.0}), "cpu")
    assert not fuzz.lane_ok(root, {"c0": 1.0}, 3 - root.ev({"c0": 1.0}), "cpu")
