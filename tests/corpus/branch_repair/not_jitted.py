"""Right numbers from `jnp.where`, but `repaired` was never wrapped in jax.jit."""
import jax.numpy as jnp

FAILS = {"gain_stays_dynamic"}
SCORE = 4
MESSAGE = r"not a jax.jit-compiled function"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


def repaired(values, gain):
    return jnp.where(gain > 1.0, jnp.sum(values**2), jnp.sum(values))
