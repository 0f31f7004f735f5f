"""The cheapest `miss_cause` that reads anything: one substring per cause, tried in a fixed order
("weak" first, then "i32", then "Static"), with "new shape" as the fallback. It passes the function
property and fails the argument one (a float64 or int dtype change beside a weak type, a keyword
where a positional argument was)."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"names_argument_misses"}
SCORE = 6


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


def miss_cause(explanation):
    if "explanation unavailable" in explanation:  # the JAX 0.12 row of the table, ported
        return "new static value"
    if "same line" in explanation:
        return "redefined function"
    if "never seen" in explanation:
        return "new function"
    for word, cause in (("weak", "weak type"), ("i32", "new dtype"), ("Static", "new static value"),
                        ("pytree", "new structure")):
        if word in explanation:
            return cause
    return "new shape"
