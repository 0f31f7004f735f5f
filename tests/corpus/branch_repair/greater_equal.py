"""`>=` where the lesson says `>`: only the boundary gain 1.0 goes the wrong way."""
import jax
import jax.numpy as jnp

FAILS = {"boundary_gain_one"}
SCORE = 5
MESSAGE = r"treats a gain of exactly 1\.0 as above the threshold"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jnp.where(gain >= 1.0, jnp.sum(values**2), jnp.sum(values))
