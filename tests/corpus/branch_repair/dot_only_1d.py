"""The sum of squares as `jnp.dot(values, values)`, right only for 1-D input (2-D raises).

One mistake, one penalty: the value property fails on a 2-D example; the trace property
does not count calls that raise, and its 1-D calls show perfect trace reuse."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch"}
SCORE = 4
MESSAGE = r"`repaired` raised TypeError"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.dot(v, v), jnp.sum, values)
