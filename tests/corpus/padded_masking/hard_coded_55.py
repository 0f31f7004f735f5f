"""`masked_score` returns the lesson's printed answer, 55.0, whatever the batch.

It passes the visible example (five values 0..4 padded to eight rows) and nothing else.
"""
import jax
import jax.numpy as jnp

FAILS = {"objective_preserved", "garbage_in_padding_ignored"}
SCORE = 5
MESSAGE = r"gives the wrong objective\.\n.*\n\s+Got:\s+55\.0"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


@jax.jit
def masked_score(values, mask):
    return jnp.float32(55.0)

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
