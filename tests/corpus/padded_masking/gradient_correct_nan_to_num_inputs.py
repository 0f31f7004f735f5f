"""Unusual but correct: replaces every non-finite input with jnp.nan_to_num and then every
non-positive padded input with where, before the logarithm; the per-row terms are selected after."""
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
    finite = jnp.nan_to_num(values, nan=1.0, posinf=1.0, neginf=1.0)
    safe = jnp.where(mask & (finite > 0), finite, 1.0)
    return jnp.sum(jnp.where(mask, (jnp.log(safe) - t) ** 2, 0.0)) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
