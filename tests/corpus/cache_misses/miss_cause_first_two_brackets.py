"""The repairs are right; `miss_cause` finds the type line and takes its first two bracketed groups
as the shapes now and before. On `* at x, now f32[5] and before f32[3]` that works, but at an
indexed path, `* at xs[0], now f32[]{weak_type=True} and before f32[]{weak_type=False}`, the first
group is the path's `[0]`, so a weak-type change is read as a new shape (issue 26, class 8)."""
import functools
import re

import jax
import jax.numpy as jnp

FAILS = {"names_argument_misses"}
SCORE = 6
MESSAGE = r"named the cause 'new shape', but JAX's explanation says 'weak type'\. The first listed argument sits at an indexed path, `xs\[0\]`: its brackets are part of the path, not a shape"


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
    if "never seen function" in explanation:
        return "redefined function" if "re-defined" in explanation else "new function"
    if "different input pytree" in explanation:
        first = [line for line in explanation.splitlines() if "* at input path" in line][0]
        return "new static value" if "Static(" in first else "new structure"
    line = next(line for line in explanation.splitlines() if line.strip().startswith("* at"))
    dtype_now = re.search(r"now (\w+)", line).group(1)
    dtype_before = re.search(r"before (\w+)", line).group(1)
    shapes = re.findall(r"\[([^\]]*)\]", line)[:2]
    if dtype_now != dtype_before:
        return "new dtype"
    if shapes[0] != shapes[1]:
        return "new shape"
    return "weak type"
