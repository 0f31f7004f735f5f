"""Multiplies the per-row terms by the mask cast to float32. Compiled, XLA turns the product
into a select and the value comes out right, but run op by op 0 * nan is nan, and the gradient is nan
in both."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"stayed out of the value, not out of the gradient"


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
    weights = mask.astype(jnp.float32)
    return jnp.sum(weights * (jnp.log(values) - t) ** 2) / jnp.sum(weights)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
