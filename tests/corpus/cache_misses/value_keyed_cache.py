"""A global dict of jitted lambdas keyed on the bounds: repeats of one (low, high) pair hit, but every new
pair builds and traces a new lambda, which is the bug with a memory."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"data_repairs_reuse_their_program"}
SCORE = 6


@jax.jit
def scaled_norm(x, scale):
    return jnp.sqrt(jnp.sum((scale * x) ** 2))


@functools.partial(jax.jit, static_argnames=("steps",))
def smooth(x, steps):
    for _ in range(steps):
        x = (jnp.roll(x, 1) + x + jnp.roll(x, -1)) / 3.0
    return x


_programs = {}


def clipped_mean(x, low, high):
    key = (low, high)
    if key not in _programs:
        _programs[key] = jax.jit(lambda v: jnp.mean(jnp.clip(v, low, high)))
    return _programs[key](x)


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
