"""`miss_cause` returns "new shape" whatever the explanation says."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"names_function_misses", "names_argument_misses"}
SCORE = 5


@jax.jit
def scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


@functools.partial(jax.jit, static_argnames=("steps",))
def smooth(x, steps):
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


@jax.jit
def clipped_mean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))


def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    return "new shape"
