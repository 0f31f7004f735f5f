"""Right numbers from `jnp.where`, but `repaired` was never wrapped in jax.jit."""
import jax.numpy as jnp

FAILS = {"gain_stays_dynamic"}
SCORE = 4
MESSAGE = r"JAX traced none of your code: it is not compiled with `jax\.jit`"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


def repaired(values, gain):
    return jnp.where(gain > 1.0, jnp.sum(values**2), jnp.sum(values))
