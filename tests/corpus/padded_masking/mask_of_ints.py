"""The mask is built as ones and zeros (int32), not booleans.

`jnp.where` treats nonzero as true, so the objective and the traces are fine; only the
layout property, which asks for a bool mask, fails.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout"}
SCORE = 7
MESSAGE = r"a mask of dtype int32; it should be bool"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    padded = jnp.zeros(size, jnp.float32).at[:n].set(values)
    mask = jnp.where(jnp.arange(size) < n, 1, 0)
    return padded, mask


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
