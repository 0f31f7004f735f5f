"""Wrong. Reads the compile log and takes any message that mentions "jaxpr" as a sign of
tracing ("a jaxpr only exists if JAX traced"). But "Finished jaxpr to MLIR module conversion" is logged for every
lowering, including loop_three in the notebook, which traces nothing. So every compile-only loop (a call after
.trace(), a committed device_put, .lower().compile()) is reported as "traces". Fails the third self-check."""

TEACHER = {'test_step': 2, 'test_reads': 4, 'test_traces': 2, 'test_ledger': 2, 'test_diagnosis': 0}

WHY = {
    "test_diagnosis": "Treats 'Finished jaxpr to MLIR module conversion' as a trace: every loop that only compiles (call after .trace(), committed argument, .lower().compile()) is called 'traces'."
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"diagnose_hears_waiting", "diagnose_tells_traces_from_compiles"}
SCORE = 10


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


# %% cell 15 [none] (provided, read-only)
import logging


def compile_log(thunk):
    """Run thunk() with jax_log_compiles on; return the messages JAX logged, in order."""
    messages = []

    class Keep(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    jax_logger = logging.getLogger("jax")
    keep, propagate = Keep(), jax_logger.propagate
    jax_logger.addHandler(keep)
    jax_logger.propagate = False  # keep them out of the cell's stderr
    try:
        with jax.log_compiles(True):
            thunk()
    finally:
        jax_logger.removeHandler(keep)
        jax_logger.propagate = propagate
    return messages


def quarter_sum(v, scale):
    return jnp.sum(v * scale * 0.25)


quarterer = jax.jit(quarter_sum)
v6 = jnp.arange(6.0)
for label, thunk in [
    ("first call", lambda: quarterer(v6, 2.0)),
    ("new scale, cached", lambda: quarterer(v6, 3.0)),
    ("a host read", lambda: float(quarterer(v6, 3.0))),
]:
    print(f"--- {label}")
    for message in compile_log(thunk):
        print(message)


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
    messages = compile_log(loop)
    if any("jaxpr" in m or "tracing" in m for m in messages):
        return "traces"
    if any("Compiling" in m for m in messages):
        return "compiles"
    return "waits"
