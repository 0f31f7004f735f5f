"""Correct, unusual style. Does not use PhaseWatch: registers its own duration listener
on jax.monitoring with two counters in a closure, runs loop() once in try/finally, always unregisters,
and maps the counts to the three answers with any trace first. Same evidence as PhaseWatch (the two event
names), and no listener is left behind even if the loop raises."""

TEACHER = {'test_step': 2, 'test_reads': 4, 'test_traces': 2, 'test_ledger': 2, 'test_diagnosis': 2}

WHY = {}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 12


# %% cell 1 [imports] (provided, read-only)
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 10 [phase_watch] (provided, read-only)
class PhaseWatch:
    """Collect JAX's trace and compile events while a ``with`` block runs.

    JAX fires one monitoring event each time it starts a top-level trace, turning a
    Python function into a jaxpr of its own (named after the function; a jitted function
    traced inside another trace fires none), and another each time XLA compiles a
    program (named ``jit(<function>)``). Eager operations fire them too, for small programs of JAX's own,
    the first time each operation meets a signature; a repeat at a signature it has already
    met fires nothing. So build inputs before the block and run only what you are studying
    inside it.
    """

    TRACE = "/jax/core/compile/jaxpr_trace_duration"
    COMPILE = "/jax/core/compile/backend_compile_duration"

    def __init__(self):
        self.traces, self.compiles = [], []
        self._listener = self._record

    def _record(self, event, duration_secs, **details):
        if event == self.TRACE:
            self.traces.append(details.get("fun_name", "?"))
        elif event == self.COMPILE:
            self.compiles.append(details.get("fun_name", "?"))

    def __enter__(self):
        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def __exit__(self, *exc_info):
        jax.monitoring.unregister_event_duration_listener(self._listener)
        return False


# %% cell 18 [sgd_step] (answer)
@jax.jit
def sgd_step(theta, x, y, lr):
    residual = x @ theta - y
    loss = jnp.mean(residual ** 2)
    grad = (2.0 / x.shape[0]) * (x.T @ residual)
    return theta - lr * grad, loss


# %% cell 22 [trainers] (answer)
def train_reading_every_step(theta, batches, lr, read):
    losses = []
    for x, y in batches:
        theta, loss = sgd_step(theta, x, y, lr)
        losses.append(read(loss))
    return theta, losses


def train_reading_once(theta, batches, lr, read):
    kept = []
    for x, y in batches:
        theta, loss = sgd_step(theta, x, y, lr)
        kept.append(loss)
    host = read(jnp.stack(kept))
    return theta, [float(v) for v in host]


# %% cell 29 [phase_row] (answer)
def phase_row(label, thunk):
    with PhaseWatch() as watch:
        thunk()
    return {
        "label": label,
        "traced": len(watch.traces) > 0,
        "compiled": len(watch.compiles) > 0,
        "traces": len(watch.traces),
        "compiles": len(watch.compiles),
    }


# %% cell 35 [diagnose] (answer)
def diagnose(loop):
    counts = {"trace": 0, "compile": 0}

    def listener(event, duration_secs, **kwargs):
        if event == "/jax/core/compile/jaxpr_trace_duration":
            counts["trace"] += 1
        elif event == "/jax/core/compile/backend_compile_duration":
            counts["compile"] += 1

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        loop()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return "traces" if counts["trace"] else ("compiles" if counts["compile"] else "waits")
