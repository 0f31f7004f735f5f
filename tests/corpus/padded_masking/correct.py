"""The reference behaviour: every property holds."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 6


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError(f"{n} values do not fit in {size} rows")
    padded = jnp.zeros(size, jnp.float32).at[:n].set(values)
    mask = jnp.arange(size) < n
    return padded, mask


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
