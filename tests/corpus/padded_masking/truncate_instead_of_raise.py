"""Too many values are silently cut to `size` instead of raising ValueError.

Every batch that fits is handled right; only the overflow property fails.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_rejects_overflow"}
SCORE = 7
MESSAGE = r"accepted \d+ values for \d+ rows instead of raising ValueError"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)[:size]
    n = values.shape[0]
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
