"""The mask is `jnp.arange(size) <= n`: one padded row too many is marked real.

Right for a full batch (all rows true anyway); otherwise the first zero pad adds
(0 + 1)**2 = 1 to the objective.
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout", "objective_preserved"}
SCORE = 5
MESSAGE = r"The mask marks 6 row\(s\) as real, but 5 values were given"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) <= n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
