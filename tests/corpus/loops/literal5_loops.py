"""The fifth literal student (docs/literal-student.md, 2026-12-07, after seven parts were reworded to
state their contract and no cure): it saw only release/, passed every self-check on its first run and
earns every automatic point. Part A: `lax.fori_loop` from the goals list, the body's arguments found from two JAX errors, `steps`
static as in `unrolled`; B and D: the recipes the text gives."""

FAILS = set()
SCORE = 8


# %% cell 1
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

# %% cell 4
@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    """Apply x -> 0.5 * x + sin(x) `steps` times, with a Python loop."""
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    """Round every leaf of `tree` to a multiple of `scale`, eagerly, one operation at a time."""
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)

# %% cell 6
x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)

three = jax.make_jaxpr(unrolled, static_argnums=1)(x, 3)
print(three)

thirty = jax.make_jaxpr(unrolled, static_argnums=1)(x, 30)
for label, closed in (("3 steps", three), ("30 steps", thirty)):
    inner = closed.jaxpr.eqns[0].params["jaxpr"]  # the jit equation's sub-jaxpr
    print(f"{label}: {len(closed.jaxpr.eqns)} top-level equation, {len(inner.eqns)} inside the jit")

# %% cell 8
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

# %% cell 10
params = {"w": jnp.ones((4, 3)), "b": jnp.ones(3), "gain": jnp.ones(())}
print(jax.make_jaxpr(quantise)(params, 0.5))

# %% cell 12
def _rolled_body(i, x):
    return 0.5 * x + jnp.sin(x)


@functools.partial(jax.jit, static_argnames="steps")
def rolled(x, steps):
    """Apply x -> 0.5 * x + sin(x) `steps` times, with lax.fori_loop (the body is traced once)."""
    return lax.fori_loop(0, steps, _rolled_body, x)

# %% cell 16
def _count(jaxpr):
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            items = value if isinstance(value, (tuple, list)) else (value,)
            for item in items:
                if isinstance(item, ClosedJaxpr):
                    total += _count(item.jaxpr)
                elif isinstance(item, Jaxpr):
                    total += _count(item)
    return total


def count_equations(fn, *args):
    closed = jax.make_jaxpr(fn)(*args)
    return int(_count(closed.jaxpr))

# %% cell 20
quantise_jitted = jax.jit(quantise)  # built once, at top level: one traced program for the whole tree

# %% cell 24
from jax.extend import source_info_util

closed = jax.make_jaxpr(unrolled, static_argnums=1)(x, 3)
outer = closed.jaxpr.eqns[0]
print(outer.primitive, "|", source_info_util.summarize(outer.source_info))
for eqn in outer.params["jaxpr"].jaxpr.eqns[:4]:
    print(eqn.primitive, "|", source_info_util.summarize(eqn.source_info))

# %% cell 26
def _line_counts(jaxpr, counts):
    for eqn in jaxpr.eqns:
        where = source_info_util.summarize(eqn.source_info)
        if where:
            line = int(where.split(" (")[0].split(":")[1])
            counts[line] = counts.get(line, 0) + 1
        for value in eqn.params.values():
            items = value if isinstance(value, (tuple, list)) else (value,)
            for item in items:
                if isinstance(item, ClosedJaxpr):
                    _line_counts(item.jaxpr, counts)
                elif isinstance(item, Jaxpr):
                    _line_counts(item, counts)
    return counts


def heaviest_line(fn, *args):
    counts = _line_counts(jax.make_jaxpr(fn)(*args).jaxpr, {})
    return int(max(counts, key=counts.get))
