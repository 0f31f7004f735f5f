"""`repaired` is just the broken branch under jit: every call raises."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch", "boundary_gain_one", "gain_stays_dynamic"}
SCORE = 1
MESSAGE = r"raised TracerBoolConversionError"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


repaired = jax.jit(broken_branch)
