"""The intrinsic handler registry (frontend/intrinsics.py): every callable a kernel can
call by name has exactly one handler, and a new one is a registration, not an edit of
the call builder."""
from __future__ import annotations

import ast

import pytest

import cubepy
from cubepy import Array, f32
from cubepy.frontend import intrinsics, values
from cubepy.ir import nodes as n
from cubepy.lang import INTRINSICS
from cubepy.math import MATH_INTRINSICS


def test_every_named_callable_has_a_handler():
    keys = set(values.CALLABLE_NAMES.values())
    assert set(INTRINSICS) | {"Line"} <= keys
    assert {f"math.{f}" for f in MATH_INTRINSICS} <= keys
    assert {"builtins.range", "builtins.len", "builtins.round", "builtins.abs"} <= keys
    missing = sorted(k for k in keys if intrinsics.handler_for(k) is None)
    assert missing == []


def test_a_key_gets_one_handler_only():
    with pytest.raises(ValueError, match="two handlers for 'select'"):
        intrinsics.intrinsic("select")(lambda b, node, site: None)


def test_python_math_and_cubepy_math_share_a_handler():
    import math
    assert values.CALLABLE_NAMES[id(math.floor)] == "math.floor"
    assert values.CALLABLE_NAMES[id(cubepy.math.floor)] == "math.floor"
    assert values.short_name("math.floor") == "floor"


def _twice_handler(b, node: ast.Call, site: intrinsics.CallSite):
    b.arity(node, site.name, 1)
    x = b.rvalue(node.args[0])
    return n.Binary(ty=x.ty, op="add", lhs=x, rhs=x, loc=b.ctx.loc)


def twice(x):  # a toy intrinsic: a host-side stand-in the kernel names
    raise TypeError("twice() works only inside a @cube function")


@cubepy.cube(launch=True)
def _uses_twice(a: Array[f32]):
    a[0] = twice(a[0])


def test_a_new_intrinsic_is_one_registration(monkeypatch):
    with pytest.raises(cubepy.CompileError, match="cannot be called in a kernel"):
        _uses_twice.ir()
    monkeypatch.setitem(values.CALLABLE_NAMES, id(twice), "toy.twice")
    monkeypatch.setitem(intrinsics._HANDLERS, "toy.twice", _twice_handler)
    assert "a[0] + a[0]" in _uses_twice.source("cuda", checked=False)


def test_a_known_callable_without_a_handler_is_a_located_error(monkeypatch):
    monkeypatch.delitem(intrinsics._HANDLERS, "select")

    @cubepy.cube(launch=True)
    def k(a: Array[f32]):
        a[0] = cubepy.select(a[0] > f32(0.0), a[0], f32(0.0))

    with pytest.raises(cubepy.CompileError, match=r"select\(\) cannot be called here") as e:
        k.ir()
    assert e.value.lineno == k.fn.__code__.co_firstlineno + 2
