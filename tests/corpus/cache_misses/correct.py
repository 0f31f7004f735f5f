"""The model answer: each repair jits one long-lived function at top level, with the numbers as
dynamic arguments and `steps` static; `miss_cause` reads the first difference JAX lists."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 7


@jax.jit
def scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


@functools.partial(jax.jit, static_argnames=("steps",))
def smooth(x, steps):
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


@jax.jit
def clipped_mean(x, low, high):
    return jnp.mean(jnp.clip(x, low, high))


_TYPE = re.compile(r"now (\w+)\[([^\]]*)\](\S*) and before (\w+)\[([^\]]*)\](\S*)")


def miss_cause(explanation):
    if "never seen function" in explanation:
        if "re-defined" in explanation:
            return "redefined function"
        return "new function"
    if "explanation unavailable" in explanation:
        return "new static value"
    if "different input pytree" in explanation:
        return "new structure"
    found = _TYPE.search(explanation)
    dtype_now, shape_now, weak_now, dtype_before, shape_before, weak_before = found.groups()
    if dtype_now != dtype_before:
        return "new dtype"
    if shape_now != shape_before:
        return "new shape"
    if ("weak_type=True" in weak_now) != ("weak_type=True" in weak_before):
        return "weak type"
    return "new shape"
