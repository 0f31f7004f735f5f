"""Correct, unusually: iterative, with a stack, and looks for jaxprs in any list, tuple or dict
of an equation's parameters, not only in tuples."""
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


@jax.jit
def rolled(x, steps):
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)


def count_equations(fn, *args):
    total = 0
    stack = [jax.make_jaxpr(fn)(*args).jaxpr]
    while stack:
        jaxpr = stack.pop()
        total += len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            values = list(eqn.params.values())
            while values:
                value = values.pop()
                if isinstance(value, ClosedJaxpr):
                    stack.append(value.jaxpr)
                elif isinstance(value, Jaxpr):
                    stack.append(value)
                elif isinstance(value, (list, tuple)):
                    values.extend(value)
                elif isinstance(value, dict):
                    values.extend(value.values())
    return int(total)


quantise_jitted = jax.jit(quantise)
