"""Multiplies by the mask (forbidden), then hides the nans with `jnp.nan_to_num`. Unmarked
garbage vanishes, but so does a nan in a *marked* row, which is data: the sum over the marked
rows is then nan, and this answer says a finite number."""
import jax
import jax.numpy as jnp

FAILS = {"garbage_in_padding_ignored"}
SCORE = 5
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
