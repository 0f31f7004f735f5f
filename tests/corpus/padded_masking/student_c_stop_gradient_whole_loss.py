"""The cleaning and selection are right, but the student adds jax.lax.stop_gradient over the whole
per-row loss "to keep the padding out of the gradient". That cuts the real rows off too: the
gradient in t is 0.0 for every batch. The value is right and nothing is nan, so it looks
healthy; the self-check catches the wrong slope."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "stop_gradient is applied to the whole per-row loss, real rows included, so the gradient in t is always 0 (finite but wrong) while the value is right.",
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
    # keep the padding out of the gradient
    per_row = jax.lax.stop_gradient(per_row)
    return jnp.sum(per_row) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
