"""Part C cleans after the log rather than before it: jnp.where(mask, jnp.log(values), 0.0). The
log of a padded row is still nan/inf, but the only path from t to the loss is residual = logs -
t, and logs is already finite on every row, so the backward pass never multiplies a zero by nan
or inf (the log's own derivative is never needed, because the gradient asked for is in t only).
Value and gradient are right for every garbage; an unusual but valid choice. Part A is wrong:
the student pads with nan and builds the mask from the values (~isnan), so a real row that holds
nan is marked as padding, against "it comes from n, not from the values". Part B is correct."""

TEACHER = {"test_padding": 0, "test_objective": 3, "test_traces": 1, "test_gradient": 2}

WHY = {
    "test_padding": "pad_batch fills the padding with nan and derives the mask as ~isnan(padded). The notebook says the mask \"comes from n, not from the values\" and that \"a number may be nan\": a real row holding nan gets mask False (pad_batch([1.0, nan], 3) gives mask [True, False, False]). The self-check has no nan in a real row, so it passes, but the contract is broken.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"pad_batch_layout"}
SCORE = 7
REVIEW = "Part A's properties are judged apart: the mask built from isnan breaks the layout property (1 point lost), while the refusal of a batch too long is right (1 point)."


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
    if values.shape[0] > size:
        raise ValueError("batch does not fit")
    # pad with nan, then the mask is simply "not nan"
    padded = np.full(size, np.nan, dtype=np.float32)
    padded[: values.shape[0]] = values
    mask = ~np.isnan(padded)
    return jnp.asarray(padded), jnp.asarray(mask)


# %% cell 22 [masked_objective] (answer)
def masked_objective(values, mask):
    """Sum of ``(values + 1) ** 2`` over the rows where ``mask`` is True."""
    return jnp.where(mask, jnp.square(values + 1.0), 0.0).sum()


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    logs = jnp.where(mask, jnp.log(values), 0.0)     # clean after the log instead of before it
    residual = logs - t
    return jnp.sum(jnp.where(mask, residual ** 2, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
