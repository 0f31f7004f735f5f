"""Recurses into sub-jaxprs but gives every equation inside a jit/scan/while to the line of the equation that holds it, that is to the call line. A jitted helper's equations go to the line in fn that calls it, and a loop body's to the fori_loop/scan line. The notebook says an equation belongs to the line summarize names for it, which for a helper is the helper's own line. It passes the self-check, where the fori body has only 2 equations. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Gives a helper's (and any loop body's) equations to the calling line instead of the line summarize names. Wrong whenever a helper line or scan-body line is heaviest (for example a jitted helper called 4 times in a loop).",
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
@jax.jit
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda leaf: jnp.round(leaf / scale) * scale, tree)

# %% cell 26 [heaviest_line] (answer)
from collections import Counter

from jax.extend import source_info_util


def _line(eqn):
    s = source_info_util.summarize(eqn.source_info)
    return int(s.split(":")[1].split(" ")[0]) if s else None


def heaviest_line(fn, *args):
    counts = Counter()

    def walk(jaxpr, owner):
        for eqn in jaxpr.eqns:
            # inside a call, the equations are the caller's: the line that called it made them
            line = owner if owner is not None else _line(eqn)
            if line is not None:
                counts[line] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, tuple) else (value,):
                    if isinstance(sub, (ClosedJaxpr, Jaxpr)):
                        walk(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub, line)

    walk(jax.make_jaxpr(fn)(*args).jaxpr, None)
    return counts.most_common(1)[0][0]
