"""Correct, unusually: a table of reductions and a membership test before the lookup. A mode
padded with whitespace is not a key of the table, so it raises, as the notebook asks; the
message names the mode with its padding visible (`repr`)."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 6

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}


def choose_reduction(values, mode):
    try:
        known = mode in REDUCTIONS
    except TypeError:  # an unhashable mode (a list) is not a mode either
        known = False
    if not known:
        raise ValueError(f"unknown reduction mode {mode!r}; choose one of {sorted(REDUCTIONS)}")
    return REDUCTIONS[mode](values)


choose = jax.jit(choose_reduction, static_argnames=("mode",))
