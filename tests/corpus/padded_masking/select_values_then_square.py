"""An unusual correct answer: select -1 into the unmarked rows, then square (value + 1).

(-1 + 1) ** 2 is exactly 0, so unmarked rows add nothing whatever they held, compiled or op
by op; masked_score is a plain function around a jit built once at top level.
"""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 8


def pad_batch(values, size):
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    if values.size > size:
        raise ValueError(f"{values.size} values do not fit in {size} rows")
    padded = np.full(size, np.nan, dtype=np.float32)  # garbage on purpose: the mask must do the work
    padded[: values.size] = values
    return jnp.asarray(padded), jnp.asarray(np.arange(size) < values.size)


_score = jax.jit(lambda values, mask: jnp.sum((jnp.where(mask, values, -1.0) + 1.0) ** 2))


def masked_score(values, mask):
    return _score(values, mask)

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
