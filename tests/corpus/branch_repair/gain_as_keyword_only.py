"""`repaired` takes gain as a keyword-only argument, so the contract's positional call fails."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch", "boundary_gain_one", "gain_stays_dynamic"}
SCORE = 1
MESSAGE = r"`repaired` raised TypeError"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def _repaired(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v**2), jnp.sum, values)


def repaired(values, *, gain):
    return _repaired(values, gain)


repaired.trace = _repaired.trace
repaired.lower = _repaired.lower
