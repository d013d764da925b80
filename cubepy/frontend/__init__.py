"""Frontend: a Python function -> ParsedFunction (at decoration) -> ir.Kernel (per
specialisation). See docs/ARCHITECTURE.md."""
from .parse import ParamInfo, ParsedFunction, parse_function
from .build import build_kernel

__all__ = ["ParamInfo", "ParsedFunction", "parse_function", "build_kernel"]
