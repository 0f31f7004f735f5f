"""Recursive, but an equation that holds a sub-jaxpr is replaced by its contents instead of
counted as well."""
FAILS = {'counts_nested_equations'}
SCORE = 5
MESSAGE = 'hold a sub-jaxpr .* were not counted'

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
    def count(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            subs = [v for v in eqn.params.values() if isinstance(v, jax.extend.core.ClosedJaxpr)]
            subs += [b for v in eqn.params.values() if isinstance(v, tuple) for b in v
                     if isinstance(b, jax.extend.core.ClosedJaxpr)]
            total += sum(count(s.jaxpr) for s in subs) if subs else 1
        return total

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


quantise_jitted = jax.jit(quantise)
