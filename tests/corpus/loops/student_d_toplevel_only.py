"""Counts summarize's line only over the top-level equations of make_jaxpr(fn)(*args), never opening the sub-jaxprs of jit, scan or while equations. Parts A-C are correct. Part D is wrong: the notebook says every equation counts, those inside nested jits, scans and loops included. A scan body or a jitted helper's lines are never seen, so a helper called in a loop gives the call line instead of the helper's line. A function that is itself jitted has a single top-level equation with an empty summary, so the Counter is empty and most_common(1)[0] raises IndexError. It passes the notebook's self-check only because neither example holds a heavy sub-jaxpr."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Ignores equations inside sub-jaxprs (jit/scan/while), which the contract counts. Wrong line for a jitted helper called in a loop (gives the call line) and for a scan whose body line is the heaviest. IndexError for a jitted fn (its only top-level equation has no line).",
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
@functools.partial(jax.jit, static_argnames="steps")
def rolled(x, steps):
    """x -> 0.5 * x + sin(x), `steps` times, as one fori_loop (a scan, since steps is static)."""
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)

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


def heaviest_line(fn, *args):
    closed = jax.make_jaxpr(fn)(*args)
    counts = Counter()
    for eqn in closed.jaxpr.eqns:
        where = source_info_util.summarize(eqn.source_info)
        if where:
            counts[int(where.split(":")[1].split()[0])] += 1
    return counts.most_common(1)[0][0]
