"""`pad_batch` checks the size but never pads: it returns the n values and n True flags.

The objective is right (nothing to mask), but every length is a new shape, so the
layout fails and `masked_score` traces once per length.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout", "lengths_share_one_trace"}
SCORE = 6
MESSAGE = r"`pad_batch` returned padded float32\[\d\] for \d values? but float32\[\d\] for \d"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return values, jnp.ones(n, bool)


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
