"""The Compiled record: code generators return it, the kernel cache keeps it, and the
runtimes take it, so a kernel's source is generated once and never parsed back."""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import corpus
import cubepy
import cubepy.codegen as codegen
from cubepy import ABSOLUTE_POS, Array, Tensor, cube, f32, u32
from cubepy.codegen import Compiled, emit, generate
from cubepy.codegen.names import entry_name
from cubepy.runtime.wgpu_runtime import scan_features


def _fresh_kernel():
    """A kernel object nothing has compiled yet."""
    @cube(launch=True)
    def triple(x: Tensor[f32], out: Tensor[f32]):
        out[ABSOLUTE_POS] = x[ABSOLUTE_POS] * 3.0
    return triple


@cube(launch=True)
def _read_and_write(x: Array[u32], out: Array[u32]):
    i = ABSOLUTE_POS
    if i < len(out):
        out[i] = out[i] + x[i] * 2


def _specialised(kernel, target, dim=(64, 1, 1), checked=True, **spec):
    return kernel._compile(kernel._specialization(dim, spec), target, checked)


def _source_cases(target):
    for cid, kernel, dim, spec, targets in corpus.SOURCE_CASES:
        if target in targets:
            yield cid, kernel, dim, spec


@pytest.mark.parametrize("target", ["cuda", "wgsl", "metal", "cpu"])
def test_generate_returns_a_record_with_the_entry_and_bindings(target):
    entry = _specialised(corpus.axpy, target, Float=f32)
    record = entry.artefact
    assert isinstance(record, Compiled) and record.target == target
    assert entry.source == record.source
    assert record.bindings == entry.abi.buffers
    want = {"cuda": entry_name("axpy", "cuda"), "metal": entry_name("axpy", "metal"),
            "wgsl": "main", "cpu": "kernel_fn"}[target]
    assert record.entry == want
    assert f"{want}(" in record.source
    if target != "cpu":
        assert emit(entry.kernel, target, entry.abi, True) == record.source
    else:
        assert "np" in record.namespace and "def kernel_fn(" in record.source


def test_unknown_target_names_the_known_ones():
    entry = _specialised(corpus.axpy, "cuda", Float=f32)
    with pytest.raises(cubepy.OptionError, match="cuda, wgsl, metal, cpu"):
        generate(entry.kernel, "ptx", entry.abi, True)


def test_features_come_from_the_ir():
    assert "f16" in _specialised(corpus.axpy, "cuda", Float=cubepy.f16).artefact.features
    assert "f16" not in _specialised(corpus.axpy, "cuda", Float=f32).artefact.features
    shared = _specialised(corpus.shared_reduce, "metal").artefact
    assert "shared" in shared.features
    assert shared.shared_bytes > 0
    assert "atomics" in _specialised(corpus.histogram16, "cuda").artefact.features
    plane = _specialised(corpus.plane_reductions, "cuda", Numeric=f32).artefact
    assert "subgroups" in plane.features


def test_wgsl_features_agree_with_what_the_text_needs():
    """The runtime no longer scans generated WGSL: the record must say what the text
    would have told it, for every corpus kernel WGSL accepts."""
    seen = set()
    for cid, kernel, dim, spec in _source_cases("wgsl"):
        for checked in (True, False):
            record = _specialised(kernel, "wgsl", dim, checked, **spec).artefact
            wanted = scan_features(record.source)
            assert record.features & {"f16", "subgroups"} == wanted, cid
            seen |= wanted
    assert seen == {"f16"}  # the corpus has f16 WGSL; planes are checked below
    record = _specialised(corpus.plane_reductions, "wgsl", Numeric=f32).artefact
    assert "subgroups" in record.features and scan_features(record.source) == {"subgroups"}


def test_wgsl_render_declares_the_promoted_bindings_read_write():
    record = _specialised(_read_and_write, "wgsl").artefact
    assert record.render(frozenset()) == record.source
    promoted = record.render(frozenset({0}))
    assert re.search(r"@binding\(0\) var<storage, read_write>", promoted)
    assert re.search(r"@binding\(0\) var<storage, read>", record.source)
    # nothing else changes
    assert promoted.replace("read_write> x", "read> x") == record.source


def test_a_first_launch_generates_the_source_once(runtime_client, monkeypatch):
    calls = []
    real = codegen.generate

    def counting(kernel, target, abi, checked):
        calls.append(target)
        return real(kernel, target, abi, checked)

    monkeypatch.setattr(codegen, "generate", counting)
    k = _fresh_kernel()
    x = runtime_client.tensor(np.arange(64, dtype=np.float32))
    out = runtime_client.zeros(64, f32)
    k.launch(runtime_client, 1, 64, x, out)
    k.launch(runtime_client, 1, 64, x, out)
    np.testing.assert_array_equal(out.numpy(), np.arange(64, dtype=np.float32) * 3)
    assert calls == [runtime_client.target]


def test_cpu_runs_the_records_source(monkeypatch):
    """The cpu runtime executes the numpy code the kernel's cache entry holds, without
    generating it again."""
    cpu = cubepy.client("cpu")

    @cube(launch=True)
    def twice(x: Array[u32], out: Array[u32]):
        i = ABSOLUTE_POS
        if i < len(out):
            out[i] = x[i] * 2

    entry = _specialised(twice, "cpu")
    # x * 2 becomes x * (2 + 3): the constant 2 lives in the namespace
    changed = re.sub(r"\* (_k\d+)\)", r"* (\1 + 3))", entry.artefact.source)
    assert changed != entry.artefact.source
    entry.artefact = dataclasses.replace(entry.artefact, source=changed)
    import cubepy.codegen.numpy_gen as numpy_gen  # (the cpu runtime loads it on demand)

    def refuse(*args, **kwargs):
        raise AssertionError("generated again")
    monkeypatch.setattr(numpy_gen, "generate_numpy", refuse)
    x, out = cpu.tensor(np.ones(64, np.uint32)), cpu.zeros(64, u32)
    twice.launch(cpu, 1, 64, x, out)
    np.testing.assert_array_equal(out.numpy(), np.full(64, 5, np.uint32))
    assert entry.executables[cpu].source == changed


def test_a_registered_target_without_a_record_generator_gets_one():
    """A target whose emitter returns source text (a toy target) still yields a record."""
    from cubepy.targets import get_target, registered
    calls = []

    def toy_emit(kernel, abi, checked):
        calls.append(checked)
        return "// toy\n" + emit(kernel, "cuda", abi, checked)

    toy = dataclasses.replace(get_target("cuda"), name="toyc", emitter=toy_emit)
    entry = _specialised(corpus.axpy, "cuda", Float=f32)
    with registered(toy):
        record = generate(entry.kernel, "toyc", entry.abi, False)
    assert calls == [False] and record.target == "toyc"
    assert record.source.startswith("// toy\n") and record.entry == "axpy"
    assert record.bindings == entry.abi.buffers and record.render is None


@cube(launch=True)
def _mentions_builtins(out: Array[u32]):
    out[ABSOLUTE_POS] = u32(1)  # not cube_simd_lane, cube_simd_size nor subgroupAdd(x)


def test_needs_come_from_the_kernel_not_from_text_in_its_comments():
    """Generated source quotes the Python lines; a comment naming a builtin must not make
    the code ask the device for it (a text scan would)."""
    wgsl = _specialised(_mentions_builtins, "wgsl").artefact
    assert "subgroupAdd(x)" in wgsl.source and scan_features(wgsl.source) == {"subgroups"}
    assert "subgroups" not in wgsl.features
    metal = _specialised(_mentions_builtins, "metal").source
    assert "cube_simd_lane, cube_simd_size" in metal
    assert "[[thread_index_in_simdgroup]]" not in metal
    assert "[[threads_per_simdgroup]]" not in metal
    lane = _specialised(corpus.plane_shuffles, "metal", Numeric=f32).source
    assert "uint cube_simd_lane [[thread_index_in_simdgroup]]" in lane
