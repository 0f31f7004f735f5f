"""The student cleans the padded values first (jnp.where(mask, values, 1.0)) and only then uses the
mask as float 0/1 weights in a dot product. The notebook warns against multiplying by the mask,
but the warning is about garbage reaching the product: here every per-row loss is finite, so 0 *
finite = 0 in the value and in the gradient, compiled or op by op. Value and gradient equal the
unpadded loss's for every garbage and mask. Correct in an unusual style; Parts A and B correct."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 2}

WHY = {
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8


# %% cell 1 [imports] (provided, read-only)
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 16 [pad_batch] (answer)
def pad_batch(values, size):
    """Pad a 1-D batch to ``size`` rows; return ``(padded, mask)``.

    ``padded`` is float32 with shape ``(size,)`` and starts with the ``n`` values;
    ``mask`` is bool with shape ``(size,)``, True on those ``n`` rows only.
    Raises ValueError when ``n > size``.
    """
    batch = np.array(values, dtype=np.float32)
    n = batch.size
    if n > size:
        raise ValueError(f"n={n} > size={size}")
    padded = jnp.zeros((size,), jnp.float32).at[:n].set(batch)
    mask = jnp.zeros((size,), bool).at[:n].set(True)
    return padded, mask


# %% cell 22 [masked_objective] (answer)
def masked_objective(values, mask):
    """Sum of ``(values + 1) ** 2`` over the rows where ``mask`` is True."""
    per_row = (values + 1.0) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0))


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    weights = mask.astype(jnp.float32)
    safe_values = jnp.where(mask, values, 1.0)
    per_row = jnp.square(jnp.log(safe_values) - t)
    # after cleaning, every per_row is finite, so multiplying by 0/1 weights is safe
    return jnp.dot(weights, per_row) / jnp.sum(weights)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
