"""Cleans the logarithms with jnp.nan_to_num before the square: nan becomes 0, but log(0) = -inf
becomes -3.4e38, and the derivative 2 * (log v - t) of that overflows to inf, so zero and inf padding
still give a nan gradient."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"hold (zeros|inf)"


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
    logs = jnp.nan_to_num(jnp.log(values))
    return jnp.sum(jnp.where(mask, (logs - t) ** 2, 0.0)) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
