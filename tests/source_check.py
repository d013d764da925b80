"""Source validation of one kernel by every target's real compiler: nvcc for CUDA C,
naga (through a wgpu compute pipeline with the ABI's layout) for WGSL, clang++ against
tests/shim/metal_stdlib for MSL. Language-feature tests call `validate_sources` so each
new construct is compiled by the three compilers, not only string-matched.

    from source_check import validate_sources
    validate_sources(my_kernel, tmp_path, cube_dim=(64, 1, 1), Float=f32)

A compiler that is absent here skips its part (pytest.skip at the end, after the others
ran); a rejected source fails with the compiler's message and the source.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

NVCC = shutil.which("nvcc") or shutil.which("/usr/local/bin/nvcc")
CLANG = shutil.which("clang++")
SHIM = os.path.join(os.path.dirname(__file__), "shim")
_DEVICE: list = []  # memoised wgpu device (None when there is no adapter)


def _wgpu_device():
    if not _DEVICE:
        import wgsl_harness
        _DEVICE.append(wgsl_harness.wgpu_device())
    return _DEVICE[0]


def check_cuda(source: str, workdir, arch: str = "sm_90", name: str = "kernel") -> str:
    """Compiles CUDA C with nvcc for `arch`, ptxas reporting each kernel's resources;
    fails on an error or a warning. Returns nvcc's output (see `assert_no_spills`)."""
    path = os.path.join(str(workdir), f"{name}.cu")
    with open(path, "w") as fh:
        fh.write(source)
    r = subprocess.run([NVCC, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", os.devnull,
                        path], capture_output=True, text=True, timeout=600)
    output = r.stdout + r.stderr
    assert r.returncode == 0 and "warning" not in output.lower(), \
        f"nvcc rejected {name}:\n{output}\n{source}"
    return output


def assert_no_spills(output: str, name: str = "the kernel") -> None:
    """ptxas (in `check_cuda`'s output) reports no register spills."""
    assert "0 bytes spill stores, 0 bytes spill loads" in output, \
        f"{name} spills registers:\n{output}"


def check_metal(source: str, workdir) -> None:
    """Type-checks MSL as C++17 against the Metal shim; fails on an error or a warning."""
    path = os.path.join(str(workdir), "kernel.metal")
    with open(path, "w") as fh:
        fh.write(source)
    r = subprocess.run([CLANG, "-std=c++17", "-fsyntax-only", "-Wall", "-I", SHIM,
                        "-x", "c++", path], capture_output=True, text=True, timeout=300)
    output = r.stdout + r.stderr
    assert r.returncode == 0 and "warning" not in output.lower(), \
        f"clang++ rejected the source:\n{output}\n{source}"


def check_wgsl(source: str, abi) -> None:
    """Builds a compute pipeline from WGSL with the launch ABI's layout (naga validates
    it on the way)."""
    import wgsl_harness
    device = _wgpu_device()
    if "enable f16;" in source and "shader-f16" not in device.features:
        pytest.skip("adapter without shader-f16")
    wgsl_harness.pipeline(device, source, abi)


def validate_sources(kernel, workdir, cube_dim=(64, 1, 1),
                     targets=("cuda", "wgsl", "metal"), checked: bool = True,
                     **spec) -> dict[str, str]:
    """Generates `kernel` for each target and has that target's compiler accept it.

    Returns target -> source. Targets whose compiler is missing here are skipped after
    the others have been checked."""
    import cubepy
    missing, sources = [], {}
    for target in targets:
        dim = cubepy.CubeDim(*cube_dim) if isinstance(cube_dim, tuple) else cube_dim
        compiled = kernel._compile(kernel._specialization(dim, spec), target, checked)
        sources[target] = compiled.artefact.source
        sub = os.path.join(str(workdir), target)
        os.makedirs(sub, exist_ok=True)
        if target == "cuda":
            check_cuda(compiled.artefact.source, sub) if NVCC else missing.append("nvcc")
        elif target == "metal":
            check_metal(compiled.artefact.source, sub) if CLANG else missing.append("clang++")
        elif target == "wgsl":
            check_wgsl(compiled.artefact.source, compiled.abi) if _wgpu_device() is not None else missing.append("wgpu")
    if missing:
        pytest.skip(f"not installed here: {', '.join(missing)} (the rest compiled)")
    return sources
