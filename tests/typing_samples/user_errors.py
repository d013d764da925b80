"""Obvious user mistakes a checker must report: each line whose comment starts with
"error:" must get an error, and no other line may (tests/test_typing.py). Not collected."""
import cubepy
from cubepy import ABSOLUTE_POS, Array, Tensor, cube, f32, u32


@cube(launch=True)
def mistakes(x: Tensor[f32], out: Array[f32]):
    i = ABSOLUTE_POS
    out[i] = "one"  # error: a str stored where an f32 is
    cubepy.atomic_add("out", 0, x[i])  # error: a str where a buffer is
    n: u32 = x.shape("last")  # error: a dimension is an int
    out[i, 0] = x[i]  # error: an Array (1-D) takes one index, not a tuple
    z = cubepy.math.expp(x[i])  # error: no such math function
    cubepy.sync_cube(i)  # error: sync_cube takes no argument


def host(t: Tensor[f32]) -> None:
    """A function annotated with Tensor gets a str."""


host("not a tensor")  # error: a str where a Tensor is annotated
