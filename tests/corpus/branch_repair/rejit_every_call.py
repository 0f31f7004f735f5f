"""A jitted lambda built inside every call: right answers, but nothing is reused between calls."""
import jax
import jax.numpy as jnp

FAILS = {"gain_stays_dynamic"}
SCORE = 4
MESSAGE = r"It traces on every call"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


def repaired(values, gain):
    return jax.jit(lambda v, g: jax.lax.cond(g > 1.0, lambda u: jnp.sum(u**2), jnp.sum, v))(values, gain)
