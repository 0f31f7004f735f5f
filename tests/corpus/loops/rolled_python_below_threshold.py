"""Keeps the Python loop for short runs, where it thinks unrolling is harmless, and switches to
`lax.fori_loop` at 16 steps: the jaxpr grows with the step count up to the threshold, and the
grader's comparison of 2 and 40 steps alone would not see it (issue 26, class 1)."""
FAILS = {'rolled_jaxpr_does_not_grow'}
SCORE = 7
MESSAGE = 'grows with the step count: 7 equations at 2 steps, 40 at 13 steps.*smaller again at 40 steps.*kept below a threshold'

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


#: Below this, unrolling is cheap (or so the student thought).
UNROLL_BELOW = 16


@functools.partial(jax.jit, static_argnames="steps")
def rolled(x, steps):
    if steps < UNROLL_BELOW:
        for _ in range(steps):
            x = 0.5 * x + jnp.sin(x)
        return x
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)


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


# %% Part D, answered as the reference does (the same in every file that is not about Part D)
import collections as _collections
import re as _re

from jax.extend import source_info_util as _source_info_util
from jax.extend.core import ClosedJaxpr as _ClosedJaxpr, Jaxpr as _Jaxpr

_LINE = _re.compile(r":(\d+)(?::\d+)? \(")


def heaviest_line(fn, *args):
    per_line = _collections.Counter()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            found = _LINE.search(_source_info_util.summarize(eqn.source_info))
            if found:
                per_line[int(found.group(1))] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, _ClosedJaxpr):
                        walk(sub.jaxpr)
                    elif isinstance(sub, _Jaxpr):
                        walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return per_line.most_common(1)[0][0]
