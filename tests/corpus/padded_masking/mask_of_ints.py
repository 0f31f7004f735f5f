"""The mask is built as ones and zeros (int32), not booleans.

`jnp.where` treats nonzero as true, so the objective and the traces are fine; only the
layout property, which asks for a bool mask, fails.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout"}
SCORE = 5
MESSAGE = r"a mask of dtype int32; it should be bool"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    padded = jnp.zeros(size, jnp.float32).at[:n].set(values)
    mask = jnp.where(jnp.arange(size) < n, 1, 0)
    return padded, mask


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
