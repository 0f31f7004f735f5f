"""Reductions and ValueError are correct, but `choose` is a def that builds
jax.jit(lambda v: choose_reduction(v, mode)) on every call, closing over the mode instead of
declaring it static. Each call therefore starts with an empty cache and traces again, exactly
the mistake Part B warns about.
"""


TEACHER = {'test_modes': 3, 'test_errors': 1, 'test_traces': 0, 'test_sorting': 2}


WHY = {
    'test_traces': 'a new jit around a fresh lambda is made on every call, so value-only changes trace every time and mode is never declared static via static_argnames.',
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"traces_bounded_by_signatures", "values_only_no_retrace"}
SCORE = 6


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


three = jnp.arange(3, dtype=jnp.float32)
print(jax.make_jaxpr(square_total)(three))


# %% cell 8 (provided)
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


# %% cell 10 (provided)
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


# %% cell 12 [choose_reduction] (student answer)
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
    raise ValueError(f"mode {mode!r} is not one of sum/mean/max")


# %% cell 14 (provided)
negatives = jnp.array([-4.0, -1.0, -2.0])
for mode in ("sum", "mean", "max"):
    print(mode, float(choose_reduction(negatives, mode)))


# %% cell 16 [choose] (student answer)
# choose: the compiled choose_reduction, with mode static
def choose(values, mode):
    # mode is captured by the lambda, so Python sees the real string while tracing
    return jax.jit(lambda v: choose_reduction(v, mode))(values)


# %% cell 18 (provided)
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
