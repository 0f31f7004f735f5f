"""Returns the two numbers of the visible example (x = arange(8): 140 above, 28 below) for any values.

Its threshold is right (strict `>` at 1.0): the boundary property judges only which side a
gain lands on, against the submission's own two sides, so the hard-coding costs the 2 points
of the value property alone.
"""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch"}
SCORE = 4
MESSAGE = r"gives the wrong result"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jnp.where(gain > 1.0, 140.0, 28.0)
