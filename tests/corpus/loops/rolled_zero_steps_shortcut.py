"""Correct, unusually: `steps` static, and zero steps returns `x` at once (an empty program) before
a `lax.scan` takes every other count. The program does not grow with the step count."""
FAILS = set()
SCORE = 8

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
