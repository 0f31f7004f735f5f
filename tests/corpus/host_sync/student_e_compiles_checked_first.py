"""Wrong. Uses PhaseWatch correctly but tests watch.compiles before watch.traces
("compiling is the expensive part, so check it first"). Every loop that traces also compiles what it
traced, so fresh lambdas, static values and new shapes all come back "compiles"; only a .trace()-only
loop still says "traces". Fails the first self-check assertion."""

TEACHER = {'test_step': 2, 'test_reads': 4, 'test_traces': 2, 'test_ledger': 2, 'test_diagnosis': 0}

WHY = {
    "test_diagnosis": "Checks compiles before traces: a loop that traces and then compiles is reported as 'compiles'; the table says any trace is 'traces'. Only the waits case and the compile-only case are right."
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"diagnose_tells_traces_from_compiles"}
SCORE = 11
REVIEW = "Part E's two properties are judged apart: the loops that wait are named right (1 point); a loop that traces and then compiles, called 'compiles', costs the other point."


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
    with PhaseWatch() as watch:
        loop()
    if watch.compiles:
        return "compiles"
    if watch.traces:
        return "traces"
    return "waits"
