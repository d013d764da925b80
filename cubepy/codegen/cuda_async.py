"""Asynchronous copies (pipeline.memcpy_async, commit, wait) in CUDA C: Ampere's
`cp.async` in inline PTX.

    cp.async.cg.shared.global [smem], [gmem], 16;          // 16 bytes (L2 only)
    cp.async.ca.shared.global [smem], [gmem], 4 or 8;      // smaller copies (L1 too)
    cp.async.commit_group;   cp.async.wait_group N;

The shared address is `__cvta_generic_to_shared` of the element; both addresses are
multiples of the copy's size (shared arrays a copy writes are aligned to 16 bytes, and a
line source is a parameter aligned to its line, else scalarize_lines made the copy a
plain one). In a checked launch the src-size operand gives the bytes of the line inside
the source buffer: cp.async reads only those and fills the rest with zeros, which is what
a checked read gives (0 past the end); a line past the end of the destination is not
copied. Before sm_80 (`__CUDA_ARCH__ < 800`) the copy is the plain copy of
passes/async_copy.py and commit and wait are nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import nodes as n
from ..ir.passes.async_copy import element_index, plain_copy

if TYPE_CHECKING:
    from .clike import CEmitter

ASYNC_ARCH = "#if __CUDA_ARCH__ >= 800"


def copy(em: CEmitter, s: n.AsyncCopy) -> None:
    """One cp.async of the line (with the plain copy for older GPUs)."""
    size, elem_bytes = s.size, s.dst.elem.itemsize
    nbytes = size * elem_bytes
    dst_ok = em.bounds_check(s.dst, element_index(s.dst_line, size, size - 1))
    if dst_ok is not None:
        em.line(f"if ({dst_ok}) {{")
        em.depth += 1
    em.line(ASYNC_ARCH)
    dst = f"&{em.buffer(s.dst)}[{em.expr(element_index(s.dst_line, size, 0))}]"
    first = em.expr(element_index(s.src_line, size, 0))
    src = f"&{em.buffer(s.src)}[{first}]"
    cache = "cg" if nbytes == 16 else "ca"  # .cg (bypassing L1) takes 16 bytes only
    shared = f"static_cast<unsigned>(__cvta_generic_to_shared({dst}))"
    if em.bounds_check(s.src, element_index(s.src_line, size, size - 1)) is None:
        em.line(f'asm volatile("cp.async.{cache}.shared.global [%0], [%1], {nbytes};\\n" '
                f':: "r"({shared}), "l"({src}) : "memory");')
    else:
        length = em.info("buffer_len", s.src.name)
        start = em.fresh("copy_start")
        have = em.fresh("copy_bytes")  # bytes of the line inside the source
        em.line(f"const unsigned {start} = {first};")
        em.line(f"const unsigned {have} = {start} < {length} ? ({length} - {start} < "
                f"{size}u ? {length} - {start} : {size}u) * {elem_bytes}u : 0u;")
        em.line(f'asm volatile("cp.async.{cache}.shared.global [%0], [%1], {nbytes}, %2;\\n" '
                f':: "r"({shared}), "l"({src}), "r"({have}) : "memory");')
    em.line("#else")
    for store in plain_copy(s):
        em.stmt_store(store)
    em.line("#endif")
    if dst_ok is not None:
        em.depth -= 1
        em.line("}")


def commit(em: CEmitter, s: n.AsyncCommit) -> None:
    _ptx(em, "cp.async.commit_group;")


def wait(em: CEmitter, s: n.AsyncWait) -> None:
    _ptx(em, f"cp.async.wait_group {s.pending};")


def _ptx(em: CEmitter, text: str) -> None:
    em.line(ASYNC_ARCH)
    em.line(f'asm volatile("{text}\\n" ::: "memory");')
    em.line("#endif")
