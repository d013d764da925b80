"""benchmarks/probe_nvrtc_threads.py compiles matmul_tc's config sources, each round's
made unique so that NVRTC keeps nothing from one round for the next (the compiles need
a GPU machine; the sources are made anywhere)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def test_every_config_has_a_source_and_every_round_its_own_copy():
    from benchmarks import probe_nvrtc_threads as probe
    from benchmarks.kernels import matmul_tc
    texts = probe.sources()
    assert len(texts) == len(matmul_tc.CONFIGS) and len(set(texts)) == len(texts)
    assert all("mma.h" in t for t in texts)
    first = [probe.unique(t, f"0_{i}") for i, t in enumerate(texts)]
    second = [probe.unique(t, f"1_{i}") for i, t in enumerate(texts)]
    assert not set(first) & set(second) and all(a.startswith(t) for a, t in zip(first, texts))
