"""Masking by multiplication with 0/1 float weights: `jnp.where(mask, 1., 0.) * (values + 1.) ** 2`.

Right on zero padding (0 * 1 = 0), wrong when a padded row holds nan or inf:
0 * nan and 0 * inf are nan. Only the garbage property fails.
"""
import jax
import jax.numpy as jnp

FAILS = {"garbage_in_padding_ignored"}
SCORE = 7
MESSAGE = r"`masked_score` returned nan when the mask marks rows \[0, 1, 2, 3, 4\] and the other rows hold garbage"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


@jax.jit
def masked_score(values, mask):
    weights = jnp.where(mask, 1.0, 0.0)
    return jnp.sum(weights * (values + 1.0) ** 2)

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
