"""The textbook "double where": the student first replaces every padded value by 1.0 with
jnp.where(mask, values, 1.0), so log and the squared residual are finite on every row, then
selects the real rows with a second jnp.where and divides by the number of True rows. Nothing
non-finite is ever computed, so the zero cotangent sent back to the padded rows meets finite
derivatives: the value and the gradient in t equal the unpadded loss's for every garbage, mask
layout, size and t. Parts A and B are correct. Full marks."""

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
    safe_values = jnp.where(mask, values, 1.0)      # log(1) = 0: padded rows can no longer hold garbage
    per_row = (jnp.log(safe_values) - t) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
