"""Wrong. Uses PhaseWatch for traces but decides "compiles" versus "waits" by timing:
anything slower than 5 ms without a trace is "compiles" ("XLA compilation takes tens of milliseconds").
Passes the self-checks on a CPU, but a loop that waits on real work (a few 1000x1000 matmuls with
block_until_ready) is called "compiles", and a cheap compile on a fast machine could fall under the threshold.
The notebook says to take the columns from events, not timing."""

TEACHER = {'test_step': 2, 'test_reads': 4, 'test_traces': 2, 'test_ledger': 2, 'test_diagnosis': 1}

WHY = {
    "test_diagnosis": "Uses a 5 ms timing threshold for 'compiles': a loop that only runs heavy compiled steps and waits is reported 'compiles'; timing is not evidence of a compile."
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"diagnose_hears_waiting", "diagnose_tells_traces_from_compiles"}
SCORE = 10
# Its grade follows the machine's speed, as its method does: a compile read from the cache takes a few
# milliseconds on a quiet machine ("waits", the point lost) and more on a busy one (two test workers
# beside two grading processes: "compiles", the point kept). tests/test_graders.py lets this one move.
TIMED = {"diagnose_tells_traces_from_compiles": 1}
REVIEW = ("The teacher took one diagnosis point, reasoning that compiles take tens of milliseconds. Under grading, "
          "the kernel reads the reference's programs from the compile cache, so a loop that only compiles runs in a "
          "few milliseconds and the 5 ms threshold calls it 'waits': timing is not evidence of a compile, and both "
          "points go.")


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
import time


def diagnose(loop):
    with PhaseWatch() as watch:
        start = time.perf_counter()
        loop()
        elapsed = time.perf_counter() - start
    if watch.traces:
        return "traces"
    if elapsed > 0.005:  # compiling takes tens of ms, a cached step microseconds
        return "compiles"
    return "waits"
