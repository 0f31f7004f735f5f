"""`lax.cond` with its branches swapped: squares below the threshold, plain sum above.

The threshold itself sits where it should (1.0 on one side, the next float32 on the other),
so only the value property fails: one mistake, one penalty.
"""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch"}
SCORE = 4
MESSAGE = r"`repaired` gives the wrong result"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v), lambda v: jnp.sum(v**2), values)
