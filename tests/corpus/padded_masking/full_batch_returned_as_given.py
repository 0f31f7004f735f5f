"""`pad_batch` pads a short batch into float32, but returns a full one (`n == size`) as it came,
`np.asarray(values)`, "because jit turns float64 into float32 anyway". A full list of floats then
comes back float64 (a list of ints int64), where the notebook promises a float32 `padded` for every
input, full batches included. Only the layout fails: `masked_score` converts what it is given, so
the objective and the trace count hold.
"""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"pad_batch_layout"}
SCORE = 7
MESSAGE = r"padded values of dtype (float64|int64) for a full batch"


def pad_batch(values, size):
    n = len(values)
    if n > size:
        raise ValueError(f"{n} values do not fit in {size} rows")
    if n == size:
        return np.asarray(values), np.ones(size, dtype=bool)  # nothing to pad
    padded = np.zeros(size, dtype=np.float32)
    padded[:n] = np.asarray(values, dtype=np.float32)
    return padded, np.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
