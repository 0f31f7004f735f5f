"""This student multiplies by the boolean mask in both parts, the approach the notebook warns
against. Compiled, XLA turns `x * bool` into a select, so the Part B self-check and the Part C
value look fine; under jax.disable_jit() the product is computed as written and padded nan/inf/0
give a nan value. The Part C gradient is nan in every mode because the backward pass multiplies
0 by the non-finite residual. Part A correct, traces fine."""

TEACHER = {"test_padding": 2, "test_objective": 0, "test_traces": 1, "test_gradient": 0}

WHY = {
    "test_objective": "masked_objective multiplies by the boolean mask. Compiled, XLA rewrites it into a select and the self-check passes, but op by op (jax.disable_jit(), which the notebook says the graders use) nan or inf padding gives 0 * nan = nan. Forbidden explicitly in Part B.",
    "test_gradient": "Multiplying by the mask: op by op the value is nan for nan/inf/0 padding, and the gradient is nan even compiled (0 * nan in the backward pass).",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"garbage_in_padding_ignored", "gradient_survives_padding"}
SCORE = 5
REVIEW = "Part B's three properties are judged apart: the objective is right on clean padding and compiled (2 points); multiplying by the mask lets nan through when run op by op, which costs the garbage property's point."


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
    return jnp.sum(per_row * mask)


masked_score = jax.jit(masked_objective)


# %% cell 30 [masked_loss] (answer)
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    per_row = (jnp.log(values) - t) ** 2
    return jnp.sum(per_row * mask) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))
