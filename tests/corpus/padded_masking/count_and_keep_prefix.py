"""Counts the True rows and keeps that many rows from the front, instead of using the mask.

Right for every mask `pad_batch` makes (real rows first), wrong for a mask whose real rows
are elsewhere: the contract is "the sum over the rows where mask is True".
"""
import jax
import jax.numpy as jnp

FAILS = {"garbage_in_padding_ignored"}
SCORE = 7
MESSAGE = r"when the mask marks rows \[1, 3, 5, 7\] and the other rows hold garbage: an unmarked row.s term reached the sum"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.zeros(size, jnp.float32).at[:n].set(values), jnp.arange(size) < n


@jax.jit
def masked_score(values, mask):
    n = jnp.sum(mask)
    first_n = jnp.arange(values.shape[0]) < n
    return jnp.sum(jnp.where(first_n, (values + 1.0) ** 2, 0.0))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
