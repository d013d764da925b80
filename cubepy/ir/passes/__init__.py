"""The pass pipeline: small named IR -> IR passes, run in order by `run_pipeline`.

Every pass is a pure function Kernel -> Kernel (new trees, the input untouched).
With CUBEPY_VERIFY=1 in the environment the verifier checks the IR after each pass.
"""
from __future__ import annotations

import os
from typing import Callable

from ... import targets
from .. import nodes as ir
from .dce import remove_dead_code
from .fold import fold_constants, specialize_cube_dim
from .legalize import legalize_types
from .needs import (has_async_copies, has_line_accesses, has_lines, has_long_elif_chain,
                    has_unrolled_loop, holds_barrier)

Pass = Callable[[ir.Kernel], ir.Kernel]

# These four passes rewrite what most kernels lack: each is imported only for a kernel that
# has something for it (passes/needs.py), so a small kernel's first compile loads less.


def scalarize_lines(kernel: ir.Kernel) -> ir.Kernel:
    """lines.scalarize_lines, imported for a kernel with lines only."""
    if not has_lines(kernel):
        return kernel
    from .lines import scalarize_lines as scalarize
    return scalarize(kernel)


def unroll_loops(kernel: ir.Kernel) -> ir.Kernel:
    """unroll.unroll_loops, imported for a kernel with a loop to unroll only."""
    if not has_unrolled_loop(kernel):
        return kernel
    from .unroll import unroll_loops as unroll
    return unroll(kernel)


def flatten_elif_chains(kernel: ir.Kernel) -> ir.Kernel:
    """elif_chains.flatten_elif_chains, imported for a kernel with a chain of more than
    MAX_ELIF_CHAIN branches only."""
    if not has_long_elif_chain(kernel):
        return kernel
    from .elif_chains import flatten_elif_chains as flatten
    return flatten(kernel)


def uniform_barriers(kernel: ir.Kernel, syncs: frozenset[str] = frozenset({"sync_cube"}),
                     title: str = "the target") -> ir.Kernel:
    """uniform.uniform_barriers, imported for a kernel with a barrier in `syncs` only."""
    if not holds_barrier(kernel.body, syncs):
        return kernel
    from .uniform import uniform_barriers as check
    return check(kernel, syncs, title)


# Target-independent passes, in order.
PIPELINE: list[tuple[str, Pass]] = [
    ("scalarize_lines", scalarize_lines),  # first: later passes never see a line
    ("specialize_cube_dim", specialize_cube_dim),
    ("fold_constants", fold_constants),
    ("unroll_loops", unroll_loops),
    ("fold_constants", fold_constants),
    ("remove_dead_code", remove_dead_code),
    ("flatten_elif_chains", flatten_elif_chains),  # only chains of more than 64 branches
]


def target_passes(target: str) -> list[tuple[str, Pass]]:
    """The passes legalising the IR for `target`, after the common ones."""
    record = targets.get_target(target)

    def uniform(kernel: ir.Kernel) -> ir.Kernel:
        return uniform_barriers(kernel, record.uniform_syncs, record.title)
    lowering = [] if record.async_copies else [("lower_async_copies", lower_async_copies)]
    if not record.vector_lines:
        lowering.append(("lower_line_access", lower_line_access))
    return lowering + [
        ("uniform_barriers", uniform),
        ("legalize_types", legalize_types(target)),
    ]


def passes_for(target: str | None) -> list[tuple[str, Pass]]:
    """The whole pipeline for `target` (None: the target-independent passes only)."""
    if target is None:
        return list(PIPELINE)
    if target not in targets.target_names():
        raise ValueError(f"unknown target {target!r}: expected one of "
                         f"{targets.target_names()}")
    return PIPELINE + target_passes(target)


def run_pipeline(kernel: ir.Kernel, target: str | None) -> ir.Kernel:
    """Runs the target-independent passes, then (when `target` is given) the target's
    legalisation. Returns a new kernel; `kernel` is left untouched. User mistakes found
    on the way (a non-uniform barrier, f64 in WGSL, ...) raise CompileError."""
    check = os.environ.get("CUBEPY_VERIFY", "") not in ("", "0")
    if check:
        _verify(kernel, "the frontend")
    for name, fn in passes_for(target):
        kernel = fn(kernel)
        if check:
            _verify(kernel, name)
    return kernel


def _verify(kernel: ir.Kernel, after: str) -> None:
    from ..verify import IRVerifyError, verify  # (only under CUBEPY_VERIFY)
    try:
        verify(kernel)
    except IRVerifyError as e:
        raise IRVerifyError(f"after {after}: {e}") from None


def lower_async_copies(kernel: ir.Kernel) -> ir.Kernel:
    """async_copy.lower_async_copies, imported by the targets without async copies
    (wgsl, metal), for a kernel with asynchronous copies only."""
    if not has_async_copies(kernel):
        return kernel
    from .async_copy import lower_async_copies as lower
    return lower(kernel)


def lower_line_access(kernel: ir.Kernel) -> ir.Kernel:
    """line_access.lower_line_access, imported by the targets without vector lines, for
    a kernel with whole-line accesses only."""
    if not has_line_accesses(kernel):
        return kernel
    from .line_access import lower_line_access as lower
    return lower(kernel)


__all__ = ["run_pipeline", "passes_for", "PIPELINE", "specialize_cube_dim", "fold_constants",
           "unroll_loops", "remove_dead_code", "scalarize_lines", "lower_line_access",
           "uniform_barriers", "legalize_types", "flatten_elif_chains",
           "lower_async_copies"]
