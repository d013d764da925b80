"""Strict floats: what `@cube(launch=True, fast_math=False)` changes in a generated record.

By default (`fast_math=True`, as in CubeCL and Triton) a GPU compiler may contract
`a * b + c` into a fused multiply-add, and a WGSL driver may reassociate. With
`fast_math=False` each target is asked to evaluate a float chain as written, rounding
every operation:

- cuda: the record says `fast_math=False` and the runtime compiles with `--fmad=false`
  (cubepy/runtime/cuda_compile.py); + - * / and sqrt are then IEEE operations one by one,
  the cpu runtime's numpy result bit for bit. The source's second line says so, for a
  reader who compiles it elsewhere.
- metal: the source asks for safe math with MSL 3.2's pragmas, and its header tells a
  host program to compile with `MTLCompileOptions.mathMode = .safe` (older systems:
  `fastMathEnabled = false`), which the record's `fast_math` flag also says.
- wgsl: WGSL has no way to forbid contraction or reassociation; the source says so and
  the driver decides (docs/LANGUAGE.md, "Floats").
- cpu: numpy already rounds every operation in program order.

The generated body is the same in both modes (the code generators use no approximate
intrinsics such as `__expf` in either), so this is a header and a flag.
"""
from __future__ import annotations

import dataclasses

from .compiled import Compiled

_HEADERS = {
    "cuda": ("// fast_math=False: compile with --fmad=false (no multiply-add contraction), "
             "as the cuda runtime does",),
    "metal": ("// fast_math=False: compile with MTLCompileOptions.mathMode = .safe "
              "(before MSL 3.2: fastMathEnabled = false)",
              "#if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 320",
              "#pragma METAL fp math_mode(safe)",
              "#pragma METAL fp contract(off)",
              "#endif"),
    "wgsl": ("// fast_math=False: WGSL cannot forbid multiply-add contraction or "
             "reassociation; the driver decides",),
}


def with_header(source: str, target: str) -> str:
    """`source` with the strict-float lines of `target` after its first line (the
    first line keeps naming the kernel and its cube dim)."""
    lines = _HEADERS.get(target)
    if not lines:
        return source
    first, newline, rest = source.partition("\n")
    return first + newline + "\n".join(lines) + "\n" + rest


def strict_floats(compiled: Compiled) -> Compiled:
    """The record of a `fast_math=False` kernel: flagged, its source headed."""
    render = compiled.render
    if render is not None:
        inner = render
        render = lambda promote: with_header(inner(promote), compiled.target)  # noqa: E731
    return dataclasses.replace(compiled, source=with_header(compiled.source, compiled.target),
                               render=render, fast_math=False)
