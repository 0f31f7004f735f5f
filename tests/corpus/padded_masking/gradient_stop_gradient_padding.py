"""Stops the gradient of the padded rows' terms with lax.stop_gradient before selecting, thinking
that cuts the padding out of the backward pass. The outer where still sends a zero into the square at
the padded rows, and zero times an infinite derivative is nan."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"gradient of nan"


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
    per_row = (jnp.log(values) - t) ** 2
    per_row = jnp.where(mask, per_row, lax.stop_gradient(per_row))
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
