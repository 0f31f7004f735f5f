"""Recursive through the parameters named `jaxpr` and `body_jaxpr` only: a `cond`'s branches
and a `while`'s `cond_jaxpr` are missed."""
FAILS = {'counts_nested_equations'}
SCORE = 5

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
        total = len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            for key in ("jaxpr", "body_jaxpr"):
                if key in eqn.params:
                    total += count(eqn.params[key].jaxpr)
        return total

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


quantise_jitted = jax.jit(quantise)
