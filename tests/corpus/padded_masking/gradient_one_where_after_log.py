"""One `jnp.where` after the logarithm and the square, as in Part B: the value is right for every
padding, but the gradient in `t` is nan for nan, inf, -inf, -1e30 and zero padding (log of zero is -inf,
log of a negative number is nan, and the where's zero times that derivative is nan). 1e30 happens to be
harmless (its log is about 69)."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"right loss but a gradient of nan in `t` when \d of \d rows are padded and hold"


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
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
