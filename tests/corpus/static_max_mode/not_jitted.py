"""`choose` is `choose_reduction` itself, never compiled: right values, no trace to reuse.

Eager `jnp` calls trace small programs of JAX's own (`_reduce_sum`, `_reduce_max`...); they
must not count as traces of the student's code, or this would pass the trace checks."""
import jax.numpy as jnp

FAILS = {"values_only_no_retrace", "traces_bounded_by_signatures"}
SCORE = 4
MESSAGE = r"JAX traced none of your code: it is not compiled with `jax\.jit`"


def choose_reduction(values, mode):
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.mean(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


choose = choose_reduction
