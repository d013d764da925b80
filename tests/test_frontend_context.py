"""FrontendContext: the one object the statement, expression and call builders share."""
from __future__ import annotations

import pytest

import cubepy
from cubepy import Array, SharedMemory, f32, u32
from cubepy.frontend.build import Builder
from cubepy.frontend.context import FrontendContext


@cubepy.cube(launch=True)
def _copy(x: Array[f32], out: Array[f32]):
    out[cubepy.ABSOLUTE_POS] = x[cubepy.ABSOLUTE_POS]


def _context() -> FrontendContext:
    return FrontendContext.for_kernel(_copy._parse(), _copy._specialization((1, 1, 1), {}))


def test_side_effect_ban_nests_and_is_restored_even_after_an_error():
    ctx = _context()
    with ctx.banning_side_effects("'and'"):
        with ctx.banning_side_effects("a while condition"):
            assert ctx.side_effect_ban == "a while condition"
        assert ctx.side_effect_ban == "'and'"
    assert ctx.side_effect_ban is None
    with pytest.raises(ValueError):
        with ctx.banning_side_effects("a conditional expression"):
            raise ValueError
    assert ctx.side_effect_ban is None


def test_the_shared_name_is_taken_once_and_never_outlives_its_assignment():
    ctx = _context()
    with ctx.naming_shared("tile"):
        assert ctx.take_shared_name() == "tile"
        assert ctx.take_shared_name() is None  # a call nested in the arguments
    with ctx.naming_shared("tile"):
        pass  # the value was not a SharedMemory call
    assert ctx.take_shared_name() is None


def test_fresh_names_follow_the_underscore_n_convention():
    ctx = _context()
    ctx.names.reserve("tmp")
    ctx.names.reserve("tmp_1")
    fresh = ctx.names.fresh
    assert [fresh("tmp"), fresh("tmp"), fresh("old")] == ["tmp_2", "tmp_3", "old"]


def test_builder_keeps_its_state_in_the_context_only():
    builder = Builder(_copy._parse(), _copy._specialization((1, 1, 1), {}))
    assert set(vars(builder)) == {"ctx"}
    kernel = builder.kernel()
    assert kernel.name == "_copy" and len(builder.ctx.blocks) == 1  # every block closed
    assert builder.ctx.side_effect_ban is None and builder.ctx.take_shared_name() is None


def test_shared_memory_named_by_a_nested_call_is_still_refused():
    @cubepy.cube
    def ident(v: u32) -> u32:
        return v

    @cubepy.cube(launch=True)
    def k(out: Array[f32]):
        n = ident(len(SharedMemory(f32, 4)))
        out[0] = f32(n)

    with pytest.raises(cubepy.CompileError, match="must be assigned to a name"):
        k.source("cuda")
