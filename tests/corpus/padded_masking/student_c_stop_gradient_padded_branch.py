"""The student reads that the gradient leaks through the padded rows and puts jax.lax.stop_gradient
on the zero that jnp.where selects there. But the zero branch was never the problem: jnp.where
sends a zero cotangent into the per_row branch at the padded rows, and that branch's derivative
there is nan or inf. The value is right, the gradient is nan; identical to the notebook's
selected_loss."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "stop_gradient on the zero branch blocks a branch that never carried a gradient; the nan comes from the other branch, whose derivative is evaluated on every row and multiplied by the zero cotangent: 0 * nan = nan. Gradient nan for 0, nan, inf, -inf, -1e30 padding.",
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
    per_row = (jnp.log(values) - t) ** 2
    # padded rows: a constant zero with no gradient at all
    per_row = jnp.where(mask, per_row, jax.lax.stop_gradient(jnp.zeros_like(per_row)))
    return jnp.sum(per_row) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
