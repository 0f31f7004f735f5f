"""Python's builtin `max(values)` for the max mode: right eagerly, but under jit it compares
tracers with `if` and raises. Only the max property fails; the trace properties do not count
calls that raise, and the sum and mean calls show perfect reuse."""
import jax
import jax.numpy as jnp

FAILS = {"max_matches_numpy"}
SCORE = 5
MESSAGE = r"`choose` raised TracerBoolConversionError: a Python `if`"


def choose_reduction(values, mode):
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.mean(values)
    if mode == "max":
        return max(jnp.ravel(values))
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
