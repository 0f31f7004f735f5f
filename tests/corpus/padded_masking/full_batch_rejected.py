"""The overflow check is `n >= size`: a batch that exactly fills `size` rows is rejected.

Overflow is still caught, but every call with n == size raises ValueError, which
breaks the layout. One mistake in `pad_batch`, one penalty: the objective and trace properties do not count
the calls where `pad_batch` raised (they used to take 3 more points for the same refusal).
"""
import jax
import jax.numpy as jnp

FAILS = {"pad_batch_layout"}
SCORE = 7
MESSAGE = r"`pad_batch` raised ValueError: too many values\n\s+Example:\s+pad_batch\(float32\[8\] .*, 8\)"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n >= size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
