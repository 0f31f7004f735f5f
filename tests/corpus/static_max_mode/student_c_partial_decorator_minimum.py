"""Decorates the function directly with @functools.partial(jax.jit, static_argnums=(1, 2)), so mode and
n_iter are static and the loop unrolls per count, and writes the clip without a branch as y *
jnp.minimum(1.0, clip_at / peak): the factor is 1 when peak <= clip_at (and when peak is 0, where
clip_at / 0 is inf) and clip_at / peak otherwise, exactly normalise's rule. eps and clip_at stay
dynamic. Correct."""

TEACHER = {"test_modes": 3, "test_errors": 1, "test_traces": 2, "test_sorting": 2}

WHY = {
}

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
        return jnp.mean(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}: expected 'sum', 'mean' or 'max'")

# %% cell 18 [choose] (answer)
# choose: the compiled choose_reduction, with mode static
choose = jax.jit(choose_reduction, static_argnames="mode")

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
import functools


@functools.partial(jax.jit, static_argnums=(1, 2))  # mode and n_iter pick the program
def normalise_jitted(x, mode, n_iter, eps, clip_at):
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
    return y * jnp.minimum(1.0, clip_at / peak)  # shrink only when peak > clip_at
