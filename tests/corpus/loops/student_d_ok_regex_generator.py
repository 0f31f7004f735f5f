"""Part D is correct: a generator yields every summary, using jax.extend.core.jaxprs_in_params (the public helper that opens every jaxpr held in params) to recurse, and a regex anchored at the end of the summary reads the line, with or without a column. Part B is wrong: it opens only params['jaxpr'] and params['branches'], forgetting that a while equation keeps its jaxprs in cond_jaxpr and body_jaxpr. It passes the self-check, which has no while loop."""

TEACHER = {"test_rolled": 2, "test_counting": 0, "test_pytree": 2, "test_attribution": 2}

WHY = {
    "test_counting": "Opens only the 'jaxpr' and 'branches' params, so the cond_jaxpr/body_jaxpr of a while equation are not counted (lax.while_loop gives 1 instead of 5).",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"counts_nested_equations"}
SCORE = 7
REVIEW = "Part B's two properties are judged apart: flat functions are counted right (1 point); the while loop's jaxprs left unopened cost the nested one."


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
    n = len(jaxpr.eqns)
    for eqn in jaxpr.eqns:
        if "jaxpr" in eqn.params:          # jit and scan
            n += _count(eqn.params["jaxpr"].jaxpr)
        if "branches" in eqn.params:       # cond
            n += sum(_count(b.jaxpr) for b in eqn.params["branches"])
    return n


def count_equations(fn, *args):
    return _count(jax.make_jaxpr(fn)(*args).jaxpr)

# %% cell 20 [quantise_jitted] (answer)
@jax.jit
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda leaf: jnp.round(leaf / scale) * scale, tree)

# %% cell 26 [heaviest_line] (answer)
import re
from collections import Counter

import jax.extend.core as jex_core
from jax.extend import source_info_util

_LINE = re.compile(r":(\d+)(?::\d+)? \([^()]*\)$")


def _summaries(jaxpr):
    for eqn in jaxpr.eqns:
        yield source_info_util.summarize(eqn.source_info)
        for sub in jex_core.jaxprs_in_params(eqn.params):  # every Jaxpr held, tuples opened
            yield from _summaries(sub)


def heaviest_line(fn, *args):
    lines = Counter()
    for text in _summaries(jax.make_jaxpr(fn)(*args).jaxpr):
        match = _LINE.search(text)
        if match:
            lines[int(match.group(1))] += 1
    return max(lines, key=lines.__getitem__)
