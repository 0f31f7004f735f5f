"""The student keeps only the real rows with boolean indexing, which is the most natural NumPy
answer and gives the exact value and gradient op by op. But loss_and_slope is compiled with
jax.jit, and values[mask] has a shape that depends on the data, so the call raises
NonConcreteBooleanIndexError. The self-check fails at once."""

TEACHER = {"test_padding": 2, "test_objective": 3, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_gradient": "values[mask] has a data-dependent shape: under jax.jit (loss_and_slope is compiled) it raises NonConcreteBooleanIndexError. It only works op by op.",
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
    real_values = values[mask]                      # keep only the real rows
    return jnp.mean((jnp.log(real_values) - t) ** 2)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
