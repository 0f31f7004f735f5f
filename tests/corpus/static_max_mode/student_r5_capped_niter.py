"""Student "capped_niter": keeps n_iter traced by unrolling a fixed maximum of rounds.

Parts A and B are correct (Part B: `jax.jit(choose_reduction, static_argnames="mode")`).
In Part C the student wanted n_iter to be data too, but without `lax.fori_loop`: the loop
always runs MAX_ITER = 8 rounds and each round is masked with
`jnp.where(i < n_iter, smoothed, y)`. mode is static, eps and clip_at are traced and the
`if` became jnp.where, so trace counts are fine and the values are right for n_iter up to 8.
But the contract allows any whole number n_iter from 0 up: for n_iter > 8 the function
silently does only 8 rounds and returns the wrong vector (no error). The public self-check
does NOT catch it (it never uses n_iter above 3).
"""

TEACHER = {"test_modes": 3, "test_errors": 1, "test_traces": 2, "test_sorting": 1}
WHY = {
    "test_sorting": 'Trace counts are right, but the smoothing is capped at 8 rounds, so any n_iter above 8 silently gives values different from normalise.',
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'sorted_values_match'}
SCORE = 7

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


three = jnp.arange(3, dtype=jnp.float32)
print(jax.make_jaxpr(square_total)(three))

# %% cell 8
jitted_square_total = jax.jit(square_total)

experiments = [
    ("first call", three),
    ("new values, same shape", three + 10.0),
    ("new shape", jnp.arange(5, dtype=jnp.float32)),
]
for label, values in experiments:
    with TraceWatch() as watch:
        result = jitted_square_total(values)
    print(f"{label:<24} shape={values.shape} dtype={values.dtype} traces={watch.count} result={float(result)}")

# %% cell 10
def power_sum(values, power):
    if power == 1:  # fine: power is a concrete Python int while tracing
        return jnp.sum(values)
    return jnp.sum(values ** power)


compiled_power_sum = jax.jit(power_sum, static_argnames=("power",))
print(jax.make_jaxpr(power_sum, static_argnums=1)(three, 1))
print(jax.make_jaxpr(power_sum, static_argnums=1)(three, 3))

doubled = three * 2.0  # built outside the block: eager operations are traced too
with TraceWatch() as watch:
    compiled_power_sum(three, power=3)
    compiled_power_sum(doubled, power=3)  # same power, new values: reused
    compiled_power_sum(three, power=1)    # new static value: a second program
print("traces:", watch.count, watch.names)

# %% cell 12
def scaled_total(values, scale):
    return jnp.sum(scale * values)


compiled_scaled_total = jax.jit(scaled_total)
strong_scale = jnp.float32(2.0)  # built outside the block
with TraceWatch() as watch:
    compiled_scaled_total(three, 2.0)           # weakly typed scale: first trace
    compiled_scaled_total(three, 5.0)           # another Python float: reused
    compiled_scaled_total(three, strong_scale)  # same number, strong float32: a new trace
print("traces:", watch.count)
print(jax.typeof(2.0), "weak:", jax.typeof(2.0).weak_type, "|", jax.typeof(strong_scale), "weak:", jax.typeof(strong_scale).weak_type)

# %% cell 14
def choose_reduction(values, mode):
    """Reduce every element of ``values`` with the reduction named by ``mode``.

    ``mode`` is configuration ("sum", "mean" or "max"), not data; any other
    value raises ValueError.
    """
    if mode == "sum":
        return jnp.sum(values)
    elif mode == "mean":
        return jnp.mean(values)
    elif mode == "max":
        return jnp.max(values)
    else:
        raise ValueError(f"unknown mode {mode!r}")

# %% cell 16
negatives = jnp.array([-4.0, -1.0, -2.0])
for mode in ("sum", "mean", "max"):
    print(mode, float(choose_reduction(negatives, mode)))

# %% cell 18
# choose: choose_reduction, compiled
choose = jax.jit(choose_reduction, static_argnames="mode")

# %% cell 20
# Your prediction: how many traces will each row of the sequence below start? Replace each None.
predicted_traces = [1, 0, 1, 1]

# %% cell 21
x = jnp.array([1.0, 5.0, 3.0])
sequence = [
    ("first call", x, "sum"),
    ("new values only", x * 2.0, "sum"),
    ("new mode only", x, "max"),
    ("new shape only", jnp.arange(4.0), "max"),
]
for (label, values, mode), guess in zip(sequence, predicted_traces):
    with TraceWatch() as watch:
        out = choose(values, mode=mode)
    print(f"{label:<16} shape={values.shape} mode={mode:<4} predicted={guess} traces={watch.count} result={float(out)}")

# %% cell 31
def normalise(x, mode, n_iter, eps, clip_at):
    """Smooth ``x``, divide it by its size plus ``eps``, and scale it down to ``clip_at``."""
    y = x
    for _ in range(n_iter):  # each round averages every entry with its left neighbour
        y = 0.5 * (y + jnp.roll(y, 1))
    if mode == "l2":
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    if peak > clip_at:  # too large: shrink the whole vector so its largest magnitude is clip_at
        y = y * (clip_at / peak)
    return y


signal = jnp.array([3.0, -1.0, 4.0, 1.0, -5.0])
print(normalise(signal, "max", 2, 0.5, 0.6))

# %% cell 33
# normalise_jitted: normalise, compiled (the contract above)
MAX_ITER = 8  # n_iter is small in practice


def _normalise_masked(x, mode, n_iter, eps, clip_at):
    y = x
    for i in range(MAX_ITER):  # fixed length loop, rounds past n_iter are masked out
        y = jnp.where(i < n_iter, 0.5 * (y + jnp.roll(y, 1)), y)
    if mode == "l2":
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(_normalise_masked, static_argnames=("mode",))

# %% cell 35
ledger_x = jnp.linspace(-1.0, 2.0, 6)
ledger_rows = [
    ("first call", (ledger_x, "l2", 2, 0.1, 0.5)),
    ("new x values", (ledger_x * -3.0, "l2", 2, 0.1, 0.5)),
    ("new eps", (ledger_x, "l2", 2, 0.2, 0.5)),
    ("new clip_at", (ledger_x, "l2", 2, 0.2, 0.3)),
    ("new mode", (ledger_x, "max", 2, 0.2, 0.3)),
    ("new n_iter", (ledger_x, "max", 3, 0.2, 0.3)),
    ("0-d array eps, clip_at", (ledger_x, "max", 3, jnp.float32(0.2), jnp.float32(0.3))),
    ("new array values", (ledger_x, "max", 3, jnp.float32(0.4), jnp.float32(0.1))),
]  # every input is built before the watched calls
for label, args in ledger_rows:
    with TraceWatch() as watch:
        out = normalise_jitted(*args)
    print(f"{label:<24} traces={watch.count} peak={float(jnp.max(jnp.abs(out))):.4f}")
