"""Unusual but correct: lax.select, the primitive under jnp.where, for both selections, and the real
count as a float sum of the mask."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = set()
SCORE = 8


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError(f"{n} values do not fit in {size} rows")
    padded = jnp.zeros(size, jnp.float32).at[:n].set(values)
    mask = jnp.arange(size) < n
    return padded, mask


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))


def masked_loss(t, values, mask):
    safe = lax.select(mask, values, jnp.full_like(values, 2.0))
    per_row = lax.select(mask, (jnp.log(safe) - t) ** 2, jnp.zeros_like(values))
    return jnp.sum(per_row) / jnp.sum(mask.astype(jnp.float32))

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
