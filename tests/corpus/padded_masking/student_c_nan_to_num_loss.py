"""The student wraps the final loss in jnp.nan_to_num, hoping to protect the training step. The
value was already right thanks to jnp.where; the gradient's nan does not come from the output
but from 0 * nan at the padded rows inside the backward pass, so nan_to_num of the output leaves
the gradient nan for every non-finite or non-positive padding."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "nan_to_num on the returned loss changes nothing: the value was already finite, and the nan in the gradient is produced in the backward pass at the padded rows (0 * nan), below nan_to_num. Gradient nan for 0, nan, inf, -inf, -1e30 padding.",
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
    return jnp.where(mask, jnp.square(values + 1.0), 0.0).sum()


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    per_row = jnp.where(mask, (jnp.log(values) - t) ** 2, 0.0)
    loss = jnp.sum(per_row) / jnp.sum(mask)
    return jnp.nan_to_num(loss)                     # make sure nothing non-finite comes out


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
