"""Right: repairs as plain functions around top-level jits, and a regular-expression reading of the
first difference."""

TEACHER = {"test_repairs": 3, "test_traces": 2, "test_causes": 2}

WHY = {}

FAILS = set()
SCORE = 7

# %% cell 1 [imports] (provided, read-only)
import functools

import jax
import jax.numpy as jnp
import numpy as np

# %% cell [slow_functions] (provided, read-only)
def scaled_norm_slow(x, scale):
    return jax.jit(lambda v: jnp.sqrt(jnp.sum((scale * v) ** 2)))(x)


def _smooth_steps(x, steps):
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


def smooth_slow(x, steps):
    return jax.jit(functools.partial(_smooth_steps, steps=steps))(x)


def clipped_mean_slow(x, low, high):
    def inner(v):
        return jnp.mean(jnp.clip(v, low, high))
    return jax.jit(inner)(x)

# %% cell [repairs]
import re

_norm = jax.jit(lambda x, scale: jnp.sqrt(jnp.sum((scale * x) ** 2)))
_smooth = jax.jit(_smooth_steps, static_argnames="steps")
_clip = jax.jit(lambda x, low, high: jnp.mean(jnp.clip(x, low, high)))


def scaled_norm(x, scale):
    return _norm(x, scale)


def smooth(x, steps):
    return _smooth(x, steps=steps)


def clipped_mean(x, low, high):
    return _clip(x, low, high)


# %% cell [miss_cause]
def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    if re.search(r"never seen function", explanation):
        return "redefined function" if re.search(r"re-defined\s+repeatedly", explanation) else "new function"
    pytree = re.search(r"different input pytree:\s*\n\s*\*([^\n]*)", explanation)
    if pytree:
        return "new static value" if "Static(" in pytree.group(1) else "new structure"
    m = re.search(r"now ([a-z]+\d*)\[([^\]]*)\](\S*) and before ([a-z]+\d*)\[([^\]]*)\](\S*)", explanation)
    if m.group(1) != m.group(4):
        return "new dtype"
    if m.group(2) != m.group(5):
        return "new shape"
    return "weak type"
