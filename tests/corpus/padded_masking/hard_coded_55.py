"""`masked_score` returns the lesson's printed answer, 55.0, whatever the batch.

It passes the visible example (five values 0..4 padded to eight rows) and nothing else.
"""
import jax
import jax.numpy as jnp

FAILS = {"objective_preserved", "garbage_in_padding_ignored"}
SCORE = 3
MESSAGE = r"gives the wrong objective\.\n.*\n\s+Got:\s+55\.0"


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError("too many values")
    return jnp.pad(values, (0, size - n)), jnp.arange(size) < n


@jax.jit
def masked_score(values, mask):
    return jnp.float32(55.0)
