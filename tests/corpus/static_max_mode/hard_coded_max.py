"""Max hard-coded to pass the two visible examples ([1, 2, 3] and [-4, -1, -2]).

Each mode is its own property since the modes were split: the other two modes keep their points.
"""
import jax
import jax.numpy as jnp

FAILS = {"max_matches_numpy"}
SCORE = 5
MESSAGE = r"gives the wrong max"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return jnp.where(values.sum() > 0, 3.0, -1.0)
    raise ValueError("unknown mode")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
