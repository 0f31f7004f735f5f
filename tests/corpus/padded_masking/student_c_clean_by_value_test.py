"""The student cleans by what the values look like (finite and positive) rather than by the mask,
and selects the rows with the mask afterwards. Real rows are positive finite float32 numbers, so
they are never altered; every padded garbage the notebook lists (nan, +-inf, -1e30, zeros) is
replaced by 1.0, and 1e30 is left as it is but its log (about 69) is finite. So every per-row
loss is finite and the zero cotangent never meets nan or inf. Value and gradient correct; the
mask still decides what counts. Unusual but valid. Part A pads with nan (allowed), Part B
correct."""

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
    values = np.asarray(values, dtype=np.float32)
    n = len(values)
    if n > size:
        raise ValueError("too many rows")
    # fill the padding with nan so that a missing mask would show up at once
    padded = np.concatenate([values, np.full(size - n, np.nan, dtype=np.float32)])
    mask = np.concatenate([np.ones(n, dtype=bool), np.zeros(size - n, dtype=bool)])
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
    usable = jnp.isfinite(values) & (values > 0)
    safe_values = jnp.where(usable, values, 1.0)   # anything log cannot take becomes 1.0
    per_row = (jnp.log(safe_values) - t) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
