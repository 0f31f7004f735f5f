"""Cleans the padded inputs to 1.0 but then sums every row's term, unselected: a padded row adds
(log 1 - t) ** 2 = t ** 2 to the loss and -2 t to the gradient (unless t is 0)."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"returns the wrong loss"


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
    return jnp.sum((jnp.log(safe) - t) ** 2) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
