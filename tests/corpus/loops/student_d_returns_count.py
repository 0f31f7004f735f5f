"""Misreads 'return ... the number of the source line that created the most equations' as 'the number of equations of the heaviest line', and returns max(counts.values()). The counting itself is right, the answer is the wrong quantity. It fails the self-check. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Returns the heaviest line's equation count, not its line number.",
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
def count_equations(fn, *args):
    stack = [jax.make_jaxpr(fn)(*args).jaxpr]
    n = 0
    while stack:
        jaxpr = stack.pop()
        n += len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            for p in eqn.params.values():
                items = p if isinstance(p, tuple) else [p]
                stack.extend(s.jaxpr if isinstance(s, ClosedJaxpr) else s
                             for s in items if isinstance(s, (ClosedJaxpr, Jaxpr)))
    return n

# %% cell 20 [quantise_jitted] (answer)
_quantise_jit = jax.jit(quantise)  # built once; scale is traced, so a new scale reuses the program


def quantise_jitted(tree, scale):
    return _quantise_jit(tree, scale)

# %% cell 26 [heaviest_line] (answer)
from collections import Counter

from jax.extend import source_info_util


def heaviest_line(fn, *args):
    counts = Counter()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            s = source_info_util.summarize(eqn.source_info)
            if s:
                counts[s.split(":")[1].split()[0]] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, tuple) else (value,):
                    if isinstance(sub, ClosedJaxpr):
                        walk(sub.jaxpr)
                    elif isinstance(sub, Jaxpr):
                        walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    # the number of equations of the heaviest line
    return max(counts.values())
