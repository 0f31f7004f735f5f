"""Part D is correct in a functional style: per-jaxpr Counters folded with functools.reduce(operator.add, ...), and a careful rsplit parse of 'file:line:col (fn)' or 'file:line (fn)'. Ties would go to the smallest line (none happen here). Part C is wrong: it builds `jax.jit(lambda t: ...)` inside the call, closing over scale, so every call (and every new scale) makes a new function and compiles again. The notebook says this explicitly. Its values are right and make_jaxpr shows one jit equation, so the self-check passes."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 0, "test_attribution": 2}

WHY = {
    "test_pytree": "A new lambda closing over scale is jitted on every call: a repeat call with a new scale compiles again (scale is not dynamic).",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"quantise_compiles_once"}
SCORE = 7
REVIEW = "Part C's two properties are judged apart: the values are right (1 point); only the compile per call, from a new jitted lambda each time, costs the other point."


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
def quantise_jitted(tree, scale):
    # jit the whole map at once, closing over scale
    return jax.jit(lambda t: jax.tree.map(lambda x: jnp.round(x / scale) * scale, t))(tree)

# %% cell 26 [heaviest_line] (answer)
import functools as _ft
import operator
from collections import Counter

from jax.extend import source_info_util


def _line_of(eqn):
    where = source_info_util.summarize(eqn.source_info)
    if not where:
        return None
    location = where.rsplit(" (", 1)[0]          # "file:line:col" or "file:line"
    parts = location.rsplit(":", 2)
    return int(parts[1]) if len(parts) == 3 and parts[2].isdigit() and parts[1].isdigit() else int(parts[-1])


def _inner(eqn):
    for p in eqn.params.values():
        for v in (p if isinstance(p, (tuple, list)) else (p,)):
            if isinstance(v, (ClosedJaxpr, Jaxpr)):
                yield v.jaxpr if isinstance(v, ClosedJaxpr) else v


def _tally(jaxpr):
    own = Counter(line for line in map(_line_of, jaxpr.eqns) if line is not None)
    return _ft.reduce(operator.add, (_tally(s) for e in jaxpr.eqns for s in _inner(e)), own)


def heaviest_line(fn, *args):
    tally = _tally(jax.make_jaxpr(fn)(*args).jaxpr)
    return int(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))[0][0])
