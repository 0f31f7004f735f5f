"""Keyword matching that looks for the weak-type marker first: when a dtype changes and a weak type
changes too (or an int scalar replaces a float array), it says "weak type" instead of "new dtype"."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"names_argument_misses"}
SCORE = 6
MESSAGE = r"named the cause 'weak type', but JAX's explanation says 'new dtype'"


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
    if "never seen function" in explanation:
        return "redefined function" if "re-defined" in explanation else "new function"
    if "Static(" in explanation:
        return "new static value"
    if "pytree" in explanation:
        return "new structure"
    if "weak_type" in explanation:
        return "weak type"
    if re.search(r"now (\w+)\[.*and before \1\[", explanation):
        return "new shape"
    return "new dtype"
