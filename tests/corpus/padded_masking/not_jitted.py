"""`masked_score` is a plain Python function: the right numbers, but no `jax.jit`."""
import jax.numpy as jnp

FAILS = {"lengths_share_one_trace"}
SCORE = 5
MESSAGE = r"JAX traced none of your code: it is not compiled with `jax\.jit`"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.zeros(size, jnp.float32).at[:n].set(values), jnp.arange(size) < n


def masked_score(values, mask):
    return jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0))
