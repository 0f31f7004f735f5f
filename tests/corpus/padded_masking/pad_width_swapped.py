"""`jnp.pad(values, (size - n, 0))`: the (before, after) pad widths swapped, zeros in front.

The mask, copied from the lesson, still marks the first n rows, so it now selects zero
pads and misses values: the layout is wrong and so is the objective whenever n < size.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout", "objective_preserved"}
SCORE = 3
MESSAGE = r"put the 5 values at the end of padded \(rows 3\.\.7\)"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (size - n, 0)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
