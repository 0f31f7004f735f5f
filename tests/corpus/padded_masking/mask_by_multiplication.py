"""Masking by multiplying with the bool mask: `jnp.sum(mask * (values + 1.) ** 2)`.

The lesson warns that 0 * nan and 0 * inf are nan, and this looks like it should leak
garbage. It does not here: jnp.multiply is jitted, and XLA's algebraic simplifier
rewrites `convert(bool mask) * x` into `select(mask, x, 0)`, so nan/inf padding never
reaches the sum (measured with the pinned jax/jaxlib 0.10.2 on CPU, under jit and
eagerly). The answer is observably right, so it keeps every point; if a new XLA stops
doing that rewrite, this file fails and the expectation must be revisited.
Compare `float_weights_multiplication.py`, where the 0/1 weights are floats already.
"""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 6
MESSAGE = r"padded_masking / objective: 3 of 3 points"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(mask * (values + 1.0) ** 2))
