"""Counts the summarize strings themselves, so equations from one line at different columns (for example `jnp.sin(v) + jnp.cos(v)`, or `0.5 * x + jnp.sin(x)`) fall into separate buckets, and it picks the heaviest file:line:column. The notebook says explicitly that all of a line's equations count together, whatever their columns. The self-check passes by luck, because its lines have all their equations at one column. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Groups by line AND column (the full summarize string), against 'all the equations of one line count together, whatever their columns': a line whose equations span several columns loses to a line with fewer equations at a single column.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"heaviest_line_counts_copies", "heaviest_line_inside_calls"}
SCORE = 6


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
_quantise_jit = jax.jit(quantise)  # built once; scale is traced, so a new scale reuses the program


def quantise_jitted(tree, scale):
    return _quantise_jit(tree, scale)

# %% cell 26 [heaviest_line] (answer)
from collections import Counter

from jax.extend import source_info_util


def _all_eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    yield from _all_eqns(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    yield from _all_eqns(sub)


def heaviest_line(fn, *args):
    where = Counter(source_info_util.summarize(e.source_info) for e in _all_eqns(jax.make_jaxpr(fn)(*args).jaxpr))
    del where[""]  # JAX's bookkeeping equations belong to no line
    top, _ = where.most_common(1)[0]  # e.g. "/path/file.py:12:8 (f)"
    return int(top.split(":")[1])
