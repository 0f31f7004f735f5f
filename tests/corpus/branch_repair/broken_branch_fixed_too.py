"""The student also "repaired" `broken_branch`, so it no longer shows the failure under jit."""
import jax
import jax.numpy as jnp

FAILS = {"broken_branch_fails_under_jit"}
SCORE = 5
MESSAGE = r"ran without error"


def broken_branch(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v**2), lambda v: jnp.sum(v), values)


repaired = jax.jit(broken_branch)
