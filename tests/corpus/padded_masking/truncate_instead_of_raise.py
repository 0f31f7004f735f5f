"""Too many values are silently cut to `size` instead of raising ValueError.

Every batch that fits is handled right; only the overflow property fails.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_rejects_overflow"}
SCORE = 5
MESSAGE = r"accepted \d+ values for \d+ rows instead of raising ValueError"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)[:size]
    n = values.shape[0]
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
