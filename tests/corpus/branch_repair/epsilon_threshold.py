"""A tolerance on the threshold, `gain > 1.0 + 1e-6`: the next float32 above 1.0 (1.0000001)
lands on the wrong side. The feedback must name the tolerance, not the comparison operator."""
import jax
import jax.numpy as jnp

FAILS = {"boundary_gain_one"}
SCORE = 5
MESSAGE = r"treats 1\.0000001192092896, the next float32 above 1\.0, as not above the threshold.*tolerance"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    return jnp.where(gain > 1.0 + 1e-6, jnp.sum(values**2), jnp.sum(values))
