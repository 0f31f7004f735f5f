"""pad_batch writes the batch into a float32 zero buffer with jax.lax.dynamic_update_slice and
builds the mask as jax.lax.iota(int32, size) < n. The objective uses jnp.power on every row and
jnp.where to keep only the masked ones.
"""


TEACHER = {'test_padding': 2, 'test_objective': 3, 'test_traces': 1, 'test_gradient': 2}


WHY = {}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8


# %% cell 1 [imports] (provided, read-only)
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 3 [trace_watch] (provided, read-only)
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a
    jaxpr, named after that function. Eager operations emit one as well, named
    after their primitive (``add``, ``iota``), so build inputs before the block
    and call only the function you are studying inside it.
    """

    EVENT = "/jax/core/compile/jaxpr_trace_duration"

    def __init__(self):
        self.names = []
        self._listener = self._record

    def _record(self, event, duration_secs, **details):
        if event == self.EVENT:
            self.names.append(details.get("fun_name", "?"))

    def __enter__(self):
        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def __exit__(self, *exc_info):
        jax.monitoring.unregister_event_duration_listener(self._listener)
        return False

    @property
    def count(self):
        """How many traces started inside the block."""
        return len(self.names)


# %% cell 6 (provided)
def square_total(values):
    return jnp.sum(jnp.square(values))


jitted_square_total = jax.jit(square_total)

full_batch = np.arange(8, dtype=np.float32)
next_full_batch = full_batch + 8.0
last_batch = np.arange(5, dtype=np.float32)

with TraceWatch() as watch:
    for batch in (full_batch, next_full_batch, last_batch):
        jitted_square_total(batch)
print("traces for lengths 8, 8, 5:", watch.count)


# %% cell 8 (provided)
last_padded = np.pad(last_batch, (0, 3))
with TraceWatch() as watch:
    padded_result = jitted_square_total(last_padded)
print("traces for the padded batch:", watch.count)
print("padded:", float(padded_result), " unpadded:", float(jitted_square_total(full_batch[:5])))


# %% cell 10 (provided)
rows = jnp.array([2.0, 3.0, jnp.nan])
keep = jnp.array([True, True, False])
weights = keep.astype(jnp.float32)
print("multiply by 0/1 weights:", float(jnp.sum(rows * weights)))
print("select with where:      ", float(jnp.sum(jnp.where(keep, rows, 0.0))))


# %% cell 13 [pad_batch] (student answer)
def pad_batch(values, size):
    """Pad a 1-D batch to ``size`` rows; return ``(padded, mask)``.

    ``padded`` is float32 with shape ``(size,)`` and starts with the ``n`` values;
    ``mask`` is bool with shape ``(size,)``, True on those ``n`` rows only.
    Raises ValueError when ``n > size``.
    """
    batch = jnp.asarray(values, dtype=jnp.float32)
    if batch.ndim != 1:
        raise ValueError(f"expected a 1-D batch, got {batch.ndim} dimensions")
    n = int(batch.shape[0])
    if n > size:
        raise ValueError(f"{n} > {size}: this batch does not fit")
    padded = jax.lax.dynamic_update_slice(jnp.zeros((size,), jnp.float32), batch, (0,))
    mask = jax.lax.iota(jnp.int32, size) < n
    return padded, mask


# %% cell 15 (provided)
demo_padded, demo_mask = pad_batch([3.0, 1.0, 4.0], 5)
print(demo_padded, demo_padded.dtype)
print(demo_mask, demo_mask.dtype)


# %% cell 19 [masked_objective] (student answer)
def masked_objective(values, mask):
    """Sum of ``(values + 1) ** 2`` over the rows where ``mask`` is True."""
    per_row = jnp.power(values + 1.0, 2)
    return jnp.where(mask, per_row, 0.0).sum()


masked_score = jax.jit(masked_objective)


# %% cell 21 (provided)
five_rows = np.arange(5, dtype=np.float32)
zero_padded = jnp.asarray(np.pad(five_rows, (0, 3)))
five_mask = jnp.asarray(np.arange(8) < 5)
print("masked score:     ", float(masked_score(zero_padded, five_mask)))
print("no mask:          ", float(jnp.sum((zero_padded + 1.0) ** 2)))
print("unpadded objective:", float(np.sum((five_rows + 1.0) ** 2)))

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
