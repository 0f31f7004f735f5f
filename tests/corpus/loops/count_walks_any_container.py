"""Correct, unusually: iterative, with a stack, and looks for jaxprs in any list, tuple or dict
of an equation's parameters, not only in tuples."""
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
