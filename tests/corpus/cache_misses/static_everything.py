"""Marks every number static (scale, low, high and steps): right values, but a new scale or bound is a
new program each time."""

TEACHER = {"test_repairs": 3, "test_traces": 1, "test_causes": 2}

WHY = {"test_traces": "scale, low and high are data; static makes every new value trace again. steps static is fine."}

FAILS = {"data_repairs_reuse_their_program"}
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
@functools.partial(jax.jit, static_argnames=("scale",))
def scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


smooth = jax.jit(_smooth_steps, static_argnames=("steps",))


@functools.partial(jax.jit, static_argnames=("low", "high"))
def clipped_mean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))

# %% cell [miss_cause]
def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    text = explanation
    if "never seen function" in text:
        if "same line" in text:
            return "redefined function"
        return "new function"
    if "different input pytree" in text:
        for line in text.splitlines():
            if line.strip().startswith("* at input path"):
                return "new static value" if "Static(" in line else "new structure"
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("* at") and " now " in line:
            now = line.split(" now ", 1)[1].split(" and before ", 1)[0]
            before = line.split(" and before ", 1)[1]
            if now.split("[")[0] != before.split("[")[0]:
                return "new dtype"
            if now.split("[")[1].split("]")[0] != before.split("[")[1].split("]")[0]:
                return "new shape"
            return "weak type"
    return "new structure"
