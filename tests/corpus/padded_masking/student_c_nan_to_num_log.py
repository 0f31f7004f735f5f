"""The student removes nan and inf after the log with jnp.nan_to_num, then selects with jnp.where.
nan_to_num maps -inf and inf to -+3.4e38, the largest float32. The value is fine, but the
derivative of the squared residual at those rows is 2 * (3.4e38 - t), which overflows to inf,
and the zero cotangent times inf is nan: the gradient is nan for padded zeros and inf (padded
-inf and negatives have log nan, which nan_to_num maps to a harmless 0). "No nan left" is not
the same as "finite derivative"."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "nan_to_num turns log(0) = -inf and log(inf) = inf into -+3.4e38, so 2 * (logs - t) overflows to -+inf in float32 and the backward pass computes 0 * inf = nan. The gradient is nan for padded 0 and inf (padded -inf or negatives give log = nan, mapped to 0, harmless). Zero padding, the self-check's own case, already gives nan.",
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
    logs = jnp.nan_to_num(jnp.log(values))          # no more nan or inf after the log
    per_row = jnp.where(mask, (logs - t) ** 2, 0.0)
    return jnp.sum(per_row) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
