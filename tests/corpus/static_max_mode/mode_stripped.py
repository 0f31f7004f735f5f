"""Strips whitespace from the mode before dispatching, to be forgiving of `" max"` or a mode read
from a file with its newline (`"sum\n"`): a mode that is not one of the three exactly is quietly
computed instead of raising ValueError (issue 26, class 9). Case is kept, so "Max" still raises."""
import jax
import jax.numpy as jnp

FAILS = {"unknown_mode_raises"}
SCORE = 5
MESSAGE = r"accepted the mode ' max' instead of raising ValueError\. It differs from 'max' only by whitespace"


def choose_reduction(values, mode):
    if not isinstance(mode, str):
        raise ValueError(f"mode must be a string, got {mode!r}")
    mode = mode.strip()
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.mean(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
