"""Part D is correct in an unusual style: an explicit stack instead of recursion, and jax._src.source_info_util.user_frame(...).start_line, the frame summarize itself formats, instead of parsing text. Empty frames (None) are skipped as 'no line'. Part A is wrong: the scan uses unroll=True 'so XLA can fuse everything', which the graders reject at 40 steps (the scan's unroll parameter shows 40). It passes the self-check only because the self-check does not read unroll. B and C are correct."""

TEACHER = {"test_rolled": 0, "test_counting": 2, "test_pytree": 2, "test_attribution": 2}

WHY = {
    "test_rolled": "lax.scan(..., unroll=True) unrolls the whole loop: at 40 steps the scan equation's unroll is 40, which the notebook says fails.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"rolled_jaxpr_does_not_grow"}
SCORE = 7
REVIEW = "Part A's two properties are judged apart: unroll=True gives the right values (1 point); only the jaxpr growing with the step count costs the other point."


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

    # unroll the whole scan so XLA can fuse everything: it is faster at run time
    out, _ = lax.scan(body, x, None, length=steps, unroll=True)
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

from jax._src import source_info_util as _siu  # summarize() is built on user_frame()


def heaviest_line(fn, *args):
    counts = Counter()
    todo = [jax.make_jaxpr(fn)(*args).jaxpr]
    while todo:
        jaxpr = todo.pop()
        for eqn in jaxpr.eqns:
            frame = _siu.user_frame(eqn.source_info.traceback)
            if frame is not None:
                counts[frame.start_line] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, ClosedJaxpr):
                        todo.append(sub.jaxpr)
                    elif isinstance(sub, Jaxpr):
                        todo.append(sub)
    line, _ = counts.most_common(1)[0]
    return int(line)
