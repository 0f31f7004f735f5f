"""The student has the right idea (clean the padded values with jnp.where before the log) but
reuses the zero fill from Part A. log(0) = -inf, so every padded row still has an infinite
residual and the gradient in t is nan whenever the batch has padding, whatever it holds. The
value is correct, and so is the answer for a full mask, but the self-check with padding fails."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "The padded rows are cleaned to 0.0, and log(0) = -inf, so the residual is +inf and the gradient 0 * inf = nan for every padding, including plain zeros. The value is right, the gradient never is when there is padding.",
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
    clean = jnp.where(mask, values, 0.0)           # same fill as pad_batch uses
    per_row = (jnp.log(clean) - t) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
