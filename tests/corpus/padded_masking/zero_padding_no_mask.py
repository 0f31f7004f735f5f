"""Zero padding without a mask: `masked_score` ignores `mask` and sums every row.

Each zero pad adds (0 + 1)**2 = 1, so the objective is too large by the number of
padded rows, and nan/inf garbage in the padding reaches the sum.
"""
import jax
import jax.numpy as jnp

FAILS = {"objective_preserved", "garbage_in_padding_ignored"}
SCORE = 3
MESSAGE = r"It is 3 too large, as if 3 padded row\(s\) were counted"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum((values + 1.0) ** 2))
