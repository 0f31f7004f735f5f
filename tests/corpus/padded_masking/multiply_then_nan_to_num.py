"""Multiplies by the mask (forbidden), then hides the nans with `jnp.nan_to_num`. Unmarked
garbage vanishes, but so does a nan in a *marked* row, which is data: the sum over the marked
rows is then nan, and this answer says a finite number."""
import jax
import jax.numpy as jnp

FAILS = {"garbage_in_padding_ignored"}
SCORE = 7
MESSAGE = r"wrong objective when the mask marks rows \[0, 1, 2, 4, 5, 6\]"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.zeros(size, jnp.float32).at[:n].set(values), jnp.arange(size) < n


@jax.jit
def masked_score(values, mask):
    return jnp.sum(jnp.nan_to_num(mask * (values + 1.0) ** 2))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
