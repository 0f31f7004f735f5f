"""Wrong. Thinks "traces" means re-tracing, i.e. the same program traced more than once,
so it reports "traces" only when PhaseWatch saw two or more trace events and otherwise falls through to the compile
check. Passes the self-checks (the fresh-lambda loop traces twice), but a loop that traces once (one new shape,
then cached steps; one .trace(); one new function) is called "compiles" or "waits". Its Part A also costs Part C:
the student made lr static "because it is a hyperparameter", so every new learning rate traces the step again
(check_traces fails)."""

TEACHER = {'test_step': 2, 'test_reads': 4, 'test_traces': 0, 'test_ledger': 2, 'test_diagnosis': 0}

WHY = {
    "test_traces": "sgd_step is jitted with static_argnums=3: a new learning rate traces and compiles a new program, and the trainers run at lr=0.3 trace again.",
    "test_diagnosis": "Requires two or more trace events: a loop that traces once is reported 'compiles' (or 'waits' for a single .trace()); the table says any trace is 'traces'."
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"diagnose_tells_traces_from_compiles", "step_reuses_program"}
SCORE = 10
REVIEW = "Each cell's properties are judged apart: Part C's static lr fails the reuse property but not the value one (1 of 2), and in Part E the loops that wait are named right while a loop that traces once is missed (1 of 2)."


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
import functools


@functools.partial(jax.jit, static_argnums=3)  # lr is a fixed hyperparameter
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
    with PhaseWatch() as watch:
        loop()
    if len(watch.traces) > 1:  # traced again, not just the first time
        return "traces"
    if watch.compiles:
        return "compiles"
    return "waits"
