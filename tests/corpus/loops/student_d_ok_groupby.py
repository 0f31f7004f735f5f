"""Correct, in a sort-and-group style: a generator collects every summary from all nested jaxprs (lists and tuples opened), parses the line with rpartition(' (') and split(':')[1], sorts the line numbers, groups them with itertools.groupby and takes the max of (count, line). Because the heaviest line is unique, the tie-break by line does not matter. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 2}

WHY = {
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8


# %% cell 1 [imports] (provided, read-only)
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr

# %% cell 4 [slow_functions] (provided, read-only)
@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    """Apply x -> 0.5 * x + sin(x) `steps` times, with a Python loop."""
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    """Round every leaf of `tree` to a multiple of `scale`, eagerly, one operation at a time."""
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)

# %% cell 12 [rolled] (answer)
def _step(i, v):
    return 0.5 * v + jnp.sin(v)


@jax.jit
def rolled(x, steps):
    # steps stays dynamic: one trace for every step count (a while loop)
    return lax.fori_loop(0, steps, _step, x)

# %% cell 16 [count_equations] (answer)
def _count(jaxpr):
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    total += _count(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    total += _count(sub)
    return total


def count_equations(fn, *args):
    return int(_count(jax.make_jaxpr(fn)(*args).jaxpr))

# %% cell 20 [quantise_jitted] (answer)
@jax.jit
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda leaf: jnp.round(leaf / scale) * scale, tree)

# %% cell 26 [heaviest_line] (answer)
import itertools

from jax.extend import source_info_util


def _where(jaxpr):
    """Every equation's summary, nested jaxprs opened wherever an equation holds them."""
    for eqn in jaxpr.eqns:
        yield source_info_util.summarize(eqn.source_info)
        for held in eqn.params.values():
            for j in held if isinstance(held, (list, tuple)) else [held]:
                if isinstance(j, ClosedJaxpr):
                    j = j.jaxpr
                if isinstance(j, Jaxpr):
                    yield from _where(j)


def heaviest_line(fn, *args):
    numbers = sorted(
        int(text.rpartition(" (")[0].split(":")[1])
        for text in _where(jax.make_jaxpr(fn)(*args).jaxpr)
        if text
    )
    groups = [(len(list(g)), line) for line, g in itertools.groupby(numbers)]
    return max(groups)[1]
