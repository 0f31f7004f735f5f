"""Correct, unusually: `rolled` is a plain function that calls one jit built at top level, passing
`steps` by keyword every time (the keyword is always the same, so one cache key per signature)."""
FAILS = set()
SCORE = 6

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


def _body(i, v):
    return 0.5 * v + jnp.sin(v)


@jax.jit
def _rolled(x, *, steps):
    return lax.fori_loop(0, steps, _body, x)


def rolled(x, steps):
    return _rolled(x, steps=steps)


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
