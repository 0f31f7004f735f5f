"""Cleaning and selection are right, but the student counts the real rows from the values
("measurements are positive": jnp.sum(values > 0)) instead of from the mask. Padded zeros, nan,
-inf and negatives are not counted, so the self-check passes, but padded inf, 1e30 or any
positive junk is counted and both the value and the gradient are divided by too large a number."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "The divisor counts positive values, not True mask rows: padded inf or 1e30 (or any positive junk) is counted, so value and gradient are too small (e.g. 3 real rows with 5 inf padded rows: divided by 8). Passes the self-check, which pads with 0 and nan only.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"gradient_survives_padding"}
SCORE = 6


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
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    n = values.shape[0]
    if n > size:
        raise ValueError(f"a batch of {n} rows does not fit in {size} rows")
    padded = np.zeros(size, dtype=np.float32)
    padded[:n] = values
    mask = np.arange(size) < n
    return jnp.asarray(padded), jnp.asarray(mask)


# %% cell 22 [masked_objective] (answer)
def masked_objective(values, mask):
    """Sum of ``(values + 1) ** 2`` over the rows where ``mask`` is True."""
    per_row = (values + 1.0) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0))


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    safe_values = jnp.where(mask, values, 1.0)
    per_row = jnp.where(mask, (jnp.log(safe_values) - t) ** 2, 0.0)
    n_real = jnp.sum(values > 0)                    # real measurements are positive
    return jnp.sum(per_row) / n_real


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
