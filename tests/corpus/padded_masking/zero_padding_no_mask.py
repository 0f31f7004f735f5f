"""Zero padding without a mask: `masked_score` ignores `mask` and sums every row.

Each zero pad adds (0 + 1)**2 = 1, so the objective is too large by the number of
padded rows, and nan/inf garbage in the padding reaches the sum.
"""
import jax
import jax.numpy as jnp

FAILS = {"objective_preserved", "garbage_in_padding_ignored"}
SCORE = 5
MESSAGE = r"It is 3 too large, as if 3 padded row\(s\) were counted"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum((values + 1.0) ** 2))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
