"""Math intrinsics for kernels: `cubepy.math.exp(x)` and friends.

The same names from Python's `math` module are accepted inside kernels too. Each
function works on the float types; `floor`/`ceil`/`round`/`trunc` keep the float type
(round: half to even on every target), `isnan`/`isinf`/`isfinite` give bool,
`clamp(x, lo, hi)` takes three arguments of one type (float or integer) and `fma(a, b, c)`
three floats. `ldexp(x, e)` takes an `i32` exponent; `frexp(x)` gives `(mantissa,
exponent: i32)` and `modf(x)` `(fraction, integral)`, unpacked by `m, e = frexp(x)`.
`gamma` is `tgamma` (Python's name). Precision per target: docs/LANGUAGE.md, Math.
"""
from __future__ import annotations

from .ir.ops import INTERNAL_MATH, OPS, MathFn
from .lang import Intrinsic

# name -> number of arguments of every public math function (the IR's, less the
# IR-only ones, plus the two-result ones the frontend builds from IR ops)
# (read from the op table, as ir.nodes.MATH_FUNCS is: `import cubepy` leaves the IR nodes
# for first use)
PUBLIC_MATH: dict[str, int] = {**{op.value: OPS[op].arity for op in MathFn
                                  if op.value not in INTERNAL_MATH}, "frexp": 1, "modf": 1}

for _name in PUBLIC_MATH:
    globals()[_name] = Intrinsic(_name, f"math intrinsic {_name} ({PUBLIC_MATH[_name]} args)")

MATH_INTRINSICS: dict[str, Intrinsic] = {name: globals()[name] for name in PUBLIC_MATH}

gamma = globals()["tgamma"]  # Python's math.gamma: the same intrinsic

__all__ = [*PUBLIC_MATH, "gamma"]
