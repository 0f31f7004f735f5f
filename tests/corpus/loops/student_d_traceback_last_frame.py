"""Reads `eqn.source_info.traceback.frames[-1].line_num` instead of summarize, assuming that the last frame is the user's code. JAX keeps only a limited number of frames, innermost first, so for deep stacks (a Python loop inside a fori_loop body, or fori_loop's own counter) the last kept frame is a line inside JAX's sources. For an ordinary helper it is the outermost kept frame, the calling line. The notebook says to use the line summarize names. It passes the self-check. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Uses the last traceback frame instead of summarize's innermost user frame: for equations from a Python loop inside a fori_loop body it counts a JAX-internal line (2479), which wins.",
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


def _eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    yield from _eqns(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    yield from _eqns(sub)


def heaviest_line(fn, *args):
    counts = Counter()
    for eqn in _eqns(jax.make_jaxpr(fn)(*args).jaxpr):
        tb = eqn.source_info.traceback
        if tb is None or not tb.frames:
            continue
        # the first frames are JAX's internals; the last one is our own code
        counts[tb.frames[-1].line_num] += 1
    return counts.most_common(1)[0][0]
