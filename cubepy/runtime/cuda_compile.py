"""CUDA C to cubin for the cuda runtime: NVRTC (cuda-python) when present, else the
nvcc command line, with an on-disk cache of cubins.

NVRTC compiles a kernel in tens of milliseconds where nvcc takes about half a second, so
it goes first; any NVRTC failure (missing library, unsupported architecture) falls back
to nvcc. The cache key is a hash of the source, the architecture and the compiler's
version, so a new toolkit never loads a stale cubin.

Environment: CUBEPY_CACHE_DIR moves the cache (default ~/.cache/cubepy, or under
$XDG_CACHE_HOME); CUBEPY_DISABLE_CACHE=1 turns the on-disk cache off;
CUBEPY_CUDA_COMPILER=nvcc or =nvrtc forces one compiler.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ..errors import LaunchError

# Plain IEEE arithmetic: no fast-math, the DSL's NaN/rounding semantics depend on it.
_COMMON_OPTIONS = ("--std=c++17",)


def cache_dir() -> Path | None:
    """Where cubins are kept, or None when the on-disk cache is off."""
    if os.environ.get("CUBEPY_DISABLE_CACHE", "") not in ("", "0"):
        return None
    root = os.environ.get("CUBEPY_CACHE_DIR")
    if root:
        return Path(root) / "cuda"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cubepy" / "cuda"


@functools.lru_cache(maxsize=None)
def cuda_include_dir() -> str | None:
    """A folder holding cuda_fp16.h: NVRTC 13 has no default include path."""
    for d in _include_candidates():
        if os.path.isfile(os.path.join(d, "cuda_fp16.h")):
            return d
    return None


@functools.lru_cache(maxsize=None)
def cccl_include_dir() -> str | None:
    """A folder holding CCCL (`nv/target`, `cuda/std/...`), which the cooperative groups
    headers (plane operations) include; pip's header folders lack it, a toolkit has it
    (CUDA 13 under include/cccl)."""
    for d in _include_candidates():
        for sub in (os.path.join(d, "cccl"), d):
            if all(os.path.exists(os.path.join(sub, *h.split("/")))
                   for h in ("nv/target", "cuda/std/type_traits")):
                return sub
    return None


def _include_candidates() -> list[str]:
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "include"))
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.join(os.path.dirname(os.path.dirname(
            os.path.realpath(nvcc))), "include"))
    candidates += ["/usr/local/cuda/include", "/usr/include"]
    try:  # pip-installed toolkits (nvidia-cuda-runtime) know their header folder
        from cuda.pathfinder import find_nvidia_header_directory
        found = find_nvidia_header_directory("cudart")
        if found:
            candidates.insert(0, found)
    except Exception:
        pass
    return candidates


def _nvrtc_module():
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        from cuda import nvrtc  # cuda-python < 12.6 layout
    return nvrtc


@functools.lru_cache(maxsize=None)
def nvrtc_version() -> str | None:
    """"nvrtc-MAJOR.MINOR", or None when NVRTC cannot be loaded."""
    if os.environ.get("CUBEPY_CUDA_COMPILER") == "nvcc":
        return None
    try:
        nvrtc = _nvrtc_module()
        err, major, minor = nvrtc.nvrtcVersion()
        if int(err) != 0:
            return None
        return f"nvrtc-{major}.{minor}"
    except Exception:
        return None


@functools.lru_cache(maxsize=None)
def nvcc_version() -> str | None:
    """The last line of `nvcc --version` (it names the exact build), or None."""
    if os.environ.get("CUBEPY_CUDA_COMPILER") == "nvrtc":
        return None
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    import subprocess
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                             timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return "nvcc-" + (out.splitlines()[-1] if out else "unknown")


def compile_nvrtc(source: str, arch: str) -> bytes:
    """A cubin for `arch` ("sm_90") through NVRTC; raises RuntimeError with the log."""
    nvrtc = _nvrtc_module()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"cubepy_kernel.cu", 0, [], [])
    if int(err) != 0:
        raise RuntimeError(f"nvrtcCreateProgram failed: {err}")
    try:
        opts = [f"--gpu-architecture={arch}".encode()] + [o.encode() for o in _COMMON_OPTIONS]
        for inc in dict.fromkeys((cuda_include_dir(), cccl_include_dir())):
            if inc:
                opts.append(f"--include-path={inc}".encode())
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(err) != 0:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(log.decode(errors="replace").rstrip("\x00 \n"))
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        if int(err) != 0 or size == 0:
            raise RuntimeError(f"nvrtcGetCUBINSize failed: {err}")
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        if int(err) != 0:
            raise RuntimeError(f"nvrtcGetCUBIN failed: {err}")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def compile_nvcc(source: str, arch: str) -> bytes:
    """A cubin for `arch` through the nvcc command line; raises RuntimeError with the
    compiler's messages."""
    import subprocess
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="cubepy-nvcc-") as tmp:
        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        proc = subprocess.run([nvcc, "-cubin", f"-arch={arch}", *_COMMON_OPTIONS,
                               "-o", out, src], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError((proc.stderr or proc.stdout).strip())
        with open(out, "rb") as f:
            return f.read()


class CudaCompiler:
    """Compiles CUDA sources for one architecture, with the on-disk cubin cache.

    `last_compiler` tells which path served the last `compile` call ("nvrtc-13.0",
    "nvcc-...", or "disk" for a cache hit): tests and the benchmark read it.
    """

    def __init__(self, arch: str):
        self.arch = arch
        self.last_compiler = ""

    def _key(self, source: str, compiler: str) -> str:
        h = hashlib.sha256()
        for part in (compiler, self.arch, source):
            h.update(part.encode())
            h.update(b"\x00")
        return h.hexdigest()

    def compile(self, source: str) -> bytes:
        """The cubin for `source`; raises LaunchError when no compiler accepts it."""
        folder = cache_dir()
        errors = []
        for which, fn in (("nvrtc", compile_nvrtc), ("nvcc", compile_nvcc)):
            # nvcc's version costs a subprocess: ask only when NVRTC did not serve.
            version = nvrtc_version() if which == "nvrtc" else nvcc_version()
            if version is None:
                continue
            key = self._key(source, version)
            if folder is not None:
                cubin = _read(folder / f"{key}.cubin")
                if cubin is not None:
                    self.last_compiler = "disk"
                    return cubin
            try:
                cubin = fn(source, self.arch)
            except Exception as e:  # compiler missing or rejecting: try the next one
                errors.append(f"{version}: {e}")
                continue
            self.last_compiler = version
            if folder is not None:
                _write(folder, f"{key}.cubin", cubin)
            return cubin
        detail = "\n".join(errors) or "neither NVRTC (cuda-python) nor nvcc was found"
        raise LaunchError(f"the CUDA compiler rejected the generated source for {self.arch}:"
                          f"\n{detail}")


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _write(folder: Path, name: str, data: bytes) -> None:
    """Atomic write (tmp + rename) so concurrent processes never see half a cubin."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, folder / name)
    except OSError:
        pass  # a read-only home only costs recompiles
