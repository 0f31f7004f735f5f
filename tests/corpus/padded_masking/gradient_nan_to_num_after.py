"""Keeps the one where after the square and cleans the result with jnp.nan_to_num, trusting it to
catch the nan. The value was never nan; the nan is made in the backward pass, inside the chain rule,
where nan_to_num of the output cannot reach it."""
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
    per_row = jnp.where(mask, (jnp.log(values) - t) ** 2, 0.0)
    return jnp.nan_to_num(jnp.sum(per_row) / jnp.sum(mask))

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
