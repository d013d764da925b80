"""Start-up of a fresh process: `import cubepy` beyond numpy, the default client's choice,
and the first launch of a kernel after the client exists, with a cold and a warm disk
cache.

    python3 benchmarks/bench_startup.py [--runtime cuda|wgpu|cpu[,...]] [--runs 5]
                                        [--name NAME] [--note TEXT] [--out DIR]

Every figure comes from new Python processes, run with bytecode caching on (as a user's
install has it; PYTHONDONTWRITEBYTECODE is removed from the children's environment, and
a throwaway process per runtime first fills __pycache__, its code generator's
included):

- import: `import numpy`, then `import cubepy` (median of --runs processes);
- default client: `cubepy.client()` without a name or $CUBEPY_RUNTIME, what it chose;
- first launch, per runtime: the process imports cubepy and creates the client, then
  times decorating an axpy kernel plus its first launch and a sync. The cold run uses an
  empty cache folder, found as a user's is (`$XDG_CACHE_HOME/cubepy`, not
  $CUBEPY_CACHE_DIR, which would skip the default folder's lookup); the warm runs reuse
  the folder it filled. Each
  child also reports which compiler modules it loaded (frontend, passes, jinja2, NVRTC).
  Every child also times the device compiler's part of its first launch (cuda: the
  CUDA compiler step, NVRTC's load included, or on a warm cache the cubin's lookup;
  wgpu: shader module and pipeline creation, which no cubepy cache skips), so cubepy's
  own share is the rest; of that share, cubepy's frontend, passes and code generation
  (with the compiler modules they import), and the time the cyclic GC took.
- NVRTC alone (cuda): the source and options of the cold launch's compile, compiled by
  NVRTC in fresh processes of their own that hold a CUDA context, as cubepy's does, two
  ways, alternating: cuda-python (its import, then the compile, which loads libnvrtc)
  and ctypes on the library cubepy loaded (its dlopen, then the compile). The ctypes
  way is NVRTC's own compile time, which the cold first launch should exceed by at most
  20 ms; the cuda-python way is what a launcher built on cuda-python pays. And, where
  CuPy is installed, CuPy's RawModule compiling and loading the same source with an
  empty kernel cache: what a launcher taking CUDA source as it is pays. (In a
  process without a CUDA context NVRTC's first compile also sets NVRTC up, about 0.1 s
  on the H200, which a cubepy process has already paid.)

Writes <out>/startup_<name>.json and .md (name: the runtime, or --name).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host import describe_host  # noqa: E402

KERNEL = """@cube(launch=True)
def axpy(a: f32, x: Array[f32], y: Array[f32]):
    i = ABSOLUTE_POS
    if i < len(y):
        y[i] = a * x[i] + y[i]
"""

LAUNCH_CHILD = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32
t2 = time.perf_counter()
client = cubepy.client(sys.argv[1])
x = client.tensor(np.ones(1024, np.float32)); y = client.zeros(1024, f32)
client.sync()
# Where the first launch's time goes (warm runs too: a warm one's compiler phase is the
# cache lookup, or on wgpu the shader module and pipeline, which no cache holds)
phase_ms = {"compiler": 0.0, "frontend": 0.0, "gc": 0.0}
gc_collections = [0]
def timed(owner, name, phase="compiler"):
    inner = getattr(owner, name)
    def wrapper(*args, **kwargs):
        s = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            phase_ms[phase] += 1e3 * (time.perf_counter() - s)
    setattr(owner, name, wrapper)
# cubepy's frontend (the parse, at the decoration, and the IR's build), passes and code
# generation, with the compiler modules they import on a first compile
import cubepy.kernel
timed(cubepy.kernel.CubeFunction, "_parse", "frontend")
timed(cubepy.kernel, "_compile_spec", "frontend")
import gc
gc_start = [0.0]
def on_gc(phase, info):  # the time the cyclic GC takes in the timed part
    if phase == "start":
        gc_start[0] = time.perf_counter()
    elif gc_start[0]:
        phase_ms["gc"] += 1e3 * (time.perf_counter() - gc_start[0])
        gc_collections[0] += 1
if sys.argv[1] == "cuda":  # identity (loads NVRTC), cache lookup and compile
    from cubepy.runtime import cuda_compile
    from cubepy.runtime.cuda_compile import CudaCompiler
    timed(CudaCompiler, "compile")
elif sys.argv[1] == "wgpu":  # naga's translation and the driver's pipeline build
    timed(type(client._device), "create_shader_module")
    timed(type(client._device), "create_compute_pipeline")
if sys.argv[1] == "cuda" and len(sys.argv) > 2:  # cold: keep what NVRTC compiles
    real_nvrtc = cuda_compile.compile_nvrtc
    def keep_source(source, arch, fast_math=True):  # for NVRTC_CHILD to compile again
        with open(KERNEL_FILE + ".cu", "w") as fh:
            fh.write(source)
        with open(KERNEL_FILE + ".opts", "w") as fh:
            minimal = cuda_compile.nvrtc_minimal()
            try:  # as compile_nvrtc's
                options = cuda_compile.nvrtc_options(arch, fast_math, minimal, source=source)
            except TypeError:  # (an older cubepy's, without source: probe_cold_launch --base)
                options = cuda_compile.nvrtc_options(arch, fast_math, minimal)
            fh.write("\n".join(options))
        with open(KERNEL_FILE + ".lib", "w") as fh:  # the libnvrtc cubepy loaded
            fh.write(cuda_compile.nvrtc_lib.load().path)
        return real_nvrtc(source, arch, fast_math=fast_math)
    cuda_compile.compile_nvrtc = keep_source
before = set(sys.modules)
gc.callbacks.append(on_gc)
t3 = time.perf_counter()
exec(compile(open(KERNEL_FILE).read(), KERNEL_FILE, "exec"))
axpy.launch(client, CubeCount(4), CubeDim(256), 2.0, x, y)
client.sync()
t4 = time.perf_counter()
assert float(y.numpy()[0]) == 2.0
loaded = [m for m in sys.modules if m not in before]
maps = open("/proc/self/maps").read() if sys.platform == "linux" else ""
print({"import_numpy_ms": 1e3 * (t1 - t0), "import_cubepy_ms": 1e3 * (t2 - t1),
       "client_ms": 1e3 * (t3 - t2), "first_launch_ms": 1e3 * (t4 - t3),
       "compiler_ms": phase_ms["compiler"], "frontend_ms": phase_ms["frontend"],
       "gc_ms": phase_ms["gc"], "gc_collections": gc_collections[0],
       "modules_loaded": loaded,
       "nvrtc_loaded": "libnvrtc" in maps, "jinja2_imported": "jinja2" in sys.modules,
       "frontend_imported": "cubepy.frontend.build" in loaded})
"""

IMPORT_CHILD = r"""
import time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import cubepy
t2 = time.perf_counter()
print({"import_numpy_ms": 1e3 * (t1 - t0), "import_cubepy_ms": 1e3 * (t2 - t1)})
"""

IMPORT_MODULES_CHILD = r"""
import importlib, sys, time
import numpy, cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, cube, f32
client = cubepy.client(sys.argv[1])
t0 = time.perf_counter()
for name in sys.argv[2:]:
    if name not in sys.modules:
        try:
            importlib.import_module(name)
        except ImportError:  # a module only an extension creates (cython_runtime)
            pass
print({"modules_import_ms": 1e3 * (time.perf_counter() - t0)})
"""

NVRTC_CHILD = r"""
import sys, time
import numpy
import pycuda.driver as drv  # (as in cubepy's process: NVRTC's first compile in a
drv.init()                   # process without a CUDA context sets NVRTC up for ~0.1 s)
context = drv.Device(0).make_context()
t0 = time.perf_counter()
try:
    from cuda.bindings import nvrtc
except ImportError:
    from cuda import nvrtc
t1 = time.perf_counter()
source = open(sys.argv[1], "rb").read()
opts = [o.encode() for o in open(sys.argv[2]).read().splitlines()]
err, prog = nvrtc.nvrtcCreateProgram(source, b"cubepy_kernel.cu", 0, [], [])
(err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
assert int(err) == 0, err
err, size = nvrtc.nvrtcGetCUBINSize(prog)
cubin = b" " * size
(err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
assert int(err) == 0 and size > 0, err
nvrtc.nvrtcDestroyProgram(prog)
t2 = time.perf_counter()
print({"nvrtc_load_ms": 1e3 * (t1 - t0), "nvrtc_compile_ms": 1e3 * (t2 - t1),
       "nvrtc_total_ms": 1e3 * (t2 - t0)})
context.pop()
"""

# NVRTC reached the lightest way: the library cubepy loaded, opened with ctypes.
NVRTC_CTYPES_CHILD = r"""
import ctypes, sys, time
import numpy
import pycuda.driver as drv
drv.init()
context = drv.Device(0).make_context()
t0 = time.perf_counter()
lib = ctypes.CDLL(open(sys.argv[3]).read())
t1 = time.perf_counter()
source = open(sys.argv[1], "rb").read()
opts = [o.encode() for o in open(sys.argv[2]).read().splitlines()]
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"cubepy_kernel.cu", 0,
                              None, None) == 0
options = (ctypes.c_char_p * len(opts))(*opts)
assert lib.nvrtcCompileProgram(prog, len(opts), options) == 0
size = ctypes.c_size_t()
assert lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)) == 0 and size.value > 0
cubin = ctypes.create_string_buffer(size.value)
assert lib.nvrtcGetCUBIN(prog, cubin) == 0
lib.nvrtcDestroyProgram(ctypes.byref(prog))
t2 = time.perf_counter()
print({"nvrtc_load_ms": 1e3 * (t1 - t0), "nvrtc_compile_ms": 1e3 * (t2 - t1),
       "nvrtc_total_ms": 1e3 * (t2 - t0)})
context.pop()
"""

# A launcher that takes CUDA source as it is: CuPy's RawModule compiles the cold launch's
# source with the same options (less the architecture, which CuPy sets itself) through
# its own NVRTC bindings, with an empty kernel cache of its own, and loads the module.
CUPY_CHILD = r"""
import os, re, sys, tempfile, time
os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp()
import numpy
import cupy
cupy.zeros(1).sum()  # the context and CuPy's own start, as a client's
cupy.cuda.Device().synchronize()
source = open(sys.argv[1]).read()
opts = tuple(o for o in open(sys.argv[2]).read().splitlines()
             if not o.startswith("--gpu-architecture"))
name = re.search(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)',
                 source).group(1)
t0 = time.perf_counter()
module = cupy.RawModule(code=source, options=opts, backend="nvrtc")
module.get_function(name)
t1 = time.perf_counter()
print({"cupy_compile_load_ms": 1e3 * (t1 - t0)})
"""

DEFAULT_CHILD = r"""
import time
import cubepy
from cubepy.runtime import default_choice
t0 = time.perf_counter()
client, notes = default_choice()
t1 = time.perf_counter()
print({"default_client_ms": 1e3 * (t1 - t0), "chosen": client.runtime, "why": notes})
"""


def _env(cache: str | None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "CUBEPY_RUNTIME", "CUBEPY_NO_CACHE")}
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("CUBEPY_CACHE_DIR", None)
    if cache is not None:  # found the way a user's default folder is: <XDG_CACHE_HOME>/cubepy
        env["XDG_CACHE_HOME"] = cache
    return env


def tree_child(code: str, args: list[str], tree: str, folder: str, timeout: int = 300,
               **extra_env: str) -> dict:
    """A fresh process running `code` with `args` on the cubepy under `tree` (first on
    the path), in `folder`, in this benchmark's environment with an empty cache folder
    (a cold start); its last line of output, read as JSON. The probes comparing two
    trees in turns run their children through it."""
    env = _env(tempfile.mkdtemp(dir=folder))
    env["PYTHONPATH"] = os.pathsep.join([tree, env["PYTHONPATH"]])
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=folder,
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode:
        raise RuntimeError(f"child {args} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _child(code: str, args: list[str], cache: str | None, tree: str | None = None) -> dict:
    """A fresh process running `code` with `args` (on the cubepy under `tree`, first on
    the path, when given); its last line of output, read as a Python literal."""
    env = _env(cache)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, env["PYTHONPATH"]])
    out = subprocess.run([sys.executable, "-c", code, *args], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def launch_child(runtime: str, cache: str, kernel_file: str, cold: bool = False) -> dict:
    """One fresh process's first launch; `cold` also times the device compiler's part."""
    with open(kernel_file, "w") as fh:  # cubepy reads a kernel's source from its file
        fh.write(KERNEL)
    return _child(LAUNCH_CHILD.replace("KERNEL_FILE", repr(kernel_file)),
                  [runtime] + (["cold"] if cold else []), cache)


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def measure_runtime(runtime: str, runs: int, tmp: str) -> dict:
    cache = os.path.join(tmp, f"cache-{runtime}")
    kernel_file = os.path.join(tmp, "axpy_kernel.py")
    cold = launch_child(runtime, cache, kernel_file, cold=True)
    # The import of the modules the cold launch loaded (the compiler: frontend, IR,
    # passes, code generator, jinja2...), alone in fresh processes of their own.
    # (cubepy's own modules and the libraries it imports to compile; not the device
    # compiler's bindings, whose load compiler_ms already counts)
    modules = [m for m in cold.pop("modules_loaded")
               if m.split(".")[0] in ("cubepy", "jinja2", "markupsafe", "lark")]
    imports = [_child(IMPORT_MODULES_CHILD, [runtime, *modules], cache)["modules_import_ms"]
               for _ in range(3)]
    cold["modules_import_ms"] = statistics.median(imports)
    if runtime == "cuda" and os.path.exists(kernel_file + ".cu"):
        # NVRTC's own compile time: the same source and options compiled by NVRTC alone,
        # in fresh processes (its bindings' import and library load, then the compile).
        # Two ways to reach it, alternating: cuda-python's bindings, and ctypes on the
        # library cubepy loaded (the lightest way, the bound the target is judged by).
        files = [kernel_file + ".cu", kernel_file + ".opts", kernel_file + ".lib"]
        alone = {"cuda_python": [], "ctypes": []}
        for _ in range(runs):
            alone["cuda_python"].append(_child(NVRTC_CHILD, files, None))
            alone["ctypes"].append(_child(NVRTC_CTYPES_CHILD, files, None))
        cold["nvrtc_alone"] = {way: {k: statistics.median(a[k] for a in rows) for k in rows[0]}
                               for way, rows in alone.items()}
        try:  # CuPy, where installed
            cupy = [_child(CUPY_CHILD, files, None)["cupy_compile_load_ms"]
                    for _ in range(runs)]
            cold["cupy_compile_load_ms"] = statistics.median(cupy)
        except SystemExit as e:
            print(f"CuPy's RawModule not measured: {str(e).strip().splitlines()[-1:]}")
    warm = [launch_child(runtime, cache, kernel_file) for _ in range(runs)]
    for w in warm:
        w.pop("modules_loaded")
    return {"cold": cold, "warm_runs": warm,
            "warm_median": {k: _median(warm, k) for k in warm[0]
                            if isinstance(warm[0][k], float)},
            "warm_min": {k: min(w[k] for w in warm) for k in warm[0]
                         if isinstance(warm[0][k], float)},
            "warm_loaded": {k: any(w[k] for w in warm) for k in warm[0]
                            if isinstance(warm[0][k], bool)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default="cuda",
                        help="runtimes to measure, comma-separated (cuda, wgpu, cpu)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--name", default=None, help="the file name's suffix")
    parser.add_argument("--note", default="", help="a sentence describing the machine")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    runtimes = [r.strip() for r in args.runtime.split(",") if r.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        _child(IMPORT_CHILD, [], None)  # fills __pycache__ (bytecode) for what follows
        for runtime in runtimes:  # each runtime's code generator gets its bytecode too
            launch_child(runtime, os.path.join(tmp, f"warm-up-{runtime}"),
                         os.path.join(tmp, "axpy_kernel.py"))
        imports = [_child(IMPORT_CHILD, [], os.path.join(tmp, "unused"))
                   for _ in range(args.runs)]
        defaults = [_child(DEFAULT_CHILD, [], os.path.join(tmp, "unused"))
                    for _ in range(args.runs)]
        per_runtime = {r: measure_runtime(r, args.runs, tmp) for r in runtimes}
    report = {
        "host": describe_host(), "note": args.note, "runs": args.runs,
        "import": {"runs": imports,
                   "numpy_ms": _median(imports, "import_numpy_ms"),
                   "cubepy_beyond_numpy_ms": _median(imports, "import_cubepy_ms"),
                   "cubepy_beyond_numpy_min_ms": min(i["import_cubepy_ms"] for i in imports)},
        "default_client": {"runs": [{k: d[k] for k in ("default_client_ms", "chosen")}
                                    for d in defaults],
                           "median_ms": _median(defaults, "default_client_ms"),
                           "min_ms": min(d["default_client_ms"] for d in defaults),
                           "chosen": defaults[0]["chosen"], "why": defaults[0]["why"]},
        "runtimes": per_runtime,
    }
    text = render(report, runtimes)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"startup_{args.name or '_'.join(runtimes)}")
    with open(base + ".json", "w") as fh:
        json.dump(report, fh, indent=2)
    with open(base + ".md", "w") as fh:
        fh.write(text)


def render(report: dict, runtimes: list[str]) -> str:
    runs = report["runs"]
    imp, dflt = report["import"], report["default_client"]
    lines = [f"# Start-up ({', '.join(runtimes)})", ""]
    if report["note"]:
        lines += [report["note"], ""]
    lines += [f"Host: {report['host']}", "",
              "Fresh processes with bytecode cached (PYTHONDONTWRITEBYTECODE unset); medians "
              f"of {runs} processes.", "",
              f"- `import numpy`: {imp['numpy_ms']:.1f} ms; `import cubepy` beyond it: "
              f"{imp['cubepy_beyond_numpy_ms']:.1f} ms "
              f"(min {imp['cubepy_beyond_numpy_min_ms']:.1f})",
              f"- `cubepy.client()` without a name: {dflt['median_ms']:.1f} ms "
              f"(min {dflt['min_ms']:.1f}), chose "
              f"{dflt['chosen']} ({'; '.join(dflt['why'])})", ""]
    for runtime in runtimes:
        r = report["runtimes"][runtime]
        cold, warm = r["cold"], r["warm_median"]
        lines += [f"## First launch on {runtime}", "",
                  f"| | cold cache | warm cache (median of {runs}) | warm cache (min) |",
                  "|---|---|---|---|"]
        for k in ("import_numpy_ms", "import_cubepy_ms", "client_ms", "first_launch_ms"):
            lines.append(f"| {k} | {cold[k]:.1f} | {warm[k]:.1f} | {r['warm_min'][k]:.1f} |")
        compiler = {"cuda": "NVRTC (or nvcc): identity, cache lookup, compile",
                    "wgpu": "shader module + compute pipeline creation"}.get(runtime)
        if compiler:
            lines.append(f"| of which the compiler: {compiler} | {cold['compiler_ms']:.1f} "
                         f"| {warm['compiler_ms']:.1f} | {r['warm_min']['compiler_ms']:.1f} |")
            overlap = " (NVRTC's load on its thread overlaps it)" if runtime == "cuda" else ""
            lines.append(f"| the rest: cubepy's frontend, code generation, module load "
                         f"and launch{overlap} | "
                         f"{cold['first_launch_ms'] - cold['compiler_ms']:.1f} | | |")
            lines.append(f"| of which importing cubepy's compiler modules "
                         f"(alone, median of 3 processes) | {cold['modules_import_ms']:.1f} "
                         f"| | |")
            lines.append(f"| of which the frontend, passes and code generation, with "
                         f"the compiler modules' import | {cold['frontend_ms']:.1f} | | |")
            lines.append(f"| the cyclic GC during the first launch ({cold['gc_collections']} "
                         f"collections cold) | {cold['gc_ms']:.1f} | {warm['gc_ms']:.1f} "
                         f"| {r['warm_min']['gc_ms']:.1f} |")
        alone = cold.get("nvrtc_alone")
        if alone:
            lines.append(f"| NVRTC alone, fresh processes with a CUDA context (median of "
                         f"{runs}), the same source and options: | | | |")
            ways = (("cuda_python", "cuda-python's import", "the compile (loads libnvrtc)"),
                    ("ctypes", "ctypes, the library's dlopen", "the compile"))
            for way, load, compile_ in ways:
                lines.append(f"| {load} + {compile_} | {alone[way]['nvrtc_load_ms']:.1f} + "
                             f"{alone[way]['nvrtc_compile_ms']:.1f} = "
                             f"{alone[way]['nvrtc_total_ms']:.1f} | | |")
            if "cupy_compile_load_ms" in cold:
                lines.append(f"| CuPy's RawModule on the same source, empty kernel cache: "
                             f"compile (its own NVRTC bindings) + module load | "
                             f"{cold['cupy_compile_load_ms']:.1f} | | |")
            for way, name in (("ctypes", "through ctypes (the target's bound)"),
                              ("cuda_python", "through cuda-python")):
                bound = alone[way]["nvrtc_total_ms"] + 20.0
                verdict = "met" if cold["first_launch_ms"] <= bound else "**missed**"
                lines.append(f"| cold first launch at most NVRTC alone {name} + 20 ms "
                             f"({bound:.1f}) | {verdict} | | |")
        for k, title in (("frontend_imported", "frontend imported by the launch"),
                         ("jinja2_imported", "jinja2 imported"),
                         ("nvrtc_loaded", "NVRTC loaded")):
            lines.append(f"| {title} | {cold[k]} | {r['warm_loaded'][k]} | |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
