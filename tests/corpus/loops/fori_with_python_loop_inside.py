"""`fori_loop` over the steps, but the old Python loop left inside the body: `steps` squared
steps, and a jaxpr that grows."""
FAILS = {'rolled_jaxpr_does_not_grow', 'rolled_matches_loop'}
SCORE = 4
MESSAGE = 'does not give what the Python loop gives'

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


@functools.partial(jax.jit, static_argnames="steps")
def rolled(x, steps):
    def body(i, v):
        for _ in range(steps):
            v = 0.5 * v + jnp.sin(v)
        return v

    return lax.fori_loop(0, steps, body, x)


def count_equations(fn, *args):
    def count(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            total += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, jax.extend.core.ClosedJaxpr):
                        total += count(sub.jaxpr)
                    elif isinstance(sub, jax.extend.core.Jaxpr):
                        total += count(sub)
        return total

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


quantise_jitted = jax.jit(quantise)
