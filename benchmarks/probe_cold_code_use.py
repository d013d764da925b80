"""How much of the compiler code a cold compile loads it also runs.

    python benchmarks/probe_cold_code_use.py

In a fresh process (run it as one), decorates axpy and generates its CUDA source with an
empty cache, recording every function called (`sys.setprofile`). Then, for each cubepy
module the compile imported, counts its functions (every code object: functions,
methods, lambdas, comprehensions, class bodies) and the bytes `marshal` writes for each
(without the code nested in it, so the sizes add up to the module's), and how many of
them the compile called. The bytes not run bound what loading the compiler's modules
by feature could save: unmarshalling them (the first compile's bytecode read) and
little else. Results: docs/PERFORMANCE.md ("The loading thread's own work").
"""
from __future__ import annotations

import marshal
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_startup import KERNEL  # noqa: E402  (the start-up benchmarks' axpy)


def _codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _own_bytes(code: types.CodeType) -> int:
    """marshal's size of `code` without the code objects nested in it."""
    return len(marshal.dumps(code.replace(co_consts=tuple(
        c for c in code.co_consts if not isinstance(c, types.CodeType)))))


def measure(folder: str) -> dict[str, list[int]]:
    """{module: [functions, bytes, functions called, bytes called]} for the cubepy
    modules a cold compile of axpy to CUDA imports (call it once per process)."""
    os.environ["CUBEPY_CACHE_DIR"] = folder
    import cubepy
    before = set(sys.modules)
    called: set[tuple[str, int, str]] = set()

    def record(frame, event, arg):
        if event == "call":
            code = frame.f_code
            called.add((code.co_filename, code.co_firstlineno, code.co_name))

    path = os.path.join(folder, "axpy_kernel.py")
    with open(path, "w") as fh:
        fh.write(KERNEL)
    scope = {name: getattr(cubepy, name) for name in ("cube", "f32", "Array", "ABSOLUTE_POS")}
    sys.setprofile(record)
    try:
        exec(compile(KERNEL, path, "exec"), scope)
        scope["axpy"].source("cuda")
    finally:
        sys.setprofile(None)
    counts: dict[str, list[int]] = {}
    for name in sorted(m for m in sys.modules if m not in before and m.startswith("cubepy")):
        origin = getattr(sys.modules[name].__spec__, "origin", None) or ""
        if not origin.endswith(".py"):
            continue
        with open(origin) as fh:
            top = compile(fh.read(), origin, "exec")
        row = counts[name] = [0, 0, 0, 0]
        for code in _codes(top):
            if code is top:
                continue
            size = _own_bytes(code)
            row[0] += 1
            row[1] += size
            if (code.co_filename, code.co_firstlineno, code.co_name) in called:
                row[2] += 1
                row[3] += size
    return counts


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        counts = measure(folder)
    total = [sum(row[i] for row in counts.values()) for i in range(4)]
    print(f"{len(counts)} modules: {total[0]} functions, {total[2]} called "
          f"({100 * total[2] / total[0]:.0f}%); {total[1] // 1024} KB of their code, "
          f"{total[3] // 1024} KB called ({100 * total[3] / total[1]:.0f}%)")
    for name, row in sorted(counts.items(), key=lambda kv: kv[1][3] - kv[1][1])[:12]:
        print(f"  {name:40s} {row[0]:4d} functions, {row[2]:4d} called; "
              f"{row[1] // 1024:3d} KB, {row[3] // 1024:3d} KB called")


if __name__ == "__main__":
    main()
