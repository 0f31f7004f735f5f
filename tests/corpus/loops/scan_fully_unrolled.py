"""`lax.scan` with `unroll=True` (read as "faster"): the jaxpr holds one scan, but XLA is told
to unroll every step, so the compiled program grows anyway."""
FAILS = {'rolled_jaxpr_does_not_grow'}
SCORE = 5
MESSAGE = 'unroll every one of its 40 steps'

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
    return lax.scan(lambda v, _: (0.5 * v + jnp.sin(v), None), x, None, length=steps, unroll=True)[0]


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
