"""NVRTC through ctypes (cubepy/runtime/nvrtc_lib.py), against a stand-in libnvrtc
built here from C: the real calls, argument passing and error paths run without CUDA.
The stand-in "compiles" by echoing the options and the source as the cubin, and rejects
a source containing `#error` with a log, as NVRTC does, and one naming `cudaStream_t`
under --minimal, which leaves the runtime API's types out."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from cubepy.errors import LaunchError
from cubepy.runtime import cuda_compile, nvrtc_lib

FAKE_NVRTC_C = r"""
#include <stdlib.h>
#include <string.h>

typedef struct { char *source; char *out; size_t out_size; char *log; } program;

#ifndef NVRTC_MAJOR
#define NVRTC_MAJOR 13
#define NVRTC_MINOR 0
#endif
int nvrtcVersion(int *major, int *minor) {
    *major = NVRTC_MAJOR; *minor = NVRTC_MINOR; return 0;
}

const char *nvrtcGetErrorString(int result) {
    return result == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR_OTHER";
}

int nvrtcCreateProgram(program **prog, const char *src, const char *name, int n,
                       const char *const *headers, const char *const *includes) {
    if (n != 0 || headers || includes) return 4;
    *prog = calloc(1, sizeof(program));
    (*prog)->source = strdup(src);
    return 0;
}

int nvrtcCompileProgram(program *prog, int n, const char *const *options) {
    if (strstr(prog->source, "#error")) {
        prog->log = strdup("cubepy_kernel.cu(1): error: the source says #error");
        return 6;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(options[i], "--minimal") == 0 && strstr(prog->source, "cudaStream_t")) {
            prog->log = strdup("cubepy_kernel.cu(1): error: identifier \"cudaStream_t\" "
                               "is undefined");
            return 6;
        }
    }
    size_t size = strlen(prog->source) + 8;
    for (int i = 0; i < n; i++) size += strlen(options[i]) + 1;
    prog->out = calloc(1, size);
    strcpy(prog->out, "CUBIN\n");
    for (int i = 0; i < n; i++) { strcat(prog->out, options[i]); strcat(prog->out, "\n"); }
    strcat(prog->out, prog->source);
    prog->out_size = strlen(prog->out);
    return 0;
}

int nvrtcGetProgramLogSize(program *prog, size_t *size) {
    *size = prog->log ? strlen(prog->log) + 1 : 1; return 0;
}
int nvrtcGetProgramLog(program *prog, char *log) {
    strcpy(log, prog->log ? prog->log : ""); return 0;
}
#ifndef NO_CUBIN
int nvrtcGetCUBINSize(program *prog, size_t *size) { *size = prog->out_size; return 0; }
int nvrtcGetCUBIN(program *prog, char *out) {
    memcpy(out, prog->out, prog->out_size); return 0;
}
#endif
int nvrtcDestroyProgram(program **prog) {
    free((*prog)->source); free((*prog)->out); free((*prog)->log); free(*prog);
    *prog = NULL; return 0;
}
"""

C_COMPILER = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(C_COMPILER is None or sys.platform != "linux",
                                reason="needs a C compiler to build the stand-in, Linux")


def _build(folder, name="libnvrtc.so.13", *defines):
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "fake_nvrtc.c"
    src.write_text(FAKE_NVRTC_C)
    out = folder / name
    subprocess.run([C_COMPILER, "-shared", "-fPIC", *defines, "-o", str(out), str(src)],
                   check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def fake_library(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("fake-nvrtc"))


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No library loaded yet, nothing cached: each test loads its own."""
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    monkeypatch.delenv("CUBEPY_CUDA_COMPILER", raising=False)
    caches = (cuda_compile.nvrtc_version, cuda_compile.nvrtc_identity)
    nvrtc_lib.reset_for_tests()
    for cached in caches:
        cached.cache_clear()
    yield
    nvrtc_lib.reset_for_tests()
    for cached in caches:
        cached.cache_clear()


def test_compiles_through_the_library(fake_library, fresh, monkeypatch):
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(fake_library))
    nvrtc = nvrtc_lib.load()
    assert nvrtc.version() == (13, 0)
    assert nvrtc.path == os.path.realpath(fake_library)  # the loader's own answer
    assert nvrtc_lib.load() is nvrtc  # loaded once per process
    cubin = nvrtc.compile("__global__ void k() {}", "k.cu", ["--opt-a", "--opt-b=2"])
    assert cubin == b"CUBIN\n--opt-a\n--opt-b=2\n__global__ void k() {}"
    with pytest.raises(nvrtc_lib.NvrtcError, match=r"cubepy_kernel.cu\(1\): error"):
        nvrtc.compile("#error no", "k.cu", [])


def test_the_load_takes_the_library_opened_ahead(fake_library, fresh, monkeypatch):
    """open_ahead's dlopen (the loading thread's) is what load uses: no second open."""
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(fake_library))
    nvrtc_lib.open_ahead(nvrtc_lib.prepare_open_ahead())
    assert isinstance(nvrtc_lib._opened_ahead[str(fake_library)], ctypes.CDLL)

    def no_second_open(candidate):
        raise AssertionError(f"{candidate} opened again")

    monkeypatch.setattr(nvrtc_lib, "_open", no_second_open)
    nvrtc = nvrtc_lib.load()
    assert nvrtc.version() == (13, 0) and nvrtc.path == os.path.realpath(fake_library)
    assert nvrtc.compile("__global__ void k() {}", "k.cu", []).startswith(b"CUBIN")
    assert nvrtc_lib._opened_ahead == {}


def test_a_failed_open_ahead_gives_the_same_error(tmp_path, fresh, monkeypatch):
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(tmp_path / "absent" / "libnvrtc.so.13"))
    messages = []
    for ahead in (False, True):
        nvrtc_lib.reset_for_tests()
        if ahead:
            nvrtc_lib.open_ahead(nvrtc_lib.prepare_open_ahead())
            assert isinstance(nvrtc_lib._opened_ahead[str(tmp_path / "absent" /
                                                          "libnvrtc.so.13")], OSError)
        with pytest.raises(nvrtc_lib.NvrtcError) as err:
            nvrtc_lib.load()
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "absent" in messages[1]


def test_only_the_first_candidate_is_listed_ahead(tmp_path, fresh, monkeypatch):
    """prepare_open_ahead runs on the thread about to compile: it lists folders until
    it has one candidate, and the search lists the rest only when that one fails."""
    monkeypatch.delenv("CUBEPY_NVRTC_LIBRARY", raising=False)
    first = tmp_path / "first" / "nvidia" / "cu13" / "lib"
    first.mkdir(parents=True)
    (first / "libnvrtc.so.13").write_text("")
    (first / "libnvrtc.so.13.1").write_text("")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "first")])
    listed = []
    real = nvrtc_lib._libraries_in
    monkeypatch.setattr(nvrtc_lib, "_libraries_in",
                        lambda folder: listed.append(folder) or real(folder))
    assert nvrtc_lib.prepare_open_ahead() == [str(first / "libnvrtc.so.13.1")]
    assert listed == [os.path.join(str(tmp_path / "first"), "nvidia/cu13/lib")]
    assert nvrtc_lib.library_candidates()[:2] == [str(first / "libnvrtc.so.13.1"),
                                                  str(first / "libnvrtc.so.13")]
    assert len(listed) > 2  # the full list: every folder


def test_a_library_lacking_the_cubin_calls_is_passed_over(tmp_path, fresh, monkeypatch):
    old = _build(tmp_path / "old", "libnvrtc.so.11", "-DNO_CUBIN")
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(old))
    with pytest.raises(nvrtc_lib.NvrtcError) as err:
        nvrtc_lib.load()
    assert str(old) in str(err.value) and "nvrtcGetCUBIN" in str(err.value)
    with pytest.raises(nvrtc_lib.NvrtcError):  # the failure is kept, not searched again
        nvrtc_lib.load()


def test_the_search_prefers_pip_wheels_newest_first(tmp_path, fresh, monkeypatch):
    site = tmp_path / "site-packages"
    for name in ("libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so.13.1",
                 "libnvrtc-builtins.so.13", "libnvrtc.so"):
        folder = site / ("nvidia/cu13/lib" if "13" in name else "nvidia/cuda_nvrtc/lib")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"")
    toolkit = tmp_path / "toolkit"
    (toolkit / "lib64").mkdir(parents=True)
    (toolkit / "lib64" / "libnvrtc.so.13").write_bytes(b"")
    for var in ("CUBEPY_NVRTC_LIBRARY", "CONDA_PREFIX", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_HOME", str(toolkit))
    monkeypatch.setattr(sys, "path", [str(site)])
    found = nvrtc_lib.library_candidates()
    assert found[:3] == [str(site / "nvidia/cu13/lib/libnvrtc.so.13.1"),
                         str(site / "nvidia/cu13/lib/libnvrtc.so.13"),
                         str(site / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12")]
    assert found.index("libnvrtc.so.13") < found.index(str(toolkit / "lib64/libnvrtc.so.13"))
    assert not any("builtins" in c for c in found)
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", "/only/this/libnvrtc.so.13")
    assert nvrtc_lib.library_candidates() == ["/only/this/libnvrtc.so.13"]


def test_nothing_found_says_what_was_tried(tmp_path, fresh, monkeypatch):
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(tmp_path / "absent" / "libnvrtc.so.13"))
    with pytest.raises(nvrtc_lib.NvrtcError, match="libnvrtc was not found; tried") as err:
        nvrtc_lib.load()
    assert "absent" in str(err.value)
    assert len(err.value.tried) == 1 and err.value.tried[0].startswith(
        str(tmp_path / "absent" / "libnvrtc.so.13") + ": ")
    assert cuda_compile.nvrtc_version() is None and cuda_compile.nvrtc_identity() is None


def test_the_cuda_compiler_uses_it_and_caches_the_cubin(fake_library, fresh, monkeypatch):
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(fake_library))
    monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvrtc")
    source = "__global__ void k(float *x) { x[0] = 1.0f; }"
    compiler = cuda_compile.CudaCompiler("sm_90")
    cubin = compiler.compile(source, fast_math=False)
    assert compiler.last_compiler == "nvrtc-13.0"
    head = cubin.decode().splitlines()
    assert head[:4] == ["CUBIN", "--gpu-architecture=sm_90", "--std=c++17", "--fmad=false"]
    assert cubin.decode().endswith(source)
    # A new process: the library's identity comes from the record, the cubin from disk.
    nvrtc_lib.reset_for_tests()
    cuda_compile.nvrtc_identity.cache_clear()
    again = cuda_compile.CudaCompiler("sm_90")
    assert again.compile(source, fast_math=False) == cubin
    assert again.last_compiler == "disk" and nvrtc_lib._loaded is None  # never loaded
    with pytest.raises(LaunchError, match=r"rejected[\s\S]*the source says #error"):
        again.compile("#error no")


def _options_of(cubin: bytes) -> list[str]:
    """The options the stand-in was given (it echoes them after "CUBIN")."""
    return [line for line in cubin.decode().splitlines()[1:] if line.startswith("--")]


def test_minimal_first_and_again_without_it_when_rejected(tmp_path, fresh, monkeypatch):
    """--minimal where NVRTC has it (12.4 on); a source it rejects that way is compiled
    again without it, so the option never costs a kernel."""
    monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvrtc")
    newer = _build(tmp_path / "12.4", "libnvrtc.so.12", "-DNVRTC_MAJOR=12", "-DNVRTC_MINOR=4")
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(newer))
    assert cuda_compile.nvrtc_minimal()
    source = "__global__ void k() {}"
    plain = cuda_compile.compile_nvrtc(source, "sm_90")
    assert _options_of(plain)[-1] == "--minimal"
    assert _options_of(plain)[:-1] == cuda_compile.nvrtc_options("sm_90", source=source)
    needs_more = "__global__ void k() { cudaStream_t s; }"
    cubin = cuda_compile.compile_nvrtc(needs_more, "sm_90")
    assert _options_of(cubin) == cuda_compile.nvrtc_options("sm_90", source=needs_more)
    assert cubin.decode().endswith(needs_more)
    with pytest.raises(nvrtc_lib.NvrtcError, match="the source says #error"):
        cuda_compile.compile_nvrtc("#error no", "sm_90")  # the second compile's log
    # NVRTC 12.3 has no --minimal: it is never passed.
    nvrtc_lib.reset_for_tests()
    older = _build(tmp_path / "12.3", "libnvrtc.so.12", "-DNVRTC_MAJOR=12", "-DNVRTC_MINOR=3")
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(older))
    assert not cuda_compile.nvrtc_minimal()
    assert "--minimal" not in _options_of(cuda_compile.compile_nvrtc("__global__ void k() {}",
                                                                     "sm_90"))


def test_no_compiler_found_says_where_it_looked(tmp_path, fresh, monkeypatch):
    absent = tmp_path / "absent" / "libnvrtc.so.13"
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(absent))
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvcc
    cuda_compile.nvcc_identity.cache_clear()
    try:
        with pytest.raises(LaunchError) as err:
            cuda_compile.CudaCompiler("sm_90").compile("__global__ void k() {}")
        message = str(err.value)
        assert "no CUDA compiler to compile the kernel for sm_90" in message
        assert "libnvrtc was looked for in 1 place:" in message
        assert f"  {absent}: " in message  # the place, and why it did not load
        assert "nvcc is not on PATH" in message and "CUBEPY_NVRTC_LIBRARY" in message
        monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvcc")
        with pytest.raises(LaunchError, match="NVRTC is not used: CUBEPY_CUDA_COMPILER=nvcc"):
            cuda_compile.CudaCompiler("sm_90").compile("__global__ void k() {}")
    finally:
        cuda_compile.nvcc_identity.cache_clear()  # (found with this test's PATH)


def test_a_cold_process_compiles_without_cuda_python(fake_library, tmp_path):
    """The whole point of ctypes: cuda-python's bindings are not imported to compile
    (its pathfinder may be, to find headers that no pip wheel folder holds)."""
    script = textwrap.dedent("""
        import sys
        from cubepy.runtime import cuda_compile
        cuda_compile.start_loading_nvrtc()
        cubin = cuda_compile.CudaCompiler("sm_90").compile("__global__ void k() {}")
        assert cubin.startswith(b"CUBIN"), cubin
        print(sorted(m for m in sys.modules if m.startswith(("cuda.bindings", "cuda.nvrtc"))))
    """)
    env = {**os.environ, "CUBEPY_NVRTC_LIBRARY": str(fake_library),
           "CUBEPY_CUDA_COMPILER": "nvrtc", "CUBEPY_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_info_names_the_compilers(fake_library, tmp_path, fresh, monkeypatch):
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(fake_library))
    lines = cuda_compile.describe_compilers()
    assert lines[0] == f"NVRTC 13.0 ({os.path.realpath(fake_library)}), used first"
    monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvcc")
    assert cuda_compile.describe_compilers()[0].startswith("NVRTC not used")
    monkeypatch.delenv("CUBEPY_CUDA_COMPILER")
    nvrtc_lib.reset_for_tests()
    monkeypatch.setenv("CUBEPY_NVRTC_LIBRARY", str(tmp_path / "absent.so"))
    assert cuda_compile.describe_compilers()[0] == (
        "NVRTC not found (tried 1 place; CUBEPY_NVRTC_LIBRARY names the library)")
    env = {**os.environ, "CUBEPY_NVRTC_LIBRARY": str(fake_library)}
    out = subprocess.run([sys.executable, "-m", "cubepy", "info"], capture_output=True,
                         text=True, check=True, env=env).stdout
    cuda_part = out.partition("cubepy runtimes:")[2].split("\n  wgpu")[0]
    assert f"compiler: NVRTC 13.0 ({os.path.realpath(fake_library)})" in cuda_part
