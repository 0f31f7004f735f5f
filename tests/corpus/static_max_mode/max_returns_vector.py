"""Max along axis 0 only: a vector for 2-D input instead of one number.

Each mode is its own property since the modes were split: the other two modes keep their points.
"""
import jax

FAILS = {"max_matches_numpy"}
SCORE = 5
MESSAGE = r"it should return a single number"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max(axis=0)
    raise ValueError("unknown mode")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
