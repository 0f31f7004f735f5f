"""The student computes the residual on all rows, then routes padded rows through stop_gradient
with an inner jnp.where, and selects the squared residual with an outer jnp.where. The outer
select gives a nan cotangent into residual ** 2 at padded rows (0 * 2 * nan), but the inner
where hands only the True rows' cotangent to the differentiable branch, and the stop_gradient
branch passes nothing back, so the nan is dropped before it reaches t. Surprising but valid:
value and gradient are right for every garbage kind, compiled and op by op. Part B uses
jnp.sum(..., where=mask), which selects as well. Full marks."""

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
    return jnp.sum(per_row, where=mask)


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    residual = jnp.log(values) - t
    # padded rows keep their (garbage) residual but with no path back to t
    residual = jnp.where(mask, residual, jax.lax.stop_gradient(residual))
    per_row = jnp.where(mask, residual ** 2, 0.0)
    return jnp.sum(per_row) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
