"""The mask is `jnp.arange(size) <= n`: one padded row too many is marked real.

Right for a full batch (all rows true anyway); otherwise the first zero pad adds
(0 + 1)**2 = 1 to the objective.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout", "objective_preserved"}
SCORE = 3
MESSAGE = r"The mask marks 6 row\(s\) as real, but 5 values were given"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) <= n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
