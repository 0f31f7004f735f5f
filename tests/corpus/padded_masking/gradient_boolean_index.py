"""Keeps only the real rows with values[mask], which is right in plain Python, but the contract
compiles masked_loss with jax.jit, where a boolean index would give an array whose shape depends on the
data: the call raises."""
import jax
import jax.numpy as jnp
from jax import lax

FAILS = {"gradient_survives_padding"}
SCORE = 6
MESSAGE = r"."


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
    return jnp.mean((jnp.log(values[mask]) - t) ** 2)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
