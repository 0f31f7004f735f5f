"""A clever value: padded rows are set to nan with jnp.where and jnp.nanmean ignores them, so the
divisor is the number of real rows for free. The gradient, however, still flows into
(log(values) - t) ** 2 at every row (jnp.where and nanmean's internal where send a zero
cotangent there), and that derivative is nan/inf on the garbage, so the gradient is nan. Self-
check fails on zero padding."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "nanmean gets the value right, but the per-row loss is still computed from log of the garbage; the backward pass sends 0 into it at padded rows and 0 * nan = nan. Gradient nan for 0, nan, inf, -inf, -1e30 padding.",
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
    per_row = (jnp.log(values) - t) ** 2
    # mark padded rows as nan and let nanmean skip them: the count comes for free
    return jnp.nanmean(jnp.where(mask, per_row, jnp.nan))


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
