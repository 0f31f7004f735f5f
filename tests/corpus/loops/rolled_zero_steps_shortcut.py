"""Correct, unusually: `steps` static, and zero steps returns `x` at once (an empty program) before
a `lax.scan` takes every other count. The program does not grow with the step count."""
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


@functools.partial(jax.jit, static_argnums=1)
def rolled(x, steps):
    if steps == 0:
        return x

    def step(v, _):
        return 0.5 * v + jnp.sin(v), None

    return lax.scan(step, x, None, length=steps)[0]


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
