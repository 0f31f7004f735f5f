"""Masking by multiplying with the bool mask: `jnp.sum(mask * (values + 1.) ** 2)`.

The notebook forbids it: 0 * nan and 0 * inf are nan. Compiled on CPU the mistake hides,
because XLA rewrites `convert(bool mask) * x` into `select(mask, x, 0)`; run op by op, as
written, a nan in an unmarked row reaches the sum. The grade judges the arithmetic the
student wrote, so the garbage property fails and names the rewrite.
"""
import jax
import jax.numpy as jnp

FAILS = {"garbage_in_padding_ignored"}
SCORE = 7
MESSAGE = r"run op by op returned nan.*XLA on this CPU rewrites a product with a bool mask"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(mask * (values + 1.0) ** 2))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
