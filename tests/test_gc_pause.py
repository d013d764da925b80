"""The cyclic GC is off while cubepy compiles and comes back as it was (gc_pause.py)."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import cubepy
import cubepy.kernel
from cubepy import ABSOLUTE_POS, Array, CompileError, cube, f32
from cubepy.gc_pause import gc_paused


def _axpy():
    @cube(launch=True)
    def axpy(a: f32, x: Array[f32], y: Array[f32]):
        i = ABSOLUTE_POS
        if i < len(y):
            y[i] = a * x[i] + y[i]
    return axpy


@pytest.fixture
def gc_seen_while_compiling(monkeypatch):
    """Whether the collector was on at each entry to the parser and to the build of a
    specialisation (with the disk cache off, so that both run)."""
    monkeypatch.setenv("CUBEPY_NO_CACHE", "1")
    seen: list[bool] = []
    for name in ("parse_function", "_compile_spec"):
        real = getattr(cubepy.kernel, name)

        def spy(*args, real=real, **kwargs):
            seen.append(gc.isenabled())
            return real(*args, **kwargs)
        monkeypatch.setattr(cubepy.kernel, name, spy)
    return seen


def test_a_compile_runs_with_the_collector_off_and_turns_it_back_on(
        gc_seen_while_compiling):
    assert gc.isenabled()
    client = cubepy.client("cpu")
    y = client.tensor(np.ones(64, np.float32))
    _axpy().launch(client, cubepy.CubeCount(1), cubepy.CubeDim(64), 2.0,
                   client.tensor(np.ones(64, np.float32)), y)
    assert gc_seen_while_compiling == [False, False]  # the parse, the build
    assert gc.isenabled()
    assert np.array_equal(y.numpy(), np.full(64, 3.0, np.float32))


def test_a_collector_turned_off_by_the_user_stays_off(gc_seen_while_compiling):
    gc.disable()
    try:
        _axpy().source("cuda", cube_dim=(64, 1, 1))
        assert gc_seen_while_compiling == [False, False]
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_compile_error_turns_the_collector_back_on(gc_seen_while_compiling):
    with pytest.raises(CompileError, match="undefined_name"):
        @cube(launch=True)
        def broken(y: Array[f32]):
            y[0] = undefined_name  # noqa: F821 (the error under test)

        broken.source("cuda")
    assert gc_seen_while_compiling and not any(gc_seen_while_compiling)  # raised paused
    assert gc.isenabled()


def test_pauses_nest_across_threads():
    """The collector comes back when the last of two overlapping compiles ends."""
    inside = threading.Barrier(2)
    first_left = threading.Event()
    states: dict[str, bool] = {}

    def first() -> None:
        with gc_paused:
            inside.wait()
        first_left.set()

    def second() -> None:
        with gc_paused:
            inside.wait()
            first_left.wait()
            states["after the first left"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert states == {"after the first left": False}
    assert gc.isenabled()


@pytest.fixture
def collections_started():
    started: list[int] = []

    def on_gc(phase, info):
        if phase == "start":
            started.append(info["generation"])
    gc.callbacks.append(on_gc)
    yield started
    gc.callbacks.remove(on_gc)


@pytest.mark.skipif(gc.get_freeze_count() > 0, reason="the interpreter holds frozen objects "
                    "(Python 3.12 starts with some), so the pause leaves them frozen and "
                    "promotes nothing")
def test_what_a_pause_leaves_alive_is_not_scanned_by_the_next_young_collection(
        collections_started):
    """Objects that survive a pause move to the oldest generation unscanned, so the
    allocations right after it set off no collection (they would: 5000 survivors are
    far past the young generation's threshold)."""
    with gc_paused:
        kept = [[] for _ in range(5000)]
    after = [[] for _ in range(100)]
    assert collections_started == []
    assert len(kept) == 5000 and len(after) == 100
    assert gc.is_tracked(kept[0])


def test_a_light_pause_leaves_young_objects_young():
    """A pause that left fewer objects than a young collection's threshold (a compile
    read from the disk cache) promotes nothing: the program's young objects stay in the
    young generation, on their normal schedule."""
    young = [[]]
    with gc_paused:
        pass
    assert any(o is young[0] for o in gc.get_objects(generation=0))


def test_objects_frozen_by_the_process_stay_frozen(collections_started):
    """With frozen objects about, the pause promotes nothing (unfreezing would hand them
    back to the collector): they stay frozen, and the survivors meet the next young
    collection."""
    frozen_before = gc.get_freeze_count()
    if frozen_before == 0:  # (where the interpreter froze some itself, those will do)
        gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with gc_paused:
            kept = [[] for _ in range(5000)]
        after = [[] for _ in range(100)]
        assert gc.get_freeze_count() == frozen
        assert collections_started != []
        assert len(kept) == 5000 and len(after) == 100
    finally:
        if frozen_before == 0:
            gc.unfreeze()
