"""The mean divides by `len(values)`, the number of rows: right for 1-D input only."""
import jax
import jax.numpy as jnp

FAILS = {"mean_matches_numpy"}
SCORE = 5
MESSAGE = r"`choose_reduction` gives the wrong mean"


def choose_reduction(values, mode):
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.sum(values) / len(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
