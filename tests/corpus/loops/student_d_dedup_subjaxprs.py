"""Keeps a `seen` set of sub-jaxprs, so a jitted helper (or a scan body function) that is reused is counted only once, reasoning that it is compiled once. This happens to be what JAX's eqn_count_pprof writer itself does (it keeps a visited set). But the notebook's rules say every equation counts 'as in Part B', where a helper called 4 times contributes its equations 4 times. By the stated rules, a helper line called in a loop should win. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Counts a shared sub-jaxpr once (visited set), so a jitted helper called 4 times in a Python loop counts 1x instead of 4x and the call line wins. The notebook's bullets say every equation counts as in Part B. (The dump's own writer does dedupe, so the notebook's 'the line the dump would put first' sentence conflicts with the bullets here; the teacher follows the explicit bullets.)",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8
REVIEW = "The teacher graded an earlier wording; the notebook now says the graders' functions hold no sub-jaxpr twice, so counting a repeated one once (as the dump does) gives the same, right line."


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
    seen = set()  # a helper is compiled once, so its body is only counted once

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            s = source_info_util.summarize(eqn.source_info)
            if s:
                counts[int(s.split(":")[1].split()[0])] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, tuple) else (value,):
                    sub = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
                    if isinstance(sub, Jaxpr) and id(sub) not in seen:
                        seen.add(id(sub))
                        walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return counts.most_common(1)[0][0]
