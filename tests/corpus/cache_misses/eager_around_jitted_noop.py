"""The cheapest way past a trace count: each repair computes eagerly and also calls a jitted no-op
built once at top level, so JAX traces "something" once per signature and never again. Nothing of the
computation is compiled; the traces properties see the eager operations beside the jitted call."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"data_repairs_reuse_their_program", "smooth_traces_once_per_steps"}
SCORE = 5
MESSAGE = r"computes part of its result outside `jax.jit`"

_touch = jax.jit(lambda v: v)


def scaled_norm(x, scale):
    _touch(x)
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


def smooth(x, steps):
    _touch(x)
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


def clipped_mean(x, low, high):
    _touch(x)
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
