"""Correct, in a plain, long style: a nested visit function, a dict for the counts, a manual arg-max loop, and a split parse that handles both 'file:line:col' and 'file:line'. It opens tuples of jaxprs (cond branches) and skips empty summaries. It returns the int key. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 2}

WHY = {
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8


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
from jax.extend import source_info_util


def heaviest_line(fn, *args):
    per_line = {}

    def visit(jaxpr):
        for eqn in jaxpr.eqns:
            text = source_info_util.summarize(eqn.source_info)
            if text:
                head = text.split(" (")[0]                 # drop "(function)"
                pieces = head.split(":")
                # "file:line:col" -> line is second from the end; "file:line" -> last
                line = int(pieces[-2]) if len(pieces) >= 3 and pieces[-2].isdigit() else int(pieces[-1])
                per_line[line] = per_line.get(line, 0) + 1
            for name, value in eqn.params.items():
                subs = value if isinstance(value, tuple) else [value]
                for sub in subs:
                    if isinstance(sub, ClosedJaxpr):
                        visit(sub.jaxpr)
                    elif isinstance(sub, Jaxpr):
                        visit(sub)

    visit(jax.make_jaxpr(fn)(*args).jaxpr)
    best_line, best = None, -1
    for line, n in per_line.items():
        if n > best:
            best_line, best = line, n
    return best_line
