"""Moved to cubepy/codegen/numpy_gen.py (the numpy code generator is a target like the
others); this module re-exports it for code that imports the old path."""
from ..codegen.numpy_gen import (CpuProgram, _wrap_int, compile_kernel,  # noqa: F401
                                 generate_numpy, load_program)
