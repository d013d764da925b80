"""Start-up cost: `import cubepy` stays light, and `cubepy.client()` skips runtimes that
cheap checks rule out, without importing their packages (docs/PERFORMANCE.md, "Start-up")."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

import cubepy
from cubepy import runtime
from cubepy.runtime import detect

ROOT = Path(__file__).resolve().parents[1]
# The checks of a machine without a GPU, with both packages installed, so that the
# device checks (not a missing package) are what rule the runtimes out.
NO_GPU = """
from cubepy.runtime import detect
detect._installed = lambda module: True
detect._nvidia_driver = lambda: None
detect._gpu_device_node = lambda: None
detect._linux = lambda: True
"""


def _python(code: str, script: Path | None = None) -> str:
    """Runs `code` in a fresh interpreter (from file `script` when given: kernels need a
    source file)."""
    env = {k: v for k, v in os.environ.items() if k != "CUBEPY_RUNTIME"}
    env["PYTHONPATH"] = str(ROOT)
    args = ["-c", textwrap.dedent(code)]
    if script is not None:
        script.write_text(textwrap.dedent(code))
        args = [str(script)]
    done = subprocess.run([sys.executable, *args], capture_output=True,
                          text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_cubepy_does_not_import_heavy_optional_packages():
    out = _python("""
        import sys, cubepy
        print(sorted(m for m in ("jinja2", "lark", "wgpu", "pycuda") if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_import_cubepy_leaves_the_compiler_passes_for_first_use(tmp_path):
    out = _python("""
        import sys, cubepy
        lazy = ("cubepy.frontend.parse", "cubepy.frontend.build", "cubepy.ir.passes",
                "cubepy.frontend.intrinsics", "cubepy.frontend.indexing", "hashlib",
                "statistics", "cubepy.ir.nodes", "json")
        print(sorted(m for m in lazy if m in sys.modules))
        @cubepy.cube
        def double(x: cubepy.Array[cubepy.Float]):
            x[cubepy.ABSOLUTE_POS] = x[cubepy.ABSOLUTE_POS] + x[cubepy.ABSOLUTE_POS]
        print("parse" if "cubepy.frontend.parse" in sys.modules else "")
    """, tmp_path / "kernel.py")
    assert out.split() == ["[]", "parse"]


def test_a_first_cuda_compile_of_a_plain_kernel_leaves_feature_code_unloaded(tmp_path):
    """What a plain kernel does not use is imported at its first use: the verifier and
    printer (CUBEPY_VERIFY), wgsl's lowerings, the frontend's and cuda's code of matrix
    units, async copies, plane operations, bit functions and atomics, json, the Unicode
    database (for names and source beyond ASCII); and the batched dataclasses it never
    instantiates stay unbuilt."""
    out = _python("""
        import os, sys
        os.environ["CUBEPY_NO_CACHE"] = "1"
        os.environ.pop("CUBEPY_VERIFY", None)  # (the test suite turns the verifier on)
        import cubepy
        from cubepy import ABSOLUTE_POS, Array, cube, f32
        from cubepy.ir import batched_dataclass

        @cube(launch=True)
        def axpy(a: f32, x: Array[f32], y: Array[f32]):
            i = ABSOLUTE_POS
            if i < len(y):
                y[i] = a * x[i] + y[i]

        assert "y[i] = a *" in axpy.source("cuda", cube_dim=(64, 1, 1))
        lazy = ["cubepy.ir.verify", "cubepy.ir.printer", "cubepy.ir.passes.async_copy",
                "cubepy.frontend.bits", "cubepy.frontend.matrices",
                "cubepy.frontend.warpgroup", "cubepy.frontend.pipeline_calls",
                "cubepy.codegen.clike_cmma", "cubepy.codegen.clike_wgmma",
                "cubepy.codegen.cuda_async", "cubepy.codegen.cuda_atomics",
                "cubepy.codegen.clike_plane", "cubepy.codegen.clike_bits", "json",
                "unicodedata", "cubepy.ir.passes.lines", "cubepy.ir.passes.uniform",
                "cubepy.ir.passes.unroll", "cubepy.ir.passes.elif_chains",
                "cubepy.codegen.clike_lines", "cubepy.codegen.cuda_cmma_staging"]
        print(sorted(m for m in lazy if m in sys.modules))
        print(sum(c.__module__ == "cubepy.ir.nodes" for c in batched_dataclass._pending))
    """, tmp_path / "plain_kernel.py")
    loaded, unbuilt_nodes = out.split("\n")[:2]
    assert loaded == "[]"
    assert int(unbuilt_nodes) > 10  # of the IR's ~50 node classes


def test_a_first_wgsl_compile_loads_lines_and_math_helpers_only_for_kernels_with_them(
        tmp_path):
    """WGSL's whole-line accesses (wgsl_lines, with the line-access pass) and the math
    library's helper functions (float_helpers) are imported by the first kernel that has
    them, not by a plain kernel's compile."""
    out = _python("""
        import os, sys
        os.environ["CUBEPY_NO_CACHE"] = "1"
        import cubepy
        from cubepy import ABSOLUTE_POS, Array, Line, cube, f32
        import cubepy.math as cm

        @cube(launch=True)
        def axpy(a: f32, x: Array[f32], y: Array[f32]):
            i = ABSOLUTE_POS
            if i < len(y):
                y[i] = a * x[i] + y[i]

        @cube(launch=True)
        def erf_lines(x: Array[Line[f32]], y: Array[Line[f32]]):
            i = ABSOLUTE_POS
            if i < len(y):
                y[i] = x[i] + cm.erf(x[0][0])

        lazy = ["cubepy.codegen.wgsl_lines", "cubepy.ir.passes.line_access",
                "cubepy.codegen.float_helpers"]
        assert "y[i] = a *" in axpy.source("wgsl", cube_dim=(64, 1, 1))
        print(sorted(m for m in lazy if m in sys.modules))
        source = erf_lines.source("wgsl", cube_dim=(64, 1, 1), line_sizes={"x": 4, "y": 4})
        assert "fn cube_erf_f32" in source and "vec4<f32>" in source
        print(sorted(m for m in lazy if m in sys.modules))
    """, tmp_path / "wgsl_kernels.py")
    plain, featured = out.split("\n")[:2]
    assert plain == "[]"
    assert featured == str(sorted(["cubepy.codegen.wgsl_lines", "cubepy.ir.passes.line_access",
                                   "cubepy.codegen.float_helpers"]))


def test_default_client_skips_ruled_out_runtimes_without_importing_them():
    out = _python(NO_GPU + """
import sys, cubepy
c = cubepy.client()
print(c.runtime, "wgpu" in sys.modules, "pycuda" in sys.modules, "cubepy.ir.nodes" in sys.modules)
""")
    assert out.split() == ["cpu", "False", "False", "False"]  # (the IR loads at first compile)


@pytest.fixture
def fake_runtimes(monkeypatch):
    """Fresh client cache; `_create` records the runtimes probed and returns fakes."""
    monkeypatch.delenv("CUBEPY_RUNTIME", raising=False)
    monkeypatch.setattr(runtime, "_CLIENTS", {})
    monkeypatch.setattr(detect, "_installed", lambda module: True)
    monkeypatch.setattr(detect, "_linux", lambda: True)
    probed: list[str] = []
    devices = {"wgpu": SimpleNamespace(lost=None, is_software=False, device="a GPU",
                                       runtime="wgpu")}
    real_create = runtime._create

    def create(kind, index):
        probed.append(kind)
        if kind == "cpu":
            return real_create(kind, index)
        if kind not in devices:
            raise RuntimeError("no device")
        return devices[kind]
    monkeypatch.setattr(runtime, "_create", create)
    return probed, devices


def test_default_client_probes_wgpu_when_a_gpu_device_node_is_there(fake_runtimes,
                                                                   monkeypatch):
    probed, devices = fake_runtimes
    monkeypatch.setattr(detect, "_nvidia_driver", lambda: None)
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: "/dev/dri/renderD128")
    chosen, notes = runtime.default_choice()
    assert probed == ["wgpu"]
    assert chosen is devices["wgpu"]
    assert notes[-1] == "wgpu: chosen (a GPU)"
    assert notes[0].startswith("cuda: skipped, no NVIDIA driver visible")


def test_default_client_drops_a_software_adapter_it_probed(fake_runtimes, monkeypatch):
    probed, devices = fake_runtimes
    devices["wgpu"].is_software = True
    devices["wgpu"].device = "llvmpipe"
    monkeypatch.setattr(detect, "_nvidia_driver", lambda: None)
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: "/dev/dri/renderD128")
    assert cubepy.client().runtime == "cpu"
    assert probed == ["wgpu", "cpu"]
    assert runtime.default_choice()[1][1] == "wgpu: skipped, llvmpipe is a software adapter"


def test_default_client_probes_cuda_when_an_nvidia_driver_is_visible(fake_runtimes,
                                                                    monkeypatch):
    probed, _ = fake_runtimes
    monkeypatch.setattr(detect, "_nvidia_driver", lambda: "/dev/nvidia0")
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: "/dev/nvidia0")
    chosen, notes = runtime.default_choice()
    assert probed == ["cuda", "wgpu"]  # cuda failed to open here; wgpu's fake opened
    assert notes[0] == "cuda: skipped, unavailable: runtime 'cuda' is not available: no device"
    assert chosen.runtime == "wgpu"


def test_missing_packages_rule_runtimes_out(monkeypatch):
    monkeypatch.setattr(detect, "_installed", lambda module: False)
    assert detect.ruled_out("cuda") == "pycuda is not installed"
    assert detect.ruled_out("wgpu") == "wgpu-py is not installed"
    assert detect.ruled_out("cpu") is None


def test_wgpu_is_always_probed_off_linux(monkeypatch):
    monkeypatch.setattr(detect, "_installed", lambda module: True)
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: None)
    monkeypatch.setattr(detect, "_linux", lambda: False)  # Metal / DX12: no cheap test
    assert detect.ruled_out("wgpu") is None


def test_an_explicit_name_is_not_screened(fake_runtimes, monkeypatch):
    probed, _ = fake_runtimes
    monkeypatch.setattr(detect, "_gpu_device_node", lambda: None)
    assert cubepy.client("wgpu").runtime == "wgpu"
    monkeypatch.setenv("CUBEPY_RUNTIME", "wgpu")
    assert cubepy.client().runtime == "wgpu"
    assert probed == ["wgpu"]


def test_info_says_what_was_chosen_and_why():
    out = _python(NO_GPU + """
from cubepy.cli import main
main(["info"])
""")
    assert "default runtime: cpu (cubepy.client() without a name)" in out
    assert "  cuda: skipped, no NVIDIA driver visible" in out
    assert "  wgpu: skipped, no GPU device node" in out
    assert "  cpu: chosen (" in out


def test_info_names_the_runtime_set_by_the_environment(capsys, monkeypatch):
    from cubepy.cli import _print_default_choice
    monkeypatch.setenv("CUBEPY_RUNTIME", "cpu")
    _print_default_choice(runtime.default_choice)
    assert capsys.readouterr().out == "default runtime: cpu (from $CUBEPY_RUNTIME)\n"


# -- the disk cache of compiled specialisations (docs/CACHE.md) --------------------------

KERNEL_MODULE = """
import sys
import numpy as np
import cubepy
from cubepy import ABSOLUTE_POS, Array, Float, cube

SCALE = {scale}


@cube
def helper(a: Float) -> Float:
    return a * Float({factor})


@cube(launch=True)
def axpy(a: Float, x: Array[Float], y: Array[Float]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = helper(a) * x[i] + y[i] * Float(SCALE)


if __name__ == "__main__":
    {prelude}
    client = cubepy.client(sys.argv[1])
    x = client.tensor(np.arange(4, dtype=np.float32))
    y = client.tensor(np.ones(4, np.float32))
    axpy.launch(client, 1, 4, 2.0, {x_arg}, y)
    lazy = ("cubepy.frontend.parse", "cubepy.frontend.build", "cubepy.ir.passes",
            "cubepy.ir.nodes", "cubepy.codegen.clike", "cubepy.codegen.numpy_gen", "jinja2",
            "lark")
    print(y.numpy().tolist())
    print(sorted(m for m in lazy if m in sys.modules))
"""
COMPILERS = ["cubepy.frontend.build", "cubepy.frontend.parse", "cubepy.ir.nodes",
             "cubepy.ir.passes"]


def _launch(tmp_path: Path, runtime: str = "cpu", scale: float = 1.0, factor: float = 3.0,
            prelude: str = "pass", x_arg: str = "x") -> tuple[list, list]:
    """Runs the kernel module above in a fresh process with the cache folder
    tmp_path/cache: (the result, the compiler modules that process loaded)."""
    script = tmp_path / "kernels_mod.py"
    script.write_text(KERNEL_MODULE.format(scale=scale, factor=factor, prelude=prelude,
                                           x_arg=x_arg))
    env = {k: v for k, v in os.environ.items() if k not in ("CUBEPY_RUNTIME",
                                                             "CUBEPY_NO_CACHE")}
    # the repository first; the rest of PYTHONPATH may hold the runtimes' packages
    path = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    env.update(PYTHONPATH=path, CUBEPY_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script), runtime], capture_output=True,
                          text=True, env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result, loaded = done.stdout.strip().splitlines()[-2:]
    import ast
    return ast.literal_eval(result), [m for m in ast.literal_eval(loaded)
                                      if m in COMPILERS or m in ("jinja2", "lark")]


def _compiled_at_all(loaded: list) -> bool:
    return "cubepy.frontend.build" in loaded


@pytest.mark.parametrize("runtime", [
    "cpu", pytest.param("wgpu", marks=pytest.mark.wgpu)])
def test_a_warm_first_launch_loads_no_frontend_passes_or_code_generator(tmp_path, runtime):
    if runtime == "wgpu":
        from conftest import _runtime_present
        if not _runtime_present("wgpu"):
            pytest.skip("no wgpu adapter")
    cold, loaded_cold = _launch(tmp_path, runtime)
    warm, loaded_warm = _launch(tmp_path, runtime)
    assert cold == warm == [1.0, 7.0, 13.0, 19.0]
    assert _compiled_at_all(loaded_cold)
    assert loaded_warm == []  # no parse, frontend, IR, passes, jinja2 or lark


@pytest.mark.wgpu
def test_a_cached_wgsl_kernel_runs_with_one_buffer_bound_twice(tmp_path):
    """Cached WGSL has no re-rendering hook: a buffer bound to a read-only and a written
    parameter at once gets its bindings promoted in the text instead."""
    from conftest import _runtime_present
    if not _runtime_present("wgpu"):
        pytest.skip("no wgpu adapter")
    result, loaded = _launch(tmp_path, "wgpu")
    assert result == [1.0, 7.0, 13.0, 19.0] and _compiled_at_all(loaded)
    result, loaded = _launch(tmp_path, "wgpu", x_arg="y")  # y = 6 * y + y
    assert result == [7.0, 7.0, 7.0, 7.0] and loaded == []


def test_editing_a_called_function_misses_the_cache(tmp_path):
    assert _launch(tmp_path, factor=3.0)[0] == [1.0, 7.0, 13.0, 19.0]
    result, loaded = _launch(tmp_path, factor=5.0)  # helper's body changed
    assert result == [1.0, 11.0, 21.0, 31.0]
    assert _compiled_at_all(loaded)
    assert _launch(tmp_path, factor=5.0)[1] == []  # and the new code is cached in turn


def test_editing_a_global_constant_the_kernel_reads_misses_the_cache(tmp_path):
    assert _launch(tmp_path, scale=1.0)[0] == [1.0, 7.0, 13.0, 19.0]
    result, loaded = _launch(tmp_path, scale=2.0)
    assert result == [2.0, 8.0, 14.0, 20.0]
    assert _compiled_at_all(loaded)


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "kernels").glob("*.rec"))


def test_a_corrupted_entry_is_recompiled_never_run(tmp_path):
    _launch(tmp_path)
    tampered = 0
    for path in _entries(tmp_path):  # generated code that would end the process if run
        data = path.read_bytes()
        path.write_bytes(data.replace(b"def kernel_fn(", b"import os; os._exit(3)\\ndef kernel_fn("))
        tampered += data != path.read_bytes()
    assert tampered == 1
    result, loaded = _launch(tmp_path)
    assert result == [1.0, 7.0, 13.0, 19.0]
    assert _compiled_at_all(loaded)


def test_an_entry_others_may_write_is_refused_and_recompiled(tmp_path):
    _launch(tmp_path)
    for path in _entries(tmp_path):
        os.chmod(path, 0o666)
    result, loaded = _launch(tmp_path)
    assert result == [1.0, 7.0, 13.0, 19.0]
    assert _compiled_at_all(loaded)


def _import_and_launch(tmp_path: Path, change: str = "pass") -> bool:
    """Imports the kernel module in a fresh process after running `change`, launches it
    on cpu; whether that process compiled (ran the frontend)."""
    script = tmp_path / "importer.py"
    script.write_text(textwrap.dedent(f"""
        import sys, cubepy
        {change}
        import kernels_mod
        import numpy as np
        client = cubepy.client("cpu")
        x = client.tensor(np.arange(4, dtype=np.float32))
        y = client.tensor(np.ones(4, np.float32))
        kernels_mod.axpy.launch(client, 1, 4, 2.0, x, y)
        assert y.numpy().tolist() == [1.0, 7.0, 13.0, 19.0]
        print("cubepy.frontend.build" in sys.modules)
    """))
    env = {k: v for k, v in os.environ.items() if k != "CUBEPY_NO_CACHE"}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}",
               CUBEPY_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1] == "True"


@pytest.mark.parametrize("change", [
    "cubepy.__version__ = cubepy.__version__ + '.post1'",
    "import cubepy.spec_cache; cubepy.spec_cache._stamp = '0' * 64",  # the compiler's files
])
def test_a_new_cubepy_version_or_compiler_misses_the_cache(tmp_path, change):
    _launch(tmp_path)  # writes kernels_mod.py
    assert _import_and_launch(tmp_path)  # compiles: a module imported, not run
    assert not _import_and_launch(tmp_path)  # the same again: from the cache
    assert _import_and_launch(tmp_path, change)


def test_the_compiler_stamp_follows_every_compiler_file_and_nothing_else(tmp_path):
    from cubepy.spec_cache import files_stamp
    (tmp_path / "ir").mkdir()
    (tmp_path / "ir" / "nodes.py").write_text("x = 1\n")
    (tmp_path / "grammar.lark").write_text("start: x\n")
    stamps = [files_stamp(str(tmp_path))]
    (tmp_path / "__pycache__").mkdir()  # bytecode, notes, hidden folders: unchanged
    (tmp_path / "__pycache__" / "nodes.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "notes.md").write_text("n\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "a.py").write_text("y = 2\n")
    assert files_stamp(str(tmp_path)) == stamps[0]
    (tmp_path / "ir" / "nodes.py").write_text("x = 22\n")  # edited in place: the size
    stamps.append(files_stamp(str(tmp_path)))
    os.utime(tmp_path / "grammar.lark", ns=(1, 1))  # same size, another time
    stamps.append(files_stamp(str(tmp_path)))
    (tmp_path / "ir" / "passes").mkdir()  # a new file in a new folder
    (tmp_path / "ir" / "passes" / "fold.py").write_text("")
    stamps.append(files_stamp(str(tmp_path)))
    (tmp_path / "ir" / "passes" / "fold.py").rename(tmp_path / "ir" / "passes" / "dce.py")
    stamps.append(files_stamp(str(tmp_path)))
    assert len(set(stamps)) == len(stamps)


def test_a_kernel_reading_a_module_of_the_program_is_not_cached(tmp_path):
    """Attributes of the program's own modules are not tracked: such a kernel compiles in
    every process (and sees an edited value)."""
    (tmp_path / "consts.py").write_text("FACTOR = 3.0\n")
    prelude = "pass"
    for factor, want in ((3.0, [1.0, 7.0, 13.0, 19.0]), (4.0, [1.0, 9.0, 17.0, 25.0])):
        (tmp_path / "consts.py").write_text(f"FACTOR = {factor}\n")
        script = tmp_path / "kernels_mod.py"
        _launch(tmp_path, factor=3.0, prelude=prelude)  # writes the module; fills the cache
        text = script.read_text().replace("import cubepy\n", "import cubepy\nimport consts\n")
        script.write_text(text.replace("Float(3.0)", "Float(consts.FACTOR)"))
        env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}",
                   CUBEPY_CACHE_DIR=str(tmp_path / "cache"))
        env.pop("CUBEPY_NO_CACHE", None)
        for _ in range(2):
            done = subprocess.run([sys.executable, str(script), "cpu"], capture_output=True,
                                  text=True, env=env, timeout=300, cwd=tmp_path)
            assert done.returncode == 0, done.stderr
            result, loaded = done.stdout.strip().splitlines()[-2:]
            assert result == str(want)
            assert "cubepy.frontend.build" in loaded  # compiled each time


def test_cuda_include_folders_are_recorded_and_rechecked(tmp_path, monkeypatch):
    """A warm process keys its cubins without searching for the CUDA headers again (the
    search imports cuda.pathfinder); a recorded folder that lost its headers is searched
    for anew."""
    from cubepy.runtime import cuda_compile
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    first, second = tmp_path / "inc1", tmp_path / "inc2"
    for d in (first, second):
        d.mkdir()
        (d / "cuda_fp16.h").write_text("")
    searched = []

    def candidates(folders):
        def search():
            searched.append(folders)
            return [str(f) for f in folders]
        return search
    monkeypatch.setattr(cuda_compile, "_include_candidates", candidates([first]))
    cuda_compile._include_dirs.cache_clear()
    try:
        assert cuda_compile.cuda_include_dir() == str(first)
        assert cuda_compile.cccl_include_dir() is None
        cuda_compile._include_dirs.cache_clear()  # as a new process
        assert cuda_compile.cuda_include_dir() == str(first)
        assert len(searched) == 1  # from the record
        (first / "cuda_fp16.h").unlink()
        monkeypatch.setattr(cuda_compile, "_include_candidates", candidates([first, second]))
        cuda_compile._include_dirs.cache_clear()
        assert cuda_compile.cuda_include_dir() == str(second)
        assert len(searched) == 2
        assert f"--include-path={second}" in cuda_compile.nvrtc_options("sm_90")
    finally:
        cuda_compile._include_dirs.cache_clear()


def _header_folder(path, headers):
    path.mkdir()
    for h in headers:
        (path / h).parent.mkdir(parents=True, exist_ok=True)
        (path / h).write_text("")
    return path


def test_headers_the_first_folder_lacks_come_from_a_complete_one(tmp_path, monkeypatch):
    """pip's CUDA 13 runtime headers have mma.h but not the crt/mma.h it includes: the
    first folder keeps serving what it has (it matches pip's NVRTC), and a folder with
    the rest is searched after it, so kernels with matrix units compile with NVRTC
    instead of failing over to nvcc. A record written before the extra folder existed
    is searched again."""
    from cubepy.runtime import cuda_compile
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBEPY_NO_CACHE", raising=False)
    everything = cuda_compile.GENERATED_HEADERS
    pip = _header_folder(tmp_path / "pip", [h for h in everything if not h.startswith("crt/")])
    partial = _header_folder(tmp_path / "partial", ["cuda_fp16.h", "crt/mma.h"])
    toolkit = _header_folder(tmp_path / "toolkit", everything)
    folders = [pip, partial, toolkit]
    monkeypatch.setattr(cuda_compile, "_include_candidates", lambda: [str(f) for f in folders])
    try:
        cuda_compile._include_dirs.cache_clear()
        assert cuda_compile.cuda_include_dir() == str(pip)
        assert cuda_compile.extra_include_dir() == str(toolkit)  # partial lacks crt/mma.hpp
        options = cuda_compile.nvrtc_options("sm_90")
        assert options.index(f"--include-path={pip}") < options.index(
            f"--include-path={toolkit}")
        assert f"--include-path={partial}" not in options

        folders = [toolkit, pip]  # a complete first folder needs no other
        cuda_compile._include_dirs.cache_clear()
        key = cuda_compile._include_record_key()
        cuda_compile.COMPILERS.put(key, f"{pip}\0".encode())  # the record's older form
        assert cuda_compile.cuda_include_dir() == str(toolkit)
        assert cuda_compile.extra_include_dir() is None
        assert cuda_compile.COMPILERS.get(key) == f"{toolkit}\0\0".encode()
    finally:
        cuda_compile._include_dirs.cache_clear()


def test_disk_key_tells_apart_every_field_of_a_specialisation():
    """A new field of Specialization must reach the disk cache's key: two specialisations
    differing in any one field compile differently, so they must not share an entry."""
    import dataclasses

    from cubepy import f16, f32
    from cubepy.spec import Specialization
    from cubepy.spec_cache import spec_key

    base = Specialization.make(generics={"F": f32}, comptime={"n": 4}, cube_dim=(64, 1, 1),
                               line_sizes={"x": 4}, shared_mem=None, fast_math=True)
    changed = {"generics": (("F", f16),), "comptime": (("n", 8),), "cube_dim": (32, 1, 1),
               "line_sizes": (("x", 2),), "shared_mem": 1024, "fast_math": False,
               "misaligned": ("x",)}
    assert set(changed) == {f.name for f in dataclasses.fields(Specialization)}
    key = spec_key("f", base, "cuda", True)
    for name, value in changed.items():
        other = dataclasses.replace(base, **{name: value})
        assert spec_key("f", other, "cuda", True) != key, name


def test_import_cubepy_imports_no_tempfile_without_site_hooks():
    """Without the site-packages' .pth hooks (which may import tempfile themselves),
    `import cubepy` loads neither tempfile nor shutil: the disk cache makes its
    temporary files with os.open (cache.make_temp_file)."""
    import site
    env = {k: v for k, v in os.environ.items() if k != "CUBEPY_RUNTIME"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *site.getsitepackages(),
                                         site.getusersitepackages()])
    code = ("import sys, cubepy\n"
            "print(sorted(m for m in ('tempfile', 'shutil') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True,
                          text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_cache_temp_files_are_private_and_exclusive(tmp_path):
    from cubepy import cache
    fd, name = cache.make_temp_file(tmp_path)
    os.close(fd)
    assert os.path.dirname(name) == str(tmp_path)
    assert os.path.basename(name).startswith(".tmp-")
    assert os.stat(name).st_mode & 0o777 == 0o600
    fd2, name2 = cache.make_temp_file(tmp_path)
    os.close(fd2)
    assert name2 != name


def test_a_source_without_includes_needs_no_header_search(tmp_path, monkeypatch):
    """The header folders matter only to a source that includes a header: for one that
    includes none (a plain f32 kernel), NVRTC's options, and so its cubin's key, leave
    them out and the search is not made."""
    from cubepy.runtime import cuda_compile
    monkeypatch.setenv("CUBEPY_CACHE_DIR", str(tmp_path / "cache"))
    inc = _header_folder(tmp_path / "inc", cuda_compile.GENERATED_HEADERS)
    searched = []

    def search():
        searched.append(1)
        return [str(inc)]

    monkeypatch.setattr(cuda_compile, "_include_candidates", search)
    cuda_compile._include_dirs.cache_clear()
    try:
        plain = "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }"
        options = cuda_compile.nvrtc_options("sm_90", source=plain)
        assert not any(o.startswith("--include-path") for o in options)
        assert searched == []
        halves = "#include <cuda_fp16.h>\n" + plain
        assert f"--include-path={inc}" in cuda_compile.nvrtc_options("sm_90", source=halves)
        assert searched == [1]
        assert options == [o for o in cuda_compile.nvrtc_options("sm_90")
                           if not o.startswith("--include-path")]
        # The compile: no search for the plain source, and NVRTC given the options the
        # cubin's key was made of.
        cuda_compile._include_dirs.cache_clear()
        searched.clear()
        given = []
        monkeypatch.setattr(cuda_compile, "nvrtc_identity", lambda: "nvrtc|fake")
        monkeypatch.setattr(cuda_compile, "nvrtc_version", lambda: "nvrtc-fake")
        monkeypatch.setattr(cuda_compile, "compile_nvrtc", lambda src, arch, fast_math: (
            given.append(cuda_compile.nvrtc_options(arch, fast_math, source=src))
            or b"\x7fELF"))
        monkeypatch.setenv("CUBEPY_CUDA_COMPILER", "nvrtc")
        compiler = cuda_compile.CudaCompiler("sm_90")
        assert compiler.compile(plain) == b"\x7fELF"
        assert searched == [] and given == [options]
        key = compiler.key(plain, "nvrtc|fake", options)
        assert cuda_compile.CUBINS.get(key) == b"\x7fELF"
    finally:
        cuda_compile._include_dirs.cache_clear()
