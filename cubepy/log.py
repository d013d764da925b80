"""The `cubepy` logger: what was compiled and how long it took, compile-cache hits and
misses, launch-plan misses, the runtime chosen.

Nothing is printed unless asked: `CUBEPY_LOG=debug` (or `info`, `warning`) prints the
records on stderr, and an application may configure the "cubepy" logger like any other.
Records are written only off the launch hot path (a launch whose plan is cached logs
nothing), so a disabled logger costs nothing measurable. See docs/ERRORS.md, "Logging".
"""
from __future__ import annotations

import logging
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spec import Specialization

logger = logging.getLogger("cubepy")
logger.addHandler(logging.NullHandler())  # a library never prints unless configured

_LEVELS = ("debug", "info", "warning", "error")


def configure_from_env() -> None:
    """Honours CUBEPY_LOG: a level name prints the cubepy records of that level and above
    on stderr (once, however often it is called)."""
    value = os.environ.get("CUBEPY_LOG", "").strip().lower()
    if not value:
        return
    if value not in _LEVELS:
        print(f"cubepy: CUBEPY_LOG={value!r} is not a level ({', '.join(_LEVELS)}); "
              f"logging stays off", file=sys.stderr)
        return
    if not any(getattr(h, "_cubepy_env", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("cubepy %(levelname)s: %(message)s"))
        handler._cubepy_env = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(value.upper())


def describe(spec: "Specialization") -> str:
    """`Float=f32 n=4 cube_dim=16x16x1 line(x)=4`: a specialisation in one line."""
    parts = [f"{k}={v.name}" for k, v in spec.generics]
    parts += [f"{k}={v!r}" for k, v in spec.comptime]
    parts.append("cube_dim=" + "x".join(map(str, spec.cube_dim)))
    parts += [f"line({k})={v}" for k, v in spec.line_sizes]
    parts += [f"misaligned({k})" for k in spec.misaligned]
    if spec.shared_mem is not None:
        parts.append(f"shared_mem={spec.shared_mem}")
    if not spec.fast_math:
        parts.append("fast_math=False")
    return " ".join(parts)


def elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3
