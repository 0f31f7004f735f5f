"""Hannah Schulz: Part D mistake (flat versus cumulative). She knows `pprof -top` prints a flat and a cumulative column and decided the line that "made the program big" is the one with the largest cumulative count: each equation counts for its own line and also, once, for every distinct line of the equations that hold it (so a helper's equations also count for the line that calls the helper, a loop body's for the loop's line). `pprof -top` sorts by the flat count, the equations a line itself created, and that is the order the contract means. She agrees with the dump when the heavy line is not reached through a call or a loop, and fails when the heaviest line sits in a jitted helper or in a `scan`/`fori_loop` body written on lines of its own (the calling or looping line then outweighs it). Parts A (static scan), B (stack) and C (`jax.jit(quantise)`) are correct. Public self-check: all four groups pass."""

TEACHER = {'test_rolled': 2, 'test_counting': 2, 'test_pytree': 2, 'test_attribution': 0}
WHY = {'test_attribution': "Ranks lines by a cumulative count (a nested equation also counts for every enclosing call's line) instead of the flat count by creating line that the dump's top listing sorts by; wrong whenever the heaviest line is inside a jitted helper or a separately written loop body."}

# Written on 2026-12-07 by an independent student who saw only a release notebook, one whose Part D stated the
# goal (the line the dump puts first) without the three rules (a wording tried that day and not kept).
# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"heaviest_line_counts_copies", "heaviest_line_inside_calls"}
SCORE = 6

# %% cell 1 [imports]
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, equation counts, the source lines `summarize` names and the `eqn_count_pprof` dump may differ from what the text shows.")

# %% cell 4 [slow_functions]
@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    """Apply x -> 0.5 * x + sin(x) `steps` times, with a Python loop."""
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    """Round every leaf of `tree` to a multiple of `scale`, eagerly, one operation at a time."""
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)

# %% cell 6 [demo]
x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)

three = jax.make_jaxpr(unrolled, static_argnums=1)(x, 3)
print(three)

thirty = jax.make_jaxpr(unrolled, static_argnums=1)(x, 30)
for label, closed in (("3 steps", three), ("30 steps", thirty)):
    inner = closed.jaxpr.eqns[0].params["jaxpr"]  # the jit equation's sub-jaxpr
    print(f"{label}: {len(closed.jaxpr.eqns)} top-level equation, {len(inner.eqns)} inside the jit")

# %% cell 8 [demo]
import os
import tempfile

dump_dir = tempfile.mkdtemp()  # a new, private folder
saved = {name: jax.config.values[name] for name in ("jax_dump_ir_to", "jax_dump_ir_modes")}
unrolled.clear_cache()  # a program JAX has lowered before writes no dump: start from a cold cache
jax.config.update("jax_dump_ir_to", dump_dir)
jax.config.update("jax_dump_ir_modes", "eqn_count_pprof")
try:
    unrolled(x, 30)
finally:
    for name, value in saved.items():
        jax.config.update(name, value)  # dumping off again
for name in sorted(os.listdir(dump_dir)):
    print(name, os.path.getsize(os.path.join(dump_dir, name)), "bytes")

# %% cell 10 [demo]
params = {"w": jnp.ones((4, 3)), "b": jnp.ones(3), "gain": jnp.ones(())}
print(jax.make_jaxpr(quantise)(params, 0.5))

# %% cell 12 [rolled]
def rolled(x, steps):
    return _rolled_jit(x, steps)


@functools.partial(jax.jit, static_argnums=1)
def _rolled_jit(x, steps):
    def step(carry, _):
        return 0.5 * carry + jnp.sin(carry), None

    final, _ = lax.scan(step, x, xs=None, length=steps)
    return final

# %% cell 16 [count_equations]
def count_equations(fn, *args):
    todo = [jax.make_jaxpr(fn)(*args).jaxpr]
    n = 0
    while todo:
        jp = todo.pop()
        for eqn in jp.eqns:
            n += 1
            for p in eqn.params.values():
                for q in (p if isinstance(p, (tuple, list)) else [p]):
                    if isinstance(q, (ClosedJaxpr, Jaxpr)):
                        todo.append(q.jaxpr if isinstance(q, ClosedJaxpr) else q)
    return n

# %% cell 20 [quantise_jitted]
_quantise_fast = jax.jit(quantise)  # built once; scale stays a traced argument


def quantise_jitted(tree, scale):
    return _quantise_fast(tree, scale)

# %% cell 24 [demo]
from jax.extend import source_info_util

closed = jax.make_jaxpr(unrolled, static_argnums=1)(x, 3)
outer = closed.jaxpr.eqns[0]
print(outer.primitive, "|", source_info_util.summarize(outer.source_info))
for eqn in outer.params["jaxpr"].jaxpr.eqns[:4]:
    print(eqn.primitive, "|", source_info_util.summarize(eqn.source_info))

# %% cell 26 [heaviest_line]
import collections


def _line(eqn):
    s = source_info_util.summarize(eqn.source_info)
    return int(s.split(" (")[0].split(":")[1]) if s else None


def heaviest_line(fn, *args):
    cumulative = collections.Counter()
    stack = [(jax.make_jaxpr(fn)(*args).jaxpr, ())]  # (jaxpr, lines of the equations holding it)
    while stack:
        jaxpr, chain = stack.pop()
        for eqn in jaxpr.eqns:
            own = _line(eqn)
            lines = chain + ((own,) if own is not None else ())
            for line in set(lines):  # like pprof's cum: once per line on the stack
                cumulative[line] += 1
            for p in eqn.params.values():
                for q in (p if isinstance(p, (tuple, list)) else (p,)):
                    if isinstance(q, (ClosedJaxpr, Jaxpr)):
                        stack.append((q.jaxpr if isinstance(q, ClosedJaxpr) else q, lines))
    return cumulative.most_common(1)[0][0]
