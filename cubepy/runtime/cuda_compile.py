"""CUDA C to cubin for the cuda runtime: NVRTC (libnvrtc through ctypes, nvrtc_lib.py)
when present, else the nvcc command line, with an on-disk cache of cubins.

NVRTC compiles a kernel in tens of milliseconds where nvcc takes about half a second, so
it goes first; any NVRTC failure (missing library, unsupported architecture) falls back
to nvcc.

Cubins live in the `cuda` folder of the cubepy cache (cubepy/cache.py: trusted folders,
checksummed entries, atomic writes; docs/CACHE.md). The key covers everything that
changes the cubin: the source, the architecture, the compiler options (include folders
among them), the compiler's identity and the cubepy version. The compiler's identity is
the path, size and modification time of its files (libnvrtc, or nvcc with ptxas and
cicc) plus NVRTC's version: a new or rebuilt toolkit never loads a stale cubin, and for
nvcc a cache hit needs no `nvcc --version` subprocess.

Environment: CUBEPY_CACHE_DIR moves the cache, CUBEPY_NO_CACHE=1 turns it off;
CUBEPY_CUDA_COMPILER=nvcc or =nvrtc forces one compiler.
"""
from __future__ import annotations

import functools
import logging
import os
import shutil
import tempfile
import threading
from typing import TYPE_CHECKING

from ..cache import DiskCache, cache_key
from ..errors import LaunchError
from . import nvrtc_lib

if TYPE_CHECKING:
    import concurrent.futures

_log = logging.getLogger("cubepy.runtime")

# Plain IEEE arithmetic: no fast-math, the DSL's NaN/rounding semantics depend on it.
_COMMON_OPTIONS = ("--std=c++17",)
# `@cube(launch=True, fast_math=False)`: no multiply-add contraction, so a float chain is
# rounded operation by operation as written (the cpu runtime's numpy result, bit for bit).
STRICT_FLOAT_OPTIONS = ("--fmad=false",)
# NVRTC's option for small programs (compile_nvrtc), and the version that has it.
MINIMAL_OPTION = "--minimal"
MINIMAL_SINCE = (12, 4)
SOURCE_NAME = "cubepy_kernel.cu"  # (the name NVRTC's messages give the source)


CUBINS = DiskCache("cuda", ".cubin")
COMPILERS = DiskCache("compilers", ".txt")  # which libnvrtc serves (nvrtc_identity)


def cuda_include_dir() -> str | None:
    """A folder holding cuda_fp16.h: NVRTC 13 has no default include path."""
    return _include_dirs()[0]


def cccl_include_dir() -> str | None:
    """A folder holding CCCL (`nv/target`, `cuda/std/...`), which the cooperative groups
    headers (plane operations) include; pip's header folders lack it, a toolkit has it
    (CUDA 13 under include/cccl)."""
    return _include_dirs()[1]


def extra_include_dir() -> str | None:
    """A folder holding the generated code's headers that `cuda_include_dir()` lacks,
    searched after it (None when it lacks none, or no folder has them). CUDA 13's pip
    wheel of the runtime headers ships mma.h without the crt/mma.h it includes, so
    without this every kernel using matrix units failed NVRTC and went to nvcc."""
    return _include_dirs()[2]


# Where pip's NVIDIA wheels put the CUDA headers, under a sys.path folder.
_WHEEL_INCLUDE_FOLDERS = ("nvidia/cu13/include", "nvidia/cu12/include",
                          "nvidia/cuda_runtime/include")


def _has_cuda_headers(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "cuda_fp16.h"))


# The headers generated CUDA includes (codegen/cuda.py, clike_plane.py), with those they
# include in turn that a partial install may lack.
GENERATED_HEADERS = ("cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "mma.h", "crt/mma.h",
                     "crt/mma.hpp", "cooperative_groups.h", "cooperative_groups/reduce.h",
                     "cooperative_groups/scan.h")


def _missing_headers(d: str) -> set[str]:
    return {h for h in GENERATED_HEADERS if not os.path.isfile(os.path.join(d, *h.split("/")))}


def _has_cccl(d: str) -> bool:
    return all(os.path.exists(os.path.join(d, *h.split("/")))
               for h in ("nv/target", "cuda/std/type_traits"))


@functools.lru_cache(maxsize=None)
def _include_dirs() -> tuple[str | None, str | None, str | None]:
    """(cuda_include_dir, cccl_include_dir, extra_include_dir). Searching runs `which
    nvcc` and may import cuda.pathfinder (tens of ms), and the folders are part of every
    cubin's key, so the answer is recorded in `compilers/` under what decides it
    (_include_record_key); a later process checks the recorded folders still hold their
    headers (a few stats)."""
    key = _include_record_key()
    record = COMPILERS.get(key)
    if record is not None:
        parts = record.decode(errors="replace").split("\0")
        if len(parts) == 3:
            got_cuda, got_cccl, got_extra = parts
            if (got_cuda and _has_cuda_headers(got_cuda)
                    and (not got_cccl or _has_cccl(got_cccl))
                    and (not got_extra or _has_cuda_headers(got_extra))):
                return got_cuda, got_cccl or None, got_extra or None
    candidates = _include_candidates()
    cuda = next((d for d in candidates if _has_cuda_headers(d)), None)
    cccl = next((sub for d in candidates for sub in (os.path.join(d, "cccl"), d)
                 if _has_cccl(sub)), None)
    extra: str | None = None
    if cuda is not None:
        # The first folder (pip's, where there is one: it matches pip's libnvrtc) serves
        # what it has; a complete one after it serves the rest.
        missing = _missing_headers(cuda)
        if missing:
            extra = next((d for d in candidates if d != cuda and _has_cuda_headers(d)
                          and not missing & _missing_headers(d)), None)
        COMPILERS.put(key, f"{cuda}\0{cccl or ''}\0{extra or ''}".encode())
    # (nothing found: searched again next time, nothing recorded)
    return cuda, cccl, extra


def _include_record_key() -> str:
    """What decides the include folders: the variables and PATH the search reads, and
    the modification times of the folders where a toolkit would appear and of pip's
    NVIDIA header folders in each sys.path folder (not of the sys.path folders
    themselves: a script's own folder changes whenever it writes a file there)."""
    env = [os.environ.get(v, "")
           for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CONDA_PREFIX", "PATH")]
    stamps = _folder_stamps(["/usr/local/cuda", "/usr/local/cuda/include", "/usr/include"])
    return cache_key("cuda-include-dirs", "\0".join(env), stamps,
                     _wheel_stamps(_WHEEL_INCLUDE_FOLDERS))


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
    # pip's NVIDIA wheels put the headers beside their libraries; cuda.pathfinder knows
    # more layouts but costs an import, so it is asked only when these hold none.
    found = [d for d in nvrtc_lib.wheel_folders(_WHEEL_INCLUDE_FOLDERS)
             if _has_cuda_headers(d)]
    if not found:
        try:
            from cuda.pathfinder import find_nvidia_header_directory
            found = [d for d in [find_nvidia_header_directory("cudart")] if d]
        except Exception:
            pass
    return found + candidates


_loading_lock = threading.Lock()
_loading: threading.Thread | None = None  # the thread started by start_loading_nvrtc


def start_loading_nvrtc() -> None:
    """Starts libnvrtc's dlopen (about 6 ms on the H200, without the GIL) on a thread, for
    a process about to compile a kernel: the dlopen then overlaps the frontend and code
    generation (nvrtc_lib.py; NVRTC is not reached through cuda-python, whose import
    holds the GIL for about 60 ms). The thread runs nothing but the dlopen: the first
    candidate is found here first, and the compile's `nvrtc_version()` finishes the
    load (nvrtc_lib.load: the library's functions and version) as it would without the
    thread, so it sees the same outcome and reports the same error. On the H200 the
    whole load on the thread (the search, the dlopen, the functions) made a cold
    frontend 3.1 ms slower, this thread 1.2 ms (and 0.5 ms finish the load at the
    compile): each time the thread took the GIL back after a system call, the frontend
    waited (`benchmarks/probe_nvrtc_loader.py`, `nvrtc_loader_h200.json`).
    `CudaCompiler.compile` waits for the thread first. Once per process; nothing
    happens when nvcc is forced.

    The thread compiles nothing. NVRTC's first compile in a process also sets NVRTC up
    (it loads libnvrtc-builtins): on the H200 a small kernel's first compile took 15.0
    ms against 11.2 ms for the next (with --minimal;
    `benchmarks/results/nvrtc_first_compile_h200.json`). But an empty program compiled
    on this thread ahead of the real one made the cold first launch slower, not
    faster: a median of 65.8 ms against 57.6 ms without it (10 fresh processes of each,
    interleaved; `benchmarks/results/startup_cold_setup_h200.json`), as it had before
    NVRTC was reached through ctypes."""
    global _loading
    if (os.environ.get("CUBEPY_CUDA_COMPILER") == "nvcc" or _loading is not None
            or nvrtc_lib.load_finished()):
        return
    with _loading_lock:
        if _loading is None:
            # Not a daemon: an interpreter exiting meanwhile waits for the dlopen to end
            # rather than finalising under a thread inside it.
            candidates = nvrtc_lib.prepare_open_ahead()
            _loading = threading.Thread(target=_open_nvrtc, args=(candidates,),
                                        name="cubepy-nvrtc-load")
            _loading.start()


def _open_nvrtc(candidates: list[str]) -> None:
    try:
        nvrtc_lib.open_ahead(candidates)
    except BaseException:  # (the compile's own load reports what went wrong)
        pass


def wait_for_nvrtc_load() -> None:
    """Waits for a load that start_loading_nvrtc began (no-op when none did)."""
    thread = _loading
    if thread is not None and thread is not threading.current_thread():
        thread.join()


@functools.lru_cache(maxsize=None)
def nvrtc_version() -> str | None:
    """"nvrtc-MAJOR.MINOR", or None when NVRTC cannot be loaded (nvrtc_lib.py)."""
    if os.environ.get("CUBEPY_CUDA_COMPILER") == "nvcc":
        return None
    try:
        major, minor = nvrtc_lib.load().version()
    except nvrtc_lib.NvrtcError:
        return None
    return f"nvrtc-{major}.{minor}"


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


def describe_compilers() -> list[str]:
    """One line per CUDA compiler, for `cubepy info`: the NVRTC found (version and
    library) or why none was, and the nvcc on PATH; which one a compile uses first."""
    forced = os.environ.get("CUBEPY_CUDA_COMPILER")
    lines = []
    if forced == "nvcc":
        lines.append("NVRTC not used (CUBEPY_CUDA_COMPILER=nvcc)")
    else:
        try:
            nvrtc = nvrtc_lib.load()
            major, minor = nvrtc.version()
            lines.append(f"NVRTC {major}.{minor} ({nvrtc.path})"
                         + (", used first" if forced != "nvrtc" else ", forced"))
        except nvrtc_lib.NvrtcError as e:
            lines.append(f"NVRTC not found (tried {_places(len(e.tried))}; "
                         "CUBEPY_NVRTC_LIBRARY names the library)")
    nvcc = shutil.which("nvcc")
    if forced == "nvrtc":
        lines.append("nvcc not used (CUBEPY_CUDA_COMPILER=nvrtc)")
    else:
        lines.append(f"nvcc ({nvcc})" if nvcc else "nvcc not on PATH")
    return lines


def file_identity(path: str | None) -> str:
    """"path:size:mtime_ns" of the file `path` resolves to ("" when missing): changes
    whenever the file is replaced or rebuilt, and costs one stat."""
    if not path:
        return ""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return ""
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


@functools.lru_cache(maxsize=None)
def nvrtc_identity() -> str | None:
    """NVRTC's version and the identity of the libnvrtc this process loads, or None
    when NVRTC is not available.

    Learning the version takes loading libnvrtc, so the first process records what it
    found in the cache (`compilers/`): keyed by what decides the search (nvrtc_lib.py:
    the variables it reads, the stamps of the folders it looks in), holding the
    version, the library's path and that file's identity. A later process with the same
    key checks the file with one stat and, on a cubin cache hit, never loads NVRTC; a
    file replaced or rebuilt since is loaded again, so its version is never stale."""
    key = _nvrtc_record_key()
    record = COMPILERS.get(key)
    if record is not None:
        version, _, rest = record.decode(errors="replace").partition("|")
        library, _, identity = rest.partition("|")
        if version and identity and file_identity(library) == identity:
            return f"{version}|{identity}"
    version = nvrtc_version()
    if version is None:
        return None
    library = _nvrtc_library_path()
    identity = file_identity(library)
    if identity:
        COMPILERS.put(key, f"{version}|{library}|{identity}".encode())
    return f"{version}|{identity}"


def _nvrtc_library_path() -> str:
    """The file of the libnvrtc this process loaded (nvrtc_version loaded it)."""
    return nvrtc_lib.load().path


def _nvrtc_record_key() -> str:
    """The cache key of the NVRTC record: the variables nvrtc_lib's search reads, the
    modification times of the folders it looks in (pip's NVIDIA library folders under
    each sys.path folder, LD_LIBRARY_PATH's, the toolkits'), and the loader's cache,
    which ldconfig rewrites."""
    env = [os.environ.get(v, "") for v in nvrtc_lib.SEARCH_VARIABLES]
    folders = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    for root in (os.environ.get("CONDA_PREFIX"), os.environ.get("CUDA_HOME"),
                 os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            folders += [os.path.join(root, "lib64"), os.path.join(root, "lib")]
    return cache_key("nvrtc-identity", "\0".join(env), _folder_stamps(folders),
                     _wheel_stamps(nvrtc_lib.WHEEL_FOLDERS),
                     file_identity("/etc/ld.so.cache"))


def _folder_stamps(folders: list[str]) -> str:
    """"realpath:mtime" of each folder ("-" for a missing one): changes when a file is
    added to or removed from any of them, or a link among them points elsewhere."""
    stamps = []
    for d in dict.fromkeys(folders):
        try:
            stamps.append(f"{os.path.realpath(d)}:{os.stat(d).st_mtime_ns}")
        except OSError:
            stamps.append(f"{d}:-")
    return "\0".join(stamps)


def _wheel_stamps(subfolders: tuple[str, ...]) -> str:
    """The modification time of each of `subfolders` under each sys.path folder ("-"
    where it is absent): a wheel installed, upgraded or removed there changes it."""
    stamps = []
    for path in nvrtc_lib.wheel_folders(subfolders):
        try:
            stamps.append(f"{path}:{os.stat(path).st_mtime_ns}")
        except OSError:
            stamps.append("-")
    return "\0".join(stamps)


@functools.lru_cache(maxsize=None)
def nvcc_identity() -> str | None:
    """The identity of nvcc and of the ptxas and cicc beside it (path, size and mtime of
    each), or None when nvcc is not usable. A real nvcc binary costs no subprocess, so a
    cache hit stays cheap; an nvcc that is a script (a wrapper around some toolkit) also
    adds the text of `nvcc --version`, since its own file says nothing of the toolkit."""
    if os.environ.get("CUBEPY_CUDA_COMPILER") == "nvrtc":
        return None
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    bin_dir = os.path.dirname(os.path.realpath(nvcc))
    parts = [file_identity(nvcc), file_identity(os.path.join(bin_dir, "ptxas")),
             file_identity(os.path.join(os.path.dirname(bin_dir), "nvvm", "bin", "cicc"))]
    if not _is_elf(nvcc):
        version = nvcc_version()
        if version is None:
            return None
        parts.append(version)
    return "nvcc|" + "|".join(parts)


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _float_options(fast_math: bool) -> tuple[str, ...]:
    return () if fast_math else STRICT_FLOAT_OPTIONS


def nvrtc_options(arch: str, fast_math: bool = True, minimal: bool = False,
                  source: str | None = None) -> list[str]:
    """NVRTC's options for `arch` (they are part of the cache key); `fast_math=False`
    turns off multiply-add contraction; `minimal` adds --minimal (compile_nvrtc). Given
    the `source`, the header folders are passed only when it includes a header: a
    first compile of a kernel without one (a plain f32 kernel) then skips their search,
    about 0.7 ms of a cold launch on the H200."""
    opts = [f"--gpu-architecture={arch}", *_COMMON_OPTIONS, *_float_options(fast_math)]
    if source is None or "#include" in source:
        for inc in dict.fromkeys((cuda_include_dir(), extra_include_dir(),
                                  cccl_include_dir())):
            if inc:
                opts.append(f"--include-path={inc}")
    if minimal:
        opts.append(MINIMAL_OPTION)
    return opts


def nvcc_options(arch: str, fast_math: bool = True) -> list[str]:
    """nvcc's options for `arch` (they are part of the cache key); `fast_math=False`
    turns off multiply-add contraction."""
    return ["-cubin", f"-arch={arch}", *_COMMON_OPTIONS, *_float_options(fast_math)]


def compile_nvrtc(source: str, arch: str, fast_math: bool = True) -> bytes:
    """A cubin for `arch` ("sm_90") through NVRTC; raises NvrtcError with the log.

    Compiled with --minimal where this NVRTC has it (12.4 on): NVRTC then leaves out
    what generated kernels never use (texture and surface types, the device runtime's
    functions, launches from device code, the runtime API's types), which on the H200
    took a small kernel's first compile in a process from 25.1 to 15.0 ms and the next
    from 21.6 to 11.2 (`benchmarks/results/nvrtc_first_compile_h200.json`); every
    kernel of the GPU tests compiles with it. A source NVRTC rejects that way
    is compiled again without it, and that compile's outcome is the answer, so the
    option can cost time but never a kernel. The choice depends only on NVRTC's version
    and the source, both in the cubin's cache key."""
    nvrtc = nvrtc_lib.load()
    if _has_minimal(nvrtc):
        try:
            return nvrtc.compile(source, SOURCE_NAME,
                                 nvrtc_options(arch, fast_math, minimal=True, source=source))
        except nvrtc_lib.NvrtcError:
            _log.debug("NVRTC rejected the source with %s; compiling it without",
                       MINIMAL_OPTION)
    return nvrtc.compile(source, SOURCE_NAME, nvrtc_options(arch, fast_math, source=source))


def _has_minimal(nvrtc: nvrtc_lib.Nvrtc) -> bool:
    return nvrtc.version() >= MINIMAL_SINCE


def nvrtc_minimal() -> bool:
    """Whether compile_nvrtc tries --minimal first (the NVRTC found is 12.4 or later)."""
    try:
        return _has_minimal(nvrtc_lib.load())
    except nvrtc_lib.NvrtcError:
        return False


def compile_nvcc(source: str, arch: str, fast_math: bool = True) -> bytes:
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
        proc = subprocess.run([nvcc, *nvcc_options(arch, fast_math), "-o", out, src],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError((proc.stderr or proc.stdout).strip())
        with open(out, "rb") as f:
            return f.read()


# Threads compiling sources ahead of their launch (compile_ahead). NVRTC runs compiles
# on several threads at once only in part: matmul_tc's 17 sources took 6.9-7.6 s one
# after another on the H200's host, 3.75 s on 2 threads, 2.3 s on 4 and 2.8-2.9 s on 8
# or 16 (benchmarks/results/compile_ahead_h200.md), so four at most.
AHEAD_THREADS = 4
_ahead_pool: "concurrent.futures.ThreadPoolExecutor | None" = None
_ahead_pool_lock = threading.Lock()


def _forget_ahead_pool() -> None:
    """In a forked child: the parent's compile threads do not exist there (a pool that
    believes they do would never run the child's compiles), nor may its lock be free."""
    global _ahead_pool, _ahead_pool_lock
    _ahead_pool, _ahead_pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_ahead_pool)


def compile_ahead(compiler: "CudaCompiler", source: str,
                  fast_math: bool = True) -> "concurrent.futures.Future[tuple[bytes, str]]":
    """Starts `compiler.compile_served(source, fast_math)` on the compile threads."""
    global _ahead_pool
    with _ahead_pool_lock:
        if _ahead_pool is None:
            import concurrent.futures
            _ahead_pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=min(AHEAD_THREADS, os.cpu_count() or 1),
                thread_name_prefix="cubepy-compile")
        return _ahead_pool.submit(compiler.compile_served, source, fast_math)


# Generated sources using the warpgroup multiply contain this instruction
# (codegen/clike_wgmma.py); they are compiled for sm_90a.
WGMMA_MARK = "wgmma.mma_async"


class CudaCompiler:
    """Compiles CUDA sources for one architecture, with the on-disk cubin cache.

    `last_compiler` tells which path served the last `compile` call ("nvrtc-13.0",
    "nvcc-...", or "disk" for a cache hit): tests and the benchmark read it.
    """

    def __init__(self, arch: str):
        self.arch = arch
        self.last_compiler = ""

    def key(self, source: str, compiler: str, options: list[str],
            arch: str | None = None) -> str:
        """The cache key of a cubin: source, architecture (the device's unless given),
        compiler identity, options and (through cache_key) the cubepy version."""
        return cache_key("cubin", compiler, arch or self.arch, "\x00".join(options), source)

    def arch_for(self, source: str) -> str:
        """The architecture `source` is compiled for: the device's, or its
        architecture-specific variant ("sm_90a") for a source using wgmma, which exists
        only there; a LaunchError on a device without it."""
        if WGMMA_MARK not in source:
            return self.arch
        if self.arch != "sm_90":
            raise LaunchError(f"the kernel uses the warpgroup matrix multiply "
                              f"(cmma.wg_mma: PTX wgmma), which only sm_90 (Hopper) has; "
                              f"this device is {self.arch}")
        return "sm_90a"

    def compile(self, source: str, fast_math: bool = True) -> bytes:
        """The cubin for `source` (`fast_math=False`: without multiply-add contraction,
        a cache entry of its own); raises LaunchError when no compiler accepts it."""
        cubin, self.last_compiler = self.compile_served(source, fast_math)
        return cubin

    def compile_served(self, source: str, fast_math: bool = True) -> tuple[bytes, str]:
        """`compile`'s cubin and what served it (as `last_compiler`), leaving
        `last_compiler` alone: safe on several threads at once (compile_ahead)."""
        wait_for_nvrtc_load()  # (a compile never races the background load)
        arch = self.arch_for(source)
        errors = []
        # Module globals looked up per call, so tests can substitute fake compilers.
        compilers = (("nvrtc", nvrtc_identity,
                      lambda arch, fast_math: nvrtc_options(arch, fast_math, source=source),
                      compile_nvrtc, nvrtc_version),
                     ("nvcc", nvcc_identity, nvcc_options, compile_nvcc, nvcc_version))
        forced = os.environ.get("CUBEPY_CUDA_COMPILER")  # read per compile, not cached
        for which, identity, options, fn, version in compilers:
            if forced in ("nvrtc", "nvcc") and forced != which:
                continue
            compiler = identity()
            if compiler is None:
                continue
            key = self.key(source, compiler, options(arch, fast_math), arch)
            cubin = CUBINS.get(key)
            if cubin is not None:
                return cubin, "disk"
            try:
                cubin = fn(source, arch, fast_math=fast_math)
            except Exception as e:  # compiler missing or rejecting: try the next one
                errors.append(f"{version() or which}: {e}")
                continue
            CUBINS.put(key, cubin)
            return cubin, version() or which
        if not errors:
            raise LaunchError(f"no CUDA compiler to compile the kernel for {arch}: "
                              + _nothing_found(forced))
        raise LaunchError(f"the CUDA compiler rejected the generated source for {arch}:"
                          "\n" + "\n".join(errors))


def _places(count: int) -> str:
    return f"{count} place" + ("" if count == 1 else "s")


def _nothing_found(forced: str | None) -> str:
    """Why no compiler ran: where libnvrtc was looked for (each place and why it did not
    load) and whether nvcc is on PATH, with what to do about it."""
    lines = ["neither NVRTC (libnvrtc) nor nvcc was found"]
    if forced != "nvcc":
        try:
            nvrtc_lib.load()
        except nvrtc_lib.NvrtcError as e:
            if e.tried:
                lines.append(f"libnvrtc was looked for in {_places(len(e.tried))}:")
                lines += [f"  {place}" for place in e.tried]
            else:
                lines.append(str(e))
    else:
        lines.append("NVRTC is not used: CUBEPY_CUDA_COMPILER=nvcc")
    if forced == "nvrtc":
        lines.append("nvcc is not used: CUBEPY_CUDA_COMPILER=nvrtc")
    elif not shutil.which("nvcc"):
        lines.append("nvcc is not on PATH")
    lines.append("install NVRTC (pip's `nvidia-cuda-nvrtc` wheel for CUDA 13, "
                 "`nvidia-cuda-nvrtc-cu12` for CUDA 12, or a CUDA toolkit) or set "
                 "CUBEPY_NVRTC_LIBRARY to the libnvrtc file")
    return "\n".join(lines)
