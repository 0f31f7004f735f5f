"""Unusual but correct: leaves the logarithms of the padding alone but selects them away before t
meets them, replacing each padded row's log with t itself, so its term is (t - t) ** 2 = 0 with a zero
derivative, whatever the row held: no operation whose derivative is taken sees the garbage."""
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
    logs = jnp.where(mask, jnp.log(values), t)
    return jnp.sum((logs - t) ** 2) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
