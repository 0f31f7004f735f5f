"""`lax.scan` over `jnp.arange(1, steps)`, counting steps from 1 as in the loop's comment:
one step too few whenever `steps` is at least 1."""
FAILS = {'rolled_matches_loop'}
SCORE = 5
MESSAGE = 'equals the loop run for \\d+ step\\(s\\) instead of'

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
    def step(v, _):
        return 0.5 * v + jnp.sin(v), None

    return lax.scan(step, x, jnp.arange(1, steps))[0]


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
