"""Recursion and counting are right, but it parses the line as the first run of digits in the summary (re.findall of one-or-more digits, taking the first match). That works only when the file path has no digits. In a notebook cell (/tmp/ipykernel_<pid>/<hash>.py), or in a graders' file under a numbered temp folder, it returns a number from the path, the same for every line. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Takes the first number in the summary string as the line: with a digit in the path (a notebook's ipykernel_<pid> file, a temp folder like tf_0042) it returns that number, such as 42, for every function.",
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
@jax.jit
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda leaf: jnp.round(leaf / scale) * scale, tree)

# %% cell 26 [heaviest_line] (answer)
import re
from collections import Counter

from jax.extend import source_info_util


def _walk(jaxpr, out):
    for eqn in jaxpr.eqns:
        out.append(source_info_util.summarize(eqn.source_info))
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    _walk(sub.jaxpr, out)
                elif isinstance(sub, Jaxpr):
                    _walk(sub, out)


def heaviest_line(fn, *args):
    texts = []
    _walk(jax.make_jaxpr(fn)(*args).jaxpr, texts)
    counts = Counter()
    for t in texts:
        numbers = re.findall(r"\d+", t)  # "file:LINE:COL (fn)" -> the first number is the line
        if numbers:
            counts[int(numbers[0])] += 1
    return counts.most_common(1)[0][0]
