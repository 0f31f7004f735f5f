"""Part D reads the function's source and names the body of the loop with the most turns (the
largest number in a `range(...)` or a `fori_loop`/`scan` bound), or the longest line when there is no
loop: turns are not equations, since a staged loop writes its body once."""
import functools

import jax
import jax.extend.core
import jax.numpy as jnp
from jax import lax

FAILS = {"heaviest_line_counts_copies", "heaviest_line_inside_calls"}
SCORE = 6
MESSAGE = r"the loop with the most turns"


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

import inspect


def heaviest_line(fn, *args):
    lines, first = inspect.getsourcelines(fn)
    best, best_turns = None, -1
    for offset, text in enumerate(lines):
        for number in re.findall(r"range\((\d+)\)|fori_loop\(0, (\d+)|length=(\d+)", text):
            turns = int(next(n for n in number if n))
            body = offset + 1 if "range(" in text else offset
            if turns > best_turns:
                best, best_turns = first + body, turns
    if best is None:
        best = first + max(range(len(lines)), key=lambda i: len(lines[i]))
    return best
