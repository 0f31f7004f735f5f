"""Jonas Berg: normalises the mode with str(mode).strip().lower() so that users can write 'Max' or ' sum'. None and numbers still raise ValueError, but the notebook names the typo 'Max' as a mode that must stop the program; here it quietly computes a max."""

# Teacher's split per graded cell (same for every file of this assignment):
# test_modes (3):  1 per mode ("sum", "mean", "max"): the reduction over ALL elements of values, a 0-d result for any
#                  shape (2-D included) and any sign (all-negative data included), both from choose_reduction (eager)
#                  and through choose. A mode right only for some shapes/signs keeps half of its point.
# test_errors (1): 0.5  = choose_reduction raises ValueError for every unknown mode (typo, case variant such as "Max",
#                         other word, None, a number), never a silent result and never another exception type;
#                  0.25 = choose raises ValueError for the same modes;
#                  0.25 = the ValueError message names the offending mode.
# test_traces (2): 1    = value-only changes reuse the compiled programs (choose built once, values traced);
#                  0.5  = mode declared static through static_argnames, so each mode is its own program;
#                  0.5  = never more than one trace per new (shape, dtype, mode) signature.

TEACHER = {'test_modes': 3, 'test_errors': 0.5, 'test_traces': 2, 'test_sorting': 2}
WHY = {'test_errors': "Case and whitespace variants such as 'Max' are accepted instead of raising ValueError (eagerly and through choose)."}


# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'unknown_mode_raises'}
SCORE = 7
REVIEW = 'test_errors: the teacher kept 0.5 of 1 for the parts still right; the properties do not split that finely: the submission breaks `unknown_mode_raises` (1), each is lost whole (0 left).'

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


three = jnp.arange(3, dtype=jnp.float32)
print(jax.make_jaxpr(square_total)(three))


# %% cell 8 [demo]
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


# %% cell 10 [demo]
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


# %% cell 12 [demo]
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


# %% cell 14 [choose_reduction]
def choose_reduction(values, mode):
    """Reduce every element of ``values`` with the reduction named by ``mode``."""
    name = str(mode).strip().lower()
    if name == "sum":
        return jnp.sum(values)
    if name == "mean":
        return jnp.mean(values)
    if name == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


# %% cell 16 [demo]
negatives = jnp.array([-4.0, -1.0, -2.0])
for mode in ("sum", "mean", "max"):
    print(mode, float(choose_reduction(negatives, mode)))


# %% cell 18 [choose]
choose = jax.jit(choose_reduction, static_argnames=("mode",))


# %% cell 20 [demo]
x = jnp.array([1.0, 5.0, 3.0])
sequence = [
    ("first call", x, "sum"),
    ("new values only", x * 2.0, "sum"),
    ("new mode only", x, "max"),
    ("new shape only", jnp.arange(4.0), "max"),
]
for label, values, mode in sequence:
    with TraceWatch() as watch:
        out = choose(values, mode=mode)
    print(f"{label:<16} shape={values.shape} dtype={values.dtype} mode={mode:<4} traces={watch.count} result={float(out)}")


# Part C, answered correctly (this file is about another part).
import jax as _jax_c
import jax.numpy as _jnp_c


def _normalise_staged(x, mode, n_iter, eps, clip_at):
    y = x
    for _ in range(n_iter):
        y = 0.5 * (y + _jnp_c.roll(y, 1))
    if mode == "l2":
        size = _jnp_c.sqrt(_jnp_c.sum(y * y))
    elif mode == "max":
        size = _jnp_c.max(_jnp_c.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    y = y / (size + eps)
    peak = _jnp_c.max(_jnp_c.abs(y))
    return _jnp_c.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = _jax_c.jit(_normalise_staged, static_argnames=("mode", "n_iter"))
