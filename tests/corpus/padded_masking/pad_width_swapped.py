"""`jnp.pad(values, (size - n, 0))`: the (before, after) pad widths swapped, zeros in front.

The mask, copied from the lesson, still marks the first n rows, so it now selects zero
pads and misses values: the layout is wrong and so is the objective whenever n < size.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout", "objective_preserved"}
SCORE = 5
MESSAGE = r"put the 5 values at the end of padded \(rows 3\.\.7\)"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (size - n, 0)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
