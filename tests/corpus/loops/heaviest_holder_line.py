"""Part D gives every equation inside a sub-jaxpr to the line of the equation holding it: a jitted
helper's whole body is charged to the line that calls it, not to the helper's own lines (where the
dump puts it), and a fori_loop body written as a function of its own to the fori_loop's line."""
import functools

import jax
import jax.extend.core
import jax.numpy as jnp
from jax import lax

FAILS = {"heaviest_line_counts_copies", "heaviest_line_inside_calls"}
SCORE = 6
MESSAGE = r"it is where those equations\s+were asked for"


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

    def walk(jaxpr, holder):
        for eqn in jaxpr.eqns:
            line = holder if holder is not None else _line(eqn)
            if line is not None:
                per_line[line] += 1
            for sub in _subs(eqn):
                walk(sub, line)

    walk(jax.make_jaxpr(fn)(*args).jaxpr, None)
    return per_line.most_common(1)[0][0]
