"""`lax.cond` with its branches swapped: squares below the threshold, plain sum above."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch", "boundary_gain_one"}
SCORE = 3
MESSAGE = r"`repaired` gives the wrong result"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v), lambda v: jnp.sum(v**2), values)
