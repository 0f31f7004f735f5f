"""Mean as sum over the length of the first axis: right for vectors, wrong for 2-D arrays.

Each mode is its own property since the modes were split: the other two modes keep their points.
"""
import jax

FAILS = {"mean_matches_numpy"}
SCORE = 5
MESSAGE = r"gives the wrong mean"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.sum() / values.shape[0]
    if mode == "max":
        return values.max()
    raise ValueError("unknown mode")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
