"""Imports examples/ as modules for tests."""
from __future__ import annotations

import importlib.util
import os

_EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  os.path.join(_EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed_kernel():
    return load_example("fused_matmul_add_relu").fused_matmul_add_relu_kernel
