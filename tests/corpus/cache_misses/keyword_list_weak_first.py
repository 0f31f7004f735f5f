"""Causes by a list of keywords tried in order, with "weak_type" before any dtype comparison: a dtype
change next to a weak-type change is called a weak type."""

TEACHER = {"test_repairs": 3, "test_traces": 2, "test_causes": 1}

WHY = {"test_causes": "function misses are right; argument misses confuse a dtype change with a weak type."}

FAILS = {"names_argument_misses"}
SCORE = 6

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
@jax.jit
def scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


smooth = jax.jit(_smooth_steps, static_argnames=("steps",))


@jax.jit
def clipped_mean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))

# %% cell [miss_cause]
_RULES = [
    ("re-defined", "redefined function"),
    ("never seen", "new function"),
    ("Static(", "new static value"),
    ("pytree", "new structure"),
    ("weak_type", "weak type"),
    ("i32", "new dtype"),
]


def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    for word, cause in _RULES:
        if word in explanation:
            return cause
    return "new shape"
