"""Misuse of the launch API gives LaunchError naming what is wrong, never an internal
exception; tensors keep their shapes (0-d and empty included)."""
from __future__ import annotations

import numpy as np
import pytest

import cubepy
from cubepy import ABSOLUTE_POS, Array, CubeCount, CubeDim, LaunchError, cube, f32, u32


@cube(launch=True)
def scale(x: Array[f32], n: u32):
    i = ABSOLUTE_POS
    if i < len(x):
        x[i] = f32(i) / f32(n)


@pytest.mark.parametrize("client_arg", [None, "cpu", 3])
def test_launch_needs_a_client(client_arg):
    c = cubepy.client("cpu")
    with pytest.raises(LaunchError, match="must be a client") as info:
        scale.launch(client_arg, CubeCount(1), CubeDim(4), c.zeros(4, f32), 2)
    assert info.value.param == "client"


@pytest.mark.parametrize("bad", [None, [1.0, 2.0], "abcd"])
def test_buffer_parameter_rejects_host_values(runtime_client, bad):
    # numpy arrays are zero-copy arguments on cpu now (tests/test_interop.py)
    with pytest.raises(LaunchError, match=r"parameter 'x' of scale is Array\[\.\.\.\]") as info:
        scale.launch(runtime_client, CubeCount(1), CubeDim(4), bad, 2)
    assert info.value.param == "x"


@pytest.mark.parametrize("bad", ["1", 1.5, (-1,), (1, 2, 3, 4)])  # (0,): a no-op
def test_bad_cube_count(bad):
    c = cubepy.client("cpu")
    with pytest.raises(LaunchError, match="cube_count"):
        scale.launch(c, bad, CubeDim(4), c.zeros(4, f32), 2)


def test_numpy_scalars_bind_scalar_parameters(runtime_client):
    c = runtime_client
    x = c.zeros(4, f32)
    scale.launch(c, CubeCount(1), CubeDim(4), x, np.uint32(4))
    np.testing.assert_allclose(x.numpy(), [0, 0.25, 0.5, 0.75])


def test_zero_dim_and_empty_tensors_keep_their_shape(runtime_client):
    c = runtime_client
    scalar = c.tensor(np.float32(3.5))
    assert scalar.shape == () and scalar.numpy().shape == () and float(scalar.numpy()) == 3.5
    empty = c.zeros((0, 3), f32)
    assert empty.numpy().shape == (0, 3)


@pytest.mark.parametrize("dtype", ["f32", np.float32, np.dtype("int32")])
def test_zeros_accepts_dtype_names_and_numpy_dtypes(dtype):
    t = cubepy.client("cpu").zeros(3, dtype)
    assert t.dtype in (cubepy.f32, cubepy.i32) and t.numpy().tolist() == [0, 0, 0]


def test_unknown_dtype_name_is_a_launch_error():
    with pytest.raises(LaunchError, match="not a cubepy dtype"):
        cubepy.client("cpu").zeros(3, "float128")
