"""Part A normalises the mode with mode.lower() 'to be friendly', so 'Max' is accepted as 'max' instead
of raising ValueError, and None raises AttributeError rather than ValueError: test_errors fails (the
notebook lists 'Max' as a typo that must stop the program). Sum, mean and max themselves are right,
and choose is the proper static jit. Part C is the standard correct answer: mode and n_iter static,
eps and clip_at dynamic, clip with jnp.where."""

TEACHER = {"test_modes": 3, "test_errors": 0, "test_traces": 2, "test_sorting": 2}

WHY = {
    'test_errors': "mode.lower() accepts 'Max' (must raise ValueError) and None raises AttributeError, not ValueError.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"unknown_mode_raises"}
SCORE = 7


# %% cell 1 [imports] (provided, read-only)
import jax
import jax.numpy as jnp
import numpy as np

# %% cell 3 [trace_watch] (provided, read-only)
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, turning a
    Python function into a jaxpr of its own, named after that function (a jitted
    function traced inside another trace emits none). Eager operations emit one as well, because
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

# %% cell 14 [choose_reduction] (answer)
def choose_reduction(values, mode):
    """Reduce every element of ``values`` with the reduction named by ``mode``.

    ``mode`` is configuration ("sum", "mean" or "max"), not data; any other
    value raises ValueError.
    """
    mode = mode.lower()  # accept "Sum", "MAX", ...
    if mode == "sum":
        return jnp.sum(values)
    elif mode == "mean":
        return jnp.mean(values)
    elif mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")

# %% cell 18 [choose] (answer)
# choose: the compiled choose_reduction, with mode static
choose = jax.jit(choose_reduction, static_argnames=("mode",))

# %% cell 31 [normalise] (provided, read-only)
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

# %% cell 33 [normalise_jitted] (answer)
# normalise_jitted: normalise compiled, with only the program choices static
def normalise_static_choices(x, mode, n_iter, eps, clip_at):
    """normalise, with the data-dependent clip decided inside the compiled program."""
    y = x
    for _ in range(n_iter):  # n_iter is static: unrolled while tracing
        y = 0.5 * (y + jnp.roll(y, 1))
    if mode == "l2":  # mode is static: a plain Python string here
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    # peak is a traced value: the compiled program picks the branch
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(normalise_static_choices, static_argnames=("mode", "n_iter"))
