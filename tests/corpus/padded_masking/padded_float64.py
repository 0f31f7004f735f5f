"""`pad_batch` fills `np.zeros(size)`, NumPy's default float64, instead of a float32 array.

Only the layout fails: jit converts float64 NumPy input to float32 (x64 is off), so the
objective is right and the signature is the same for every length.
"""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"pad_batch_layout"}
SCORE = 7
MESSAGE = r"padded values of dtype float64; they should be float32"


def pad_batch(values, size):
    n = len(values)
    if n > size:
        raise ValueError("too many values")
    padded = np.zeros(size)
    padded[:n] = np.asarray(values)
    return padded, np.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
