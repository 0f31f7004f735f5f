"""Runs the loop on each row with `jax.vmap`, which is right for 1-d and 2-d `x` but raises for a
0-d `x`, which has no axis to map over; the notebook says any shape (issue 26, class 3)."""
FAILS = {'rolled_matches_loop'}
SCORE = 5
MESSAGE = 'That `x` is 0-d \\(a single number, shape \\(\\)\\)'

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr


@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


@jax.jit
def rolled(x, steps):
    def one(v):
        return lax.fori_loop(0, steps, lambda i, u: 0.5 * u + jnp.sin(u), v)

    return jax.vmap(one)(x)


def count_equations(fn, *args):
    def count(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            total += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, ClosedJaxpr):
                        total += count(sub.jaxpr)
                    elif isinstance(sub, Jaxpr):
                        total += count(sub)
        return total

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


quantise_jitted = jax.jit(quantise)
