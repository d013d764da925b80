"""The ported kernel gallery (tests/ported/): kernels from Numba CUDA, cupyx.jit, CubeCL
and Triton tests and examples, with their original inputs and checks, on every runtime
present."""
from __future__ import annotations

import pytest

from ported import CASES, cubecl, cupyx_jit, numba_cuda, triton  # noqa: F401 (registers)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ported_kernel(runtime_client, case):
    missing = [t.name for t in case.needs if t not in runtime_client.limits.dtypes]
    if missing:
        pytest.skip(f"{runtime_client.runtime} has no {', '.join(missing)}")
    case.run(runtime_client)


def test_the_gallery_names_its_origins():
    assert len(CASES) >= 30
    for case in CASES:
        project, _, where = case.origin.partition(": ")
        assert project in ("numba/numba", "cupy/cupy", "tracel-ai/cubecl",
                           "triton-lang/triton"), case.origin
        assert where, case.origin
    assert len({c.name for c in CASES}) == len(CASES)
