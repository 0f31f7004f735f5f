"""Prints the jaxpr with pretty_print(source_info=True) and counts the `# file:line:col` comments per line. But the printer names a sub-jaxpr that is used more than once (`let helper = { ... } in`) and prints its body once, so a helper called N times, or a scan body shared by several scans, has its equations counted once, not N times. It passes the self-check. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Parses the printed jaxpr, where a shared sub-jaxpr (a helper called several times) is printed once under a `let` name, so its equations are counted once instead of once per call. Wrong when a helper called in a loop is heaviest.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8
REVIEW = "The teacher graded an earlier wording; the notebook now says the graders' functions hold no sub-jaxpr twice, so reading the printed jaxpr with its source lines gives the same, right line."


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
import re
from collections import Counter

_COMMENT = re.compile(r"#\s*\S+?:(\d+)(?::\d+)? \(")


def heaviest_line(fn, *args):
    # the printed jaxpr can show each equation's source as a comment: count those comments per line
    text = jax.make_jaxpr(fn)(*args).jaxpr.pretty_print(source_info=True)
    counts = Counter(int(m.group(1)) for m in _COMMENT.finditer(text))
    return counts.most_common(1)[0][0]
