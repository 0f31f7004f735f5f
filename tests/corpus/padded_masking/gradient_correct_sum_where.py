"""Unusual but correct: cleans the inputs with jnp.where, then reduces with jnp.sum(..., where=mask)
and divides by jnp.count_nonzero(mask)."""
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
    safe = jnp.where(mask, values, 1.0)
    return jnp.sum((jnp.log(safe) - t) ** 2, where=mask) / jnp.count_nonzero(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
