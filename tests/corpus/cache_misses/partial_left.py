"""The lambda and the inner def were repaired, but `smooth` still jits a fresh functools.partial on every
call: each call is a new function to jit's cache."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"smooth_traces_once_per_steps"}
SCORE = 6
MESSAGE = r'traces on every call'


@jax.jit
def scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


def _smooth_steps(x, steps):
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


def smooth(x, steps):
    return jax.jit(functools.partial(_smooth_steps, steps=steps))(x)


@jax.jit
def clipped_mean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))


_TYPE = re.compile(r"now (\w+)\[([^\]]*)\](\S*) and before (\w+)\[([^\]]*)\](\S*)")


def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    if "never seen function" in explanation:
        if "re-defined" in explanation:
            return "redefined function"
        return "new function"
    if "different input pytree" in explanation:
        first = [line for line in explanation.splitlines() if "* at input path" in line][0]
        return "new static value" if "Static(" in first else "new structure"
    found = _TYPE.search(explanation)
    dtype_now, shape_now, weak_now, dtype_before, shape_before, weak_before = found.groups()
    if dtype_now != dtype_before:
        return "new dtype"
    if shape_now != shape_before:
        return "new shape"
    if ("weak_type=True" in weak_now) != ("weak_type=True" in weak_before):
        return "weak type"
    return "new shape"
