"""Part C selects the residual log(v) - t, not the squared loss, and squares afterwards. The
derivative of the residual in t is the constant -1 (the notebook's "f = t + x" case), so the
zero cotangent at padded rows stays zero and the nan/inf in log(values) never reach the
gradient; the value is exact because the selected residual is 0 on padded rows. Dividing by
count_nonzero(mask) is the number of real rows. Correct, in an unusual style. Part A is correct.
Part B is wrong: the student counts the True rows and keeps that many from the front, which only
works for prefix masks (the notebook says explicitly that a mask may mark any rows)."""

TEACHER = {"test_padding": 2, "test_objective": 0, "test_traces": 1, "test_gradient": 2}

WHY = {
    "test_objective": "masked_objective counts the True rows and keeps that many rows from the front, which the notebook forbids (\"do not count the True rows and keep that many from the front\"). With a non-prefix mask such as [False, True, False, True] it sums rows 0 and 1 instead of rows 1 and 3, and a nan in an unmarked front row makes the score nan. The self-check only uses prefix masks, so it passes.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"garbage_in_padding_ignored"}
SCORE = 7
REVIEW = "Part B's three properties are judged apart: the objective is right on clean padding (2 points); keeping the first rows by count fails only when real rows are not a prefix, the garbage property's point."


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
    n = jnp.sum(mask)
    first_n = jnp.arange(values.shape[0]) < n
    return jnp.sum(jnp.where(first_n, (values + 1.0) ** 2, 0.0))


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    residual = jnp.where(mask, jnp.log(values) - t, 0.0)
    return jnp.sum(residual ** 2) / jnp.count_nonzero(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
