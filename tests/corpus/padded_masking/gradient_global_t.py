"""Uses a module-level t, the starting value the student tried in a scratch cell, instead of the
argument: the loss is right only at that t and the gradient in the argument is exactly 0, since the
argument never reaches the loss."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"gradient of exactly 0"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError(f"{n} values do not fit in {size} rows")
    padded = jnp.zeros(size, jnp.float32).at[:n].set(values)
    mask = jnp.arange(size) < n
    return padded, mask


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))


T_START = jnp.float32(0.5)


def masked_loss(t, values, mask):
    safe = jnp.where(mask, values, 1.0)
    return jnp.sum(jnp.where(mask, (jnp.log(safe) - T_START) ** 2, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
