"""Nearly right: recursive, summarize-based, columns merged. But the equations with an empty summary (the fori_loop counter increment JAX adds) are given to the line of the enclosing loop equation instead of to no line. A fori_loop called several times in a Python loop gains one extra equation per call, which can tie with or overtake the body's line. The notebook says such equations belong to no line. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Gives the bookkeeping equations (empty summarize) to the enclosing equation's line, but they belong to no line. Example: fori_loop(0, 3, body, v) called 6 times in a Python loop, body of 2 equations: the body line has 12 and the fori line 6, but this student counts 12 vs 12 and returns the fori line.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8
REVIEW = "The graders' functions win by at least two equations, as the notebook promises, so giving each loop's one bookkeeping equation to its line changes no answer: the line returned is right on every function the graders use."


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
    counts = Counter()

    def walk(jaxpr, parent_line):
        for eqn in jaxpr.eqns:
            text = source_info_util.summarize(eqn.source_info)
            # an equation with no line of its own was made by the loop / call that holds it
            line = int(text.split(":")[1].split()[0]) if text else parent_line
            if line is not None:
                counts[line] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, tuple) else (value,):
                    if isinstance(sub, ClosedJaxpr):
                        walk(sub.jaxpr, line)
                    elif isinstance(sub, Jaxpr):
                        walk(sub, line)

    walk(jax.make_jaxpr(fn)(*args).jaxpr, None)
    return counts.most_common(1)[0][0]
