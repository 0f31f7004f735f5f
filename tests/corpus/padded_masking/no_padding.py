"""`pad_batch` checks the size but never pads: it returns the n values and n True flags.

The objective is right (nothing to mask), but every length is a new shape, so the
layout fails and `masked_score` traces once per length.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout", "lengths_share_one_trace"}
SCORE = 4
MESSAGE = r"`pad_batch` returned padded float32\[\d\] for \d values? but float32\[\d\] for \d"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return values, jnp.ones(n, bool)


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
