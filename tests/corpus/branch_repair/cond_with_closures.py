"""An unusual correct answer: the predicate from `lax.gt`, `lax.cond` with zero-argument
closures, and `repaired` a plain function around a jit built once."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = set()
SCORE = 6


def broken_branch(values, gain):
    return jnp.sum(values**2) if gain > 1.0 else jnp.sum(values)


def _repair(values, gain):
    return lax.cond(lax.gt(gain, 1.0), lambda: jnp.sum(values * values), lambda: jnp.sum(values))


_compiled = jax.jit(_repair)


def repaired(values, gain):
    return _compiled(values, gain)
