"""The squares side is the square of the sum, `jnp.sum(values) ** 2`, not the sum of squares.

One mistake inside one side: the value property fails, the boundary (judged against the
submission's own sides) and the trace property hold."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch"}
SCORE = 4
MESSAGE = r"wrong result for a float32 batch and a gain above the threshold"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v) ** 2, jnp.sum, values)
