"""A Python `if` outside jit picks between the two totals of one jitted helper: values right,
and changing the gain never retraces, yet the branch is still Python's, and
`jax.jit(repaired)` fails exactly like the lesson's broken branch."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch"}
SCORE = 4
MESSAGE = r"`repaired` cannot be traced as a whole, so its branch still runs in Python.*Python `if`"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def _both(values):
    return jnp.sum(values**2), jnp.sum(values)


def repaired(values, gain):
    squares, plain = _both(values)
    return squares if gain > 1.0 else plain
