"""The student cleans the padded values to 1.0 and believes that makes the padded rows vanish
because log(1) = 0. But the loss of a padded row is (0 - t) ** 2 = t ** 2, which is added to the
sum, and its derivative 2t is added to the gradient. Finite, but wrong for every t except 0
whenever there is padding."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "Padded rows hold log(1) = 0 but their loss is (0 - t) ** 2 = t ** 2, not 0: each padded row adds t ** 2 to the sum and -2 * (0 - t) = 2t to the gradient's sum. Right only when t = 0 or there is no padding.",
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
    safe_values = jnp.where(mask, values, 1.0)     # log(1) = 0 on the padding
    return jnp.sum((jnp.log(safe_values) - t) ** 2) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
