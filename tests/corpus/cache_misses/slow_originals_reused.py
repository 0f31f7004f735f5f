"""The cheapest way past the value properties: the repaired names are the slow originals, copied.
Values are right, so only the traces properties fail (every call jits a new object)."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"data_repairs_reuse_their_program", "smooth_traces_once_per_steps"}
SCORE = 5
MESSAGE = r"traces on every call"


def scaled_norm(x, scale):
    return jax.jit(lambda v: jnp.sqrt(jnp.sum((scale * v) ** 2)))(x)


def _smooth_steps(x, steps):
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


def smooth(x, steps):
    return jax.jit(functools.partial(_smooth_steps, steps=steps))(x)


def clipped_mean(x, low, high):
    def inner(v):
        return jnp.mean(jnp.clip(v, low, high))
    return jax.jit(inner)(x)
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
