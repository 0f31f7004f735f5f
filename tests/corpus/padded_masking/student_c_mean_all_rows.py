"""The cleaning and selection are right (no nan anywhere, in value or gradient) but the student
writes jnp.mean over the padded array, which divides by the bucket size instead of the number of
real rows. The value and the gradient are scaled by n/size; right only for a full batch. The
self-check catches it."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "jnp.mean divides by the padded size, not by the number of real rows: with 3 real rows in 8 both value and gradient are 3/8 of the right ones. Right only when the mask is all True.",
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
    safe_values = jnp.where(mask, values, 1.0)
    per_row = jnp.where(mask, (jnp.log(safe_values) - t) ** 2, 0.0)
    return jnp.mean(per_row)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
