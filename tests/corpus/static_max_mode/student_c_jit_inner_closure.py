"""To avoid static_argnames altogether this student closes over mode and n_iter in an inner function
and calls jax.jit(inner)(x, eps, clip_at) inside normalise_jitted. The values are right, but a new
inner function (a new jit with an empty cache) is made on every call, so every call traces again,
even with only new eps or clip_at values: the mistake the notebook names in Part B. Wrong."""

TEACHER = {"test_modes": 3, "test_errors": 1, "test_traces": 2, "test_sorting": 0}

WHY = {
    'test_sorting': "jax.jit is built around a fresh inner function on every call, so every call re-traces (3 traces in the self-check's eps/clip_at loop instead of 0).",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"only_program_choices_static"}
SCORE = 7
REVIEW = "Part C's two properties are judged apart: the values are right (1 point); a jit made anew on every call traces every time, which costs the other point."


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
_REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}


def choose_reduction(values, mode):
    """Reduce every element of ``values`` with the reduction named by ``mode``.

    ``mode`` is configuration ("sum", "mean" or "max"), not data; any other
    value raises ValueError.
    """
    try:
        reduce = _REDUCTIONS[mode]
    except (KeyError, TypeError):  # TypeError: an unhashable mode such as a list
        raise ValueError(f"unknown mode {mode!r}: expected one of {sorted(_REDUCTIONS)}") from None
    return reduce(values)

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
def normalise_jitted(x, mode, n_iter, eps, clip_at):
    def run(x, eps, clip_at):  # mode and n_iter are plain Python values from the enclosing call
        y = x
        for _ in range(n_iter):
            y = 0.5 * (y + jnp.roll(y, 1))
        if mode == "l2":
            size = jnp.sqrt(jnp.sum(y * y))
        elif mode == "max":
            size = jnp.max(jnp.abs(y))
        else:
            raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
        y = y / (size + eps)
        peak = jnp.max(jnp.abs(y))
        return jnp.where(peak > clip_at, y * (clip_at / peak), y)

    return jax.jit(run)(x, eps, clip_at)
