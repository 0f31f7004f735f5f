"""`masked_score` is a plain Python function: the right numbers, but no `jax.jit`."""
import jax.numpy as jnp

FAILS = {"lengths_share_one_trace"}
SCORE = 7
MESSAGE = r"JAX traced none of your code: it is not compiled with `jax\.jit`"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.zeros(size, jnp.float32).at[:n].set(values), jnp.arange(size) < n


def masked_score(values, mask):
    return jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
