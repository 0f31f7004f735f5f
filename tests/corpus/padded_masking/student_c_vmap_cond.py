"""Per-row lax.cond under vmap. Under vmap a cond with a batched predicate becomes a select that
evaluates both branches, so one might expect the same nan gradient as the notebook's
selected_loss; it does not happen, because differentiation of cond happens branch by branch: the
transposed false branch is a constant zero and the transposed true branch's nan result is then
discarded by the select, never multiplied into t's gradient. I checked value and gradient
against float64 NumPy for every garbage kind, mask layout, size and t, compiled and with
disable_jit: all exact. Unusual but valid. Parts A and B correct."""

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
    def row_loss(value, real):
        return jax.lax.cond(real, lambda: (jnp.log(value) - t) ** 2, lambda: jnp.zeros_like(t))

    per_row = jax.vmap(row_loss)(values, mask)
    return jnp.sum(per_row) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
