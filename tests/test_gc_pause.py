"""The cyclic GC is off while cubepy compiles and comes back as it was (gc_pause.py)."""
from __future__ import annotations

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest

import cubepy
import cubepy.kernel
from cubepy import ABSOLUTE_POS, Array, CompileError, cube, f32
from cubepy.gc_pause import (_immortal_tuples_of_builtin_types, _only_immortal_objects_frozen,
                             gc_paused)


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


@pytest.mark.skipif(not _only_immortal_objects_frozen(), reason="this process froze objects "
                    "(gc.freeze), which the pause leaves frozen, promoting nothing")
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
    """With objects the program froze about (a pre-fork server's), the pause promotes
    nothing (unfreezing would hand them back to the collector): they stay frozen, and
    the survivors meet the next young collection."""
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert not _only_immortal_objects_frozen()
        with gc_paused:
            kept = [[] for _ in range(5000)]
        after = [[] for _ in range(100)]
        assert gc.get_freeze_count() == frozen
        assert collections_started != []
        assert len(kept) == 5000 and len(after) == 100
    finally:
        gc.unfreeze()


_FRESH_PROCESS = """
import gc, sys
from cubepy.gc_pause import _immortal_tuples_of_builtin_types, _only_immortal_objects_frozen
at_start = gc.get_freeze_count()
print(at_start, _immortal_tuples_of_builtin_types(), _only_immortal_objects_frozen())
"""


def test_a_fresh_interpreter_freezes_only_the_builtin_types_immortal_tuples():
    """What the promotion takes to be the interpreter's own frozen objects covers all of
    them in a fresh process (375 on Python 3.12; none on 3.11 and 3.13), so the pause
    promotes there."""
    out = subprocess.run([sys.executable, "-c", _FRESH_PROCESS], capture_output=True,
                         text=True, check=True).stdout.split()
    at_start, immortal, promotes = int(out[0]), int(out[1]), out[2]
    assert at_start <= immortal
    assert promotes == "True"


@pytest.mark.skipif(gc.get_freeze_count() == 0 and sys.version_info[:2] != (3, 12),
                    reason="this Python freezes no objects of its own")
def test_the_interpreters_frozen_objects_return_at_the_next_full_collection():
    """Python 3.12's collector moves the immortal objects it meets to the permanent
    generation (their reference counts say nothing), so the ones a promotion unfroze
    are frozen again by the next full collection: the promotion takes nothing from
    the interpreter for good. (A Python that stopped doing so fails here.)"""
    gc.collect()
    frozen = gc.get_freeze_count()
    assert 0 < frozen <= _immortal_tuples_of_builtin_types()
    with gc_paused:
        kept = [[] for _ in range(5000)]
    assert gc.get_freeze_count() == 0  # promoted, the interpreter's objects with them
    gc.collect()
    assert gc.get_freeze_count() == frozen
    assert len(kept) == 5000
