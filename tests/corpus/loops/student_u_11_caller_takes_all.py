"""Grace Mwangi: Part D mistake (where equations come from). She reasons that a call such as `v = helper(v)` or `v = lax.fori_loop(0, 100, body, v)` is "the line that made the program big", so every equation nested under a top-level equation is charged to that top-level equation's line (she recurses to count them all, but attributes by the top-level `summarize` only). The dump gives each nested equation to the line that created it: a jitted helper's loop line, a `fori_loop` body's own lines. She agrees with the dump on flat functions, Python loops, softmax, jnp functions that are jits and loops whose body is written on the loop's own line (both public examples), and fails when a helper or a body defined elsewhere holds the heavy line. Parts A (dynamic `fori_loop`), B (stack) and C (decorated jit) are correct. Public self-check: all four groups pass."""

TEACHER = {'test_rolled': 2, 'test_counting': 2, 'test_pytree': 2, 'test_attribution': 0}
WHY = {'test_attribution': "Charges every equation inside a helper, a scan or a fori_loop body to the top-level line that called it, whereas the dump (and summarize) give each to the line that created it; wrong on the helper and separately-defined-body cases the part is about."}

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
def _update(_, x):
    return 0.5 * x + jnp.sin(x)


@jax.jit
def rolled(x, steps):
    # steps is traced: one trace for every step count, the loop becomes a while
    return lax.fori_loop(0, steps, _update, x)

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
@jax.jit
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda a: jnp.round(a / scale) * scale, tree)

# %% cell 24 [demo]
from jax.extend import source_info_util

closed = jax.make_jaxpr(unrolled, static_argnums=1)(x, 3)
outer = closed.jaxpr.eqns[0]
print(outer.primitive, "|", source_info_util.summarize(outer.source_info))
for eqn in outer.params["jaxpr"].jaxpr.eqns[:4]:
    print(eqn.primitive, "|", source_info_util.summarize(eqn.source_info))

# %% cell 26 [heaviest_line]
def _all_eqns(jaxpr):
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for p in eqn.params.values():
            for q in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(q, (ClosedJaxpr, Jaxpr)):
                    n += _all_eqns(q.jaxpr if isinstance(q, ClosedJaxpr) else q)
    return n


def heaviest_line(fn, *args):
    totals = {}
    for eqn in jax.make_jaxpr(fn)(*args).jaxpr.eqns:
        text = source_info_util.summarize(eqn.source_info)
        if not text:
            continue
        line = int(text.split(":")[1].split(" ")[0])
        size = 1
        for p in eqn.params.values():
            for q in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(q, (ClosedJaxpr, Jaxpr)):
                    size += _all_eqns(q.jaxpr if isinstance(q, ClosedJaxpr) else q)
        totals[line] = totals.get(line, 0) + size
    return max(totals, key=totals.get)
