"""Recurses correctly but multiplies every sub-jaxpr's equations by the scan's `length`, thinking a loop that runs N times writes its body N times. That is true of a Python for loop, which unrolls, but lax.fori_loop/lax.scan trace the body once into one sub-jaxpr, which is what the notebook's hint about 'what each kind of loop writes into the program' points at. The notebook's own second example (fori_loop of 1000 turns) already fails: the lambda's line gets 2000. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Counts loop turns: multiplies a scan/fori body by its trip count, so a fori_loop body line wins (fails the notebook's own one_long_line self-check: returns first+1 instead of first+2).",
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
@functools.partial(jax.jit, static_argnums=1)
def rolled(x, steps):
    def body(carry, _):
        return 0.5 * carry + jnp.sin(carry), None

    out, _ = lax.scan(body, x, None, length=steps)
    return out

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


def _walk(jaxpr, counts, times):
    for eqn in jaxpr.eqns:
        line = _line(eqn)
        if line is not None:
            counts[line] += times
        # a scan runs its body `length` times, so its equations happen that many times
        inner_times = times * eqn.params.get("length", 1)
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    _walk(sub.jaxpr, counts, inner_times)
                elif isinstance(sub, Jaxpr):
                    _walk(sub, counts, inner_times)


def heaviest_line(fn, *args):
    counts = Counter()
    _walk(jax.make_jaxpr(fn)(*args).jaxpr, counts, 1)
    return counts.most_common(1)[0][0]
