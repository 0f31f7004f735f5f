"""`pad_batch` fills `np.zeros(size)`, NumPy's default float64, instead of a float32 array.

Only the layout fails: jit converts float64 NumPy input to float32 (x64 is off), so the
objective is right and the signature is the same for every length.
"""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"pad_batch_layout"}
SCORE = 5
MESSAGE = r"padded values of dtype float64; they should be float32"


def pad_batch(values, size):
    n = len(values)
    if n > size:
        raise ValueError("too many values")
    padded = np.zeros(size)
    padded[:n] = np.asarray(values)
    return padded, np.arange(size) < n


masked_score = jax.jit(lambda values, mask: jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0)))
