"""The double where, but the padded inputs are replaced with 0.0, the habit from Part A. log(0) is
-inf, whose derivative in t is infinite: the value is right, the gradient nan for every padding (zeros
included). The harmless number depends on the function: here it must be positive."""
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
    safe = jnp.where(mask, values, 0.0)
    return jnp.sum(jnp.where(mask, (jnp.log(safe) - t) ** 2, 0.0)) / jnp.sum(mask)

loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
