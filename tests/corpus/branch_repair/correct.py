"""The reference behaviour: every property holds."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 6


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v**2), lambda v: jnp.sum(v), values)
