"""Cleans the inputs and selects correctly, but takes jnp.mean over all rows: the padded rows count
in the denominator, so both the loss and its gradient are scaled by n / size."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"mean over all \d rows, as if the \d padded rows were real rows"


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
    return jnp.mean(jnp.where(mask, (jnp.log(safe) - t) ** 2, 0.0))

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
