"""Math intrinsics for kernels: `cubepy.math.exp(x)` and friends.

The same names from Python's `math` module are accepted inside kernels too. Each
function works on the float types; `floor`/`ceil`/`round`/`trunc` keep the float type
(round: half to even on every target), `isnan`/`isinf` give bool, and `clamp(x, lo, hi)`
and `fma(a, b, c)` take three arguments of one type.
"""
from __future__ import annotations

from .ir.nodes import MATH_FUNCS
from .lang import Intrinsic

for _name in MATH_FUNCS:
    globals()[_name] = Intrinsic(_name, f"math intrinsic {_name} ({MATH_FUNCS[_name]} args)")

MATH_INTRINSICS: dict[str, Intrinsic] = {name: globals()[name] for name in MATH_FUNCS}

__all__ = list(MATH_FUNCS)
