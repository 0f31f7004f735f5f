"""The student patches exactly the two paddings the self-check tries, nan and 0, replacing them by
1.0 before the log. The self-check passes, but inf, -inf and negative numbers such as -1e30 (all
named in the notebook) still produce an infinite or nan residual, and the gradient is nan.
Cleaning with the mask would have handled every case at once."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "Only nan and 0 are cleaned. Padded inf (log = inf), -inf and -1e30 (log of a negative = nan) still give a nan gradient; the notebook lists all of these.",
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
    values = jnp.asarray(values, dtype=jnp.float32)
    n = len(values)
    if n > size:
        raise ValueError("batch too long for the bucket")
    padded = jnp.pad(values, (0, size - n))
    mask = jnp.arange(size) < n
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
    bad = jnp.isnan(values) | (values == 0)         # the two cases the self-check uses
    safe_values = jnp.where(bad, 1.0, values)
    per_row = (jnp.log(safe_values) - t) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
