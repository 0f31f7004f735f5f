"""A full batch is returned as is; shorter ones are padded into `jnp.full(size, 0.)`.

`jnp.full` with a Python float and no dtype is *weakly typed* float32, the values are
not: same dtype and shape, but a different jit signature, so `masked_score` traces
again when the length moves between n == size and n < size. Everything else holds.
"""
import jax
import jax.numpy as jnp

FAILS = {"lengths_share_one_trace"}
SCORE = 7
MESSAGE = (
    r"padded float32\[\d\] \(weakly typed\) for \d values? but float32\[\d\] for \d"
    r"|padded float32\[\d\] for \d values? but float32\[\d\] \(weakly typed\) for \d"
)


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    if n == size:
        return values, jnp.ones(size, bool)
    return jnp.full(size, 0.0).at[:n].set(values), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
