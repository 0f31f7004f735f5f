"""Counts the ` = ` signs of the printed jaxpr: one per equation line, nested ones included, which
is right until the printer lifts a shared or large sub-jaxpr out of line, printing it once
under a name (`let round = { lambda ... }`) (issue 26, class 5)."""
FAILS = {'counts_nested_equations'}
SCORE = 5
MESSAGE = 'number of ` = ` in the printed jaxpr'

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
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)


def count_equations(fn, *args):
    return str(jax.make_jaxpr(fn)(*args)).count(" = ")


quantise_jitted = jax.jit(quantise)
