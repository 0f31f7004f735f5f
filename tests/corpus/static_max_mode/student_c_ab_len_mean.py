"""Part A computes the mean as jnp.sum(values) / len(values). len counts only the first axis, so for a
2-D array the 'mean' is the total divided by the number of rows, e.g. 1.25 instead of 0.625 for the
notebook's 2x2 check: test_modes fails (eagerly and through choose). Errors and traces are fine.
Part C is correct: mode static, n_iter dynamic through lax.fori_loop, clip with jnp.where."""

TEACHER = {"test_modes": 0, "test_errors": 1, "test_traces": 2, "test_sorting": 2}

WHY = {
    'test_modes': "mean divides by len(values), the first axis only: wrong for 2-D and higher arrays (notebook's own 2x2 example gives 1.25 vs 0.625).",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"mean_matches_numpy"}
SCORE = 7
REVIEW = "Part A's properties are judged apart: the mean divided by len() is wrong for a 2-D array (the mean property's point); the other modes and the jaxpr are right (2 of 3)."


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
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.sum(values) / len(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"mode must be 'sum', 'mean' or 'max', got {mode!r}")

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
def normalise_fori(x, mode, n_iter, eps, clip_at):
    y = jax.lax.fori_loop(0, n_iter, lambda _, y: 0.5 * (y + jnp.roll(y, 1)), x)
    if mode == "l2":
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}: expected 'l2' or 'max'")
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(normalise_fori, static_argnames=("mode",))
