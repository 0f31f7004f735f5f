"""Unusual but right: `steps` stays dynamic and bounds a `lax.fori_loop`, so one program serves every
number of steps; `scaled_norm` and `clipped_mean` are plain functions around top-level jits."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 7


_norm = jax.jit(lambda x, scale: jnp.linalg.norm(scale * x))


def scaled_norm(x, scale):
    return _norm(x, scale)


@jax.jit
def smooth(x, steps):
    return jax.lax.fori_loop(0, steps, lambda i, v: (jnp.roll(v, 1) + v + jnp.roll(v, -1)) / 3.0, x)


_clip = jax.jit(lambda x, low, high: jnp.mean(jnp.minimum(jnp.maximum(x, low), high)))


def clipped_mean(x, low, high):
    return _clip(x, low, high)


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
