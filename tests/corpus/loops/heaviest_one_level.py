"""Part D walks one level down and stops: the equations of a nested jit or of a loop body count, but a
loop inside a jitted helper (two jaxprs deep) is missed."""
import functools

import jax
import jax.extend.core
import jax.numpy as jnp
from jax import lax

FAILS = {"heaviest_line_inside_calls"}
SCORE = 7
MESSAGE = r"the walk stops one level down"


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

import collections
import re

from jax.extend import source_info_util

_LINE = re.compile(r":(\d+)(?::\d+)? \(")


def _line(eqn):
    found = _LINE.search(source_info_util.summarize(eqn.source_info))
    return int(found.group(1)) if found else None


def _subs(eqn):
    for value in eqn.params.values():
        for sub in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(sub, jax.extend.core.ClosedJaxpr):
                yield sub.jaxpr
            elif isinstance(sub, jax.extend.core.Jaxpr):
                yield sub

def heaviest_line(fn, *args):
    per_line = collections.Counter()
    for eqn in jax.make_jaxpr(fn)(*args).jaxpr.eqns:
        if _line(eqn) is not None:
            per_line[_line(eqn)] += 1
        for sub in _subs(eqn):
            per_line.update(_line(inner) for inner in sub.eqns if _line(inner) is not None)
    return per_line.most_common(1)[0][0]
