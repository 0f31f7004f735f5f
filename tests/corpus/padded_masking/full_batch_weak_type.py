"""A full batch is returned as is; shorter ones are padded into `jnp.full(size, 0.)`.

`jnp.full` with a Python float and no dtype is *weakly typed* float32, the values are
not: same dtype and shape, but a different jit signature, so `masked_score` traces
again when the length moves between n == size and n < size. Everything else holds.
"""
import jax
import jax.numpy as jnp

FAILS = {"lengths_share_one_trace"}
SCORE = 5
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
