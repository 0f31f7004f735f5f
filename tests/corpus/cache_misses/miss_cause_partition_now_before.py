"""Correct, unusually: no regular expression. `miss_cause` takes the first `* at` line, cuts it at
", now " and " and before " (so a path with brackets, `xs[0]`, stays on the left), and splits each
type into dtype, shape and weak marker with `partition`."""
import functools

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


def _parts(aval):
    dtype, _, rest = aval.partition("[")
    shape, _, tail = rest.partition("]")
    return dtype, shape, "weak_type=True" in tail


def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    if "never seen function" in explanation:
        return "redefined function" if "re-defined" in explanation else "new function"
    lines = [line.strip() for line in explanation.splitlines()]
    if "different input pytree:" in lines:
        first = next(line for line in lines if line.startswith("* at input path"))
        return "new static value" if "Static(" in first else "new structure"
    first = next(line for line in lines if line.startswith("* at "))
    _, _, types = first.partition(", now ")
    now, _, before = types.partition(" and before ")
    (dtype_now, shape_now, weak_now), (dtype_before, shape_before, weak_before) = _parts(now), _parts(before)
    if dtype_now != dtype_before:
        return "new dtype"
    if shape_now != shape_before:
        return "new shape"
    return "weak type"
