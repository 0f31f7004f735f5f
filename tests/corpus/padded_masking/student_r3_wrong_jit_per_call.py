"""Pavel Horak: wants masked_score to always use the latest masked_objective, so he wraps it as a function that builds jax.jit(lambda v, m: masked_objective(v, m)) on every call. Values are right, but a fresh lambda means an empty cache each time: every batch traces again, so different lengths never share one program."""

# Teacher's split per graded cell (same for every file of this assignment):
# test_padding (2):   1   = padded is float32, shape (size,), first n entries are the values, for list / NumPy / JAX
#                           input, integers included;
#                     0.5 = mask is bool, shape (size,), True exactly on the first n rows (n == size and n == 0 included);
#                     0.5 = n > size raises ValueError (no silent truncation, no other exception type).
# test_objective (3): 1   = masked_score equals the unpadded objective sum((v+1)**2) for prefix masks with clean padding;
#                     1   = padded rows holding nan / inf / huge values never change the value, also when run
#                           op by op under jax.disable_jit() (select with jnp.where, no multiply by the mask);
#                     0.5 = arbitrary (non-prefix) masks are honoured;
#                     0.5 = edge cases: an all-False mask scores 0.0, a marked row holding nan makes the sum nan.
# test_traces (1):    1   = batches of different lengths padded to one size share a single trace of masked_score
#                           (same shape, dtype and weak-type for every length, one jit object).

TEACHER = {'test_padding': 2, 'test_objective': 3, 'test_traces': 0, 'test_gradient': 2}
WHY = {'test_traces': 'A new jit around a fresh lambda per call traces on every call, so padded batches do not share a single trace.'}


# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'lengths_share_one_trace'}
SCORE = 7

# %% cell 1 [imports]
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 3 [trace_watch]
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a
    jaxpr, named after that function. Eager operations emit one as well, because
    JAX runs each as a small jitted function of its own (``multiply``,
    ``_reduce_sum``, ``iota``...), but only the first time an operation meets a
    signature: a repeat at a signature already met emits nothing. So build inputs
    before the block, call only the function you are studying inside it, and look
    for its name in ``names``.
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


# %% cell 6 [demo]
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


# %% cell 8 [demo]
last_padded = np.pad(last_batch, (0, 3))
with TraceWatch() as watch:
    padded_result = jitted_square_total(last_padded)
print("traces for the padded batch:", watch.count)
print("padded:", float(padded_result), " unpadded:", float(jitted_square_total(full_batch[:5])))


# %% cell 10 [demo]
rows = jnp.array([2.0, 3.0, jnp.nan])
keep = jnp.array([True, True, False])
weights = keep.astype(jnp.float32)
print("multiply by 0/1 weights:", float(jnp.sum(rows * weights)))
print("select with where:      ", float(jnp.sum(jnp.where(keep, rows, 0.0))))


# %% cell 12 [demo]
print("times the bool mask, eager:      ", float(jnp.sum(rows * keep)))
with jax.disable_jit():
    print("times the bool mask, disable_jit:", float(jnp.sum(rows * keep)))


# %% cell 14 [demo]
def selected_loss(t):
    return jnp.sum(jnp.where(keep, (t * rows) ** 2, 0.0))


def cleaned_loss(t):
    clean_rows = jnp.where(keep, rows, 0.0)  # padded inputs replaced before anything is computed
    return jnp.sum(jnp.where(keep, (t * clean_rows) ** 2, 0.0))


for loss in (selected_loss, cleaned_loss):
    value, slope = jax.value_and_grad(loss)(1.0)
    print(f"{loss.__name__:<14} value={float(value)}  gradient={float(slope)}")


# %% cell 16 [pad_batch]
def pad_batch(values, size):
    """Pad a 1-D batch to ``size`` rows; return ``(padded, mask)``."""
    arr = np.asarray(values, dtype=np.float32).reshape(-1)
    n = arr.shape[0]
    if n > size:
        raise ValueError(f"a batch of {n} rows does not fit in size {size}")
    padded = np.zeros(size, dtype=np.float32)
    padded[:n] = arr
    mask = np.arange(size) < n
    return jnp.asarray(padded), jnp.asarray(mask)


# %% cell 18 [demo]
demo_padded, demo_mask = pad_batch([3.0, 1.0, 4.0], 5)
print(demo_padded, demo_padded.dtype)
print(demo_mask, demo_mask.dtype)


# %% cell 22 [masked_objective]
def masked_objective(values, mask):
    """Sum of ``(values + 1) ** 2`` over the rows where ``mask`` is True."""
    per_row = (values + 1.0) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0))


def masked_score(values, mask):
    # always compile the current masked_objective
    return jax.jit(lambda v, m: masked_objective(v, m))(values, mask)


# %% cell 24 [demo]
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
