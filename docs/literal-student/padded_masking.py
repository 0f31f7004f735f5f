"""Literal student (literal student, issue 52), literal student: padding: np.asarray(values, dtype=np.float32), raise ValueError if n > size, jnp.asarray(np.pad(values,(0,size-n))), mask jnp.asarray(np.arange(size) < n); copied np.pad from worked cell [8] and the mask from cell [24]; objective: jnp.sum(jnp.where(mask, (values + 1) ** 2, 0.0)); the idea text 'selects with jnp.where(mask, per_row, 0.0)'; traces: no extra code: masked_score = jax.jit(masked_objective) was given; gradient: round 0: jnp.sum(jnp.where(mask,(log(values)-t)**2,0))/jnp.sum(mask) -> slope nan; round 1: Hint question 'rows it did not select ... hold values log cannot take' -> jnp.where(mask, values, 1.0) before log (the 1.0 was my choice); pause_and_reason: each zero row adds (0+1)**2 = 1, three rows -> 58; mask keeps padded rows out; from cells [7] and [23]"""

TEACHER = {}
WHY = {"padding": "np.asarray(values, dtype=np.float32), raise ValueError if n > size, jnp.asarray(np.pad(values,(0,size-n))), mask jnp.asarray(np.arange(size) < n); copied np.pad from worked cell [8] and the mask from cell [24]", "objective": "jnp.sum(jnp.where(mask, (values + 1) ** 2, 0.0)); the idea text 'selects with jnp.where(mask, per_row, 0.0)'", "traces": "no extra code: masked_score = jax.jit(masked_objective) was given", "gradient": "round 0: jnp.sum(jnp.where(mask,(log(values)-t)**2,0))/jnp.sum(mask) -> slope nan; round 1: Hint question 'rows it did not select ... hold values log cannot take' -> jnp.where(mask, values, 1.0) before log (the 1.0 was my choice)", "pause_and_reason": "each zero row adds (0+1)**2 = 1, three rows -> 58; mask keeps padded rows out; from cells [7] and [23]"}

# %% cell 1
import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, the names and counts of JAX's trace and compile events, and JAX's error messages may differ from what the text describes.")

# %% cell 3
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, named after the
    function traced (a jitted function traced inside another trace emits none). The
    event is not proof that the function's Python ran: after another jitted function's
    ``.clear_cache()``, a ``.trace()`` or a call with a committed array, at a signature
    already traced, emits it again while JAX reuses the jaxpr it kept. Eager operations emit one as well, because
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

# %% cell 6
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

# %% cell 8
last_padded = np.pad(last_batch, (0, 3))
with TraceWatch() as watch:
    padded_result = jitted_square_total(last_padded)
print("traces for the padded batch:", watch.count)
print("padded:", float(padded_result), " unpadded:", float(jitted_square_total(full_batch[:5])))

# %% cell 10
rows = jnp.array([2.0, 3.0, jnp.nan])
keep = jnp.array([True, True, False])
weights = keep.astype(jnp.float32)
print("multiply by 0/1 weights:", float(jnp.sum(rows * weights)))
print("select with where:      ", float(jnp.sum(jnp.where(keep, rows, 0.0))))

# %% cell 12
print("times the bool mask, eager:      ", float(jnp.sum(rows * keep)))
with jax.disable_jit():
    print("times the bool mask, disable_jit:", float(jnp.sum(rows * keep)))

# %% cell 14
def selected_loss(t):
    return jnp.sum(jnp.where(keep, (t * rows) ** 2, 0.0))


value, slope = jax.value_and_grad(selected_loss)(1.0)
print(f"selected_loss value={float(value)}  gradient={float(slope)}")

# %% cell 16
def pad_batch(values, size):
    """Pad a 1-D batch to ``size`` rows; return ``(padded, mask)``.

    ``padded`` is float32 with shape ``(size,)`` and starts with the ``n`` values;
    ``mask`` is bool with shape ``(size,)``, True on those ``n`` rows only.
    Raises ValueError when ``n > size``.
    """
    values = np.asarray(values, dtype=np.float32)
    n = len(values)
    if n > size:
        raise ValueError(f"batch of {n} rows does not fit in size {size}")
    padded = jnp.asarray(np.pad(values, (0, size - n)))
    mask = jnp.asarray(np.arange(size) < n)
    return padded, mask

# %% cell 18
demo_padded, demo_mask = pad_batch([3.0, 1.0, 4.0], 5)
print(demo_padded, demo_padded.dtype)
print(demo_mask, demo_mask.dtype)

# %% cell 22
def masked_objective(values, mask):
    """Sum of ``(values + 1) ** 2`` over the rows where ``mask`` is True."""
    per_row = (values + 1) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0))


masked_score = jax.jit(masked_objective)

# %% cell 24
five_rows = np.arange(5, dtype=np.float32)
zero_padded = jnp.asarray(np.pad(five_rows, (0, 3)))
five_mask = jnp.asarray(np.arange(8) < 5)
print("masked score:     ", float(masked_score(zero_padded, five_mask)))
print("no mask:          ", float(jnp.sum((zero_padded + 1.0) ** 2)))
print("unpadded objective:", float(np.sum((five_rows + 1.0) ** 2)))

# %% cell 30
def masked_loss(t, values, mask):
    """Mean of ``(log(values) - t) ** 2`` over the rows where ``mask`` is True."""
    values = jnp.where(mask, values, 1.0)  # unselected rows hold a value log can take
    per_row = (jnp.log(values) - t) ** 2
    return jnp.sum(jnp.where(mask, per_row, 0.0)) / jnp.sum(mask)


loss_and_slope = jax.jit(jax.value_and_grad(masked_loss))

