"""`python -m benchmarks`: runs end to end at tiny sizes and reports the issue's targets."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import __main__ as cli, report  # noqa: E402


def test_runs_end_to_end_on_cpu(tmp_path):
    env = dict(os.environ, CUBEPY_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-m", "benchmarks", "--runtimes", "cpu",
                          "--only", "copy,sum,softmax,elementwise", "--reps", "2",
                          "--tag", "test", "--out", str(tmp_path)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads((tmp_path / "kernels_test.json").read_text())
    assert data["meta"]["tier"] == "tiny" and data["meta"]["reps"] == 2
    got = {(r["kernel"], r["impl"], r["runtime"]) for r in data["rows"]}
    assert {("copy", "numpy copyto", "cpu"), ("sum", "cubepy", "cpu"),
            ("softmax", "cubepy", "cpu"), ("elementwise", "cubepy checked", "cpu"),
            ("elementwise", "cubepy unchecked", "cpu")} <= got
    assert not any(r["kernel"] == "matmul" for r in data["rows"])  # --only
    for r in data["rows"]:
        assert r["error"] is None and r["value"] > 0 and r["reps"] == 2
        if r["impl"].startswith("cubepy"):
            assert r["check"] == "ok"
    table = (tmp_path / "kernels_test.md").read_text()
    assert "| sum | 65536 | cubepy | cpu |" in table
    # softmax reports its plan: 64 x 1024 f32 is one plane (32 lanes x 8 lines) per row
    softmax_row = next(r for r in data["rows"] if r["kernel"] == "softmax"
                       and r["impl"] == "cubepy")
    assert softmax_row["plan"] == "plane per row, 64 units, 8 lines/unit"
    assert "| softmax | 64x1024 | cubepy (plane per row, 64 units, 8 lines/unit) | cpu |" \
        in table
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "kernels_test_sum.png").stat().st_size > 1000
        assert "![kernels_test_sum](kernels_test_sum.png)" in table


def _row(kernel, impl, runtime, value, size="s"):
    return {"kernel": kernel, "size": size, "impl": impl, "runtime": runtime,
            "value": value, "error": None}


def test_targets_compare_with_peers_copy_and_cuda():
    rows = [_row("copy", "torch copy_", "cuda", 4000.0),
            _row("matmul", "cubepy", "cuda", 40.0),
            _row("matmul", "torch (cuBLAS, TF32 off)", "cuda", 50.0),
            _row("sum", "cubepy", "cuda", 3000.0),
            _row("sum", "cubepy", "wgpu", 2700.0)]
    lines = report.target_lines(rows)
    assert "| matmul | s | cubepy [cuda] | torch (cuBLAS, TF32 off) | 80% | 70% | met |" in lines
    assert "| sum | s | cubepy [cuda] | copy | 75% | 85% | **missed** |" in lines
    assert "| sum | s | cubepy [wgpu] | cubepy on cuda | 90% | 80% | met |" in lines
    assert len(lines) == 3


def test_wgpu_kernels_compare_with_the_same_size_wgpu_copy():
    """softmax and layernorm on wgpu also stand against a raw wgpu-py copy of their own
    bytes: the part of a wgpu-vs-CUDA gap that Vulkan's copy has too."""
    rows = [_row("softmax", "cubepy", "wgpu", 1800.0),
            _row("softmax", "raw wgpu-py copy (same size)", "wgpu", 2000.0),
            _row("layernorm_f16", "cubepy", "wgpu", 800.0),
            _row("layernorm_f16", "raw wgpu-py copy (same size)", "wgpu", 2000.0),
            _row("sum", "cubepy", "wgpu", 2700.0),
            _row("sum", "raw wgpu-py copy (same size)", "wgpu", 2000.0)]
    lines = report.target_lines(rows)
    assert lines == [
        "| softmax | s | cubepy [wgpu] | raw wgpu-py copy (same size) | 90% | 85% | met |",
        "| layernorm_f16 | s | cubepy [wgpu] | raw wgpu-py copy (same size) | 40% | 85% "
        "| **missed** |"]


def test_rows_with_errors_are_left_out_of_targets():
    rows = [_row("copy", "torch copy_", "cuda", 4000.0),
            dict(_row("sum", "cubepy", "cuda", 0.0), error="out of memory")]
    assert report.target_lines(rows) == []


@pytest.mark.parametrize("device, tag", [("NVIDIA H200 (sm_90, cuda:0)", "h200"),
                                         ("NVIDIA H100 80GB HBM3 / Vulkan", "h100")])
def test_tag_is_the_gpu_model(device, tag):
    assert cli._tag([SimpleNamespace(runtime="cuda", device=device, is_software=False)]) == tag


def test_tier_is_tiny_without_a_gpu():
    args = SimpleNamespace(size=None, quick=False)
    cpu = SimpleNamespace(runtime="cpu", is_software=False)
    soft = SimpleNamespace(runtime="wgpu", is_software=True)
    gpu = SimpleNamespace(runtime="cuda", is_software=False)
    assert cli._tier(args, [cpu, soft]) == "tiny"
    assert cli._tier(args, [gpu]) == "full"
    assert cli._tier(SimpleNamespace(size=None, quick=True), [gpu]) == "quick"


def test_widths_tier_runs_softmax_and_layernorm_at_models_widths():
    from benchmarks import suite
    assert cli._tier(SimpleNamespace(size="widths", quick=False), []) == "widths"
    cases = suite.cases("widths")
    assert {c.kernel for c in cases} == {"softmax", "layernorm_f16", "layernorm_f32"}
    widths = {k: sorted(int(c.size.split("x")[1]) for c in cases if c.kernel == k)
              for k in ("softmax", "layernorm_f32")}
    assert widths == {"softmax": [768, 1000, 1600, 5120, 12288],
                      "layernorm_f32": [768, 1600, 3584, 5120, 12288]}


@pytest.mark.wgpu
def test_the_raw_wgpu_copy_times_every_repetition_and_copies(monkeypatch):
    """Its repetitions go into command buffers of at most MAX_QUEUED_REPS each, one time
    per repetition comes back, and the copy is done."""
    import numpy as np
    from benchmarks import wgpu_copy
    monkeypatch.setattr(wgpu_copy, "MAX_QUEUED_REPS", 2)
    copier = wgpu_copy.WgpuCopy(4096)
    data = np.arange(4096, dtype=np.float32)
    copier.device.queue.write_buffer(copier.src, 0, data)
    result = copier.bench(1, 5)
    assert len(result.times_ms) == 5 and min(result.times_ms) > 0
    got = np.frombuffer(copier.device.queue.read_buffer(copier.dst), np.float32)
    np.testing.assert_array_equal(got, data)


@pytest.mark.wgpu
def test_the_raw_wgpu_copys_flush_shader_reads_every_line():
    """The raw wgpu-py copy's flush (wgpu_copy.READ_SHADER) finds a set bit anywhere in
    its buffer, so it reads it whole, and stores nothing for a zeroed one. (On a
    software adapter the copy flushes nothing, so the shader is run here by hand.)"""
    import numpy as np
    import wgpu
    from benchmarks.wgpu_copy import READ_GROUPS, READ_SHADER, WgpuCopy
    copier = WgpuCopy(1024)
    assert copier.bench(1, 2).median_ms > 0
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    for where in (None, 0, 777, (1 << 16) - 1):
        words = np.zeros(1 << 16, np.uint32)
        if where is not None:
            words[where] = 1 << (where % 32)
        found = copier.device.create_buffer(size=4, usage=usage)
        pipeline, group = copier._pipeline(
            READ_SHADER, copier.device.create_buffer_with_data(data=words, usage=usage), found)
        encoder = copier.device.create_command_encoder()
        cpass = encoder.begin_compute_pass()
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, group)
        cpass.dispatch_workgroups(READ_GROUPS)
        cpass.end()
        copier.device.queue.submit([encoder.finish()])
        got = np.frombuffer(copier.device.queue.read_buffer(found), np.uint32)[0]
        assert got == (0 if where is None else words[where]), where
