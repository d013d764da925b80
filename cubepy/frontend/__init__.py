"""Frontend: a Python function -> ParsedFunction (at decoration) -> ir.Kernel (per
specialisation). See docs/ARCHITECTURE.md."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build import build_kernel
    from .parse import ParamInfo, ParsedFunction, parse_function

# The names below load their module at first use (PEP 562), so that importing the light
# frontend.intrinsics (kernel.py registers @cube with it) does not load parse and build.
_LAZY = {"ParamInfo": "parse", "ParsedFunction": "parse", "parse_function": "parse",
         "build_kernel": "build"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ParamInfo", "ParsedFunction", "parse_function", "build_kernel"]
