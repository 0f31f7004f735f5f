"""The lines of the printed jaxpr: its header and `in` lines are counted, and nested
parameters too."""
FAILS = {'counts_flat_functions', 'counts_nested_equations'}
SCORE = 4
MESSAGE = 'lines of the printed jaxpr'

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
    return len(str(jax.make_jaxpr(fn)(*args)).splitlines())


quantise_jitted = jax.jit(quantise)
