"""`len(jaxpr.eqns)`: the top-level count, while the notebook asks for the recursive one."""
FAILS = {'counts_nested_equations'}
SCORE = 5
MESSAGE = 'That is the top-level count'

import functools

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax import lax


@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


@jax.jit
def rolled(x, steps):
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)


def count_equations(fn, *args):
    return len(jax.make_jaxpr(fn)(*args).jaxpr.eqns)


quantise_jitted = jax.jit(quantise)
