"""MISTAKE (ledger predicts). Correct step and trainers; phase_row does not listen to JAX at all: it
infers the columns from the thunk's result type (Traced/Lowered -> traced, Compiled -> both) and, for
plain calls, from wall-clock time (slow -> compiled). Passes the three visible rows; counts are just
int(bool).
"""

TEACHER = {'test_step': 2, 'test_reads': 4, 'test_traces': 2, 'test_ledger': 0, 'test_diagnosis': 2}
WHY = {'test_ledger': 'the columns are predicted from the result type and from timing, which the notebook forbids; it is wrong for e.g. a new float32-array lr or a call after a cleared cache (traced but reported untraced), for .lower() after .trace(), and the counts for the two-new-shapes thunk (2, reported 1).'}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'ledger_compiled_column', 'ledger_traced_column'}
SCORE = 10


# %% cell 1 [imports]
import jax
import jax.numpy as jnp
import numpy as np

# %% cell 4 [-]
class CountingRead:
    """Convert a device array to a host value (float for a scalar, NumPy otherwise) and count it."""

    def __init__(self):
        self.calls = 0

    def __call__(self, value):
        self.calls += 1
        host = np.asarray(value)
        return float(host) if host.ndim == 0 else host


demo_traces = {"count": 0}


@jax.jit
def decay(w, rate):
    demo_traces["count"] += 1  # runs only while JAX traces decay
    w = w * (1.0 - rate)
    return w, jnp.sum(w * w)


w0 = jnp.ones(4)
decay(w0, 0.1)  # trace and compile once, before anything is measured
demo_traces["count"] = 0

every = CountingRead()
w, per_step = w0, []
for _ in range(6):
    w, size = decay(w, 0.1)
    per_step.append(every(size))      # waits for this step before the next one starts

once = CountingRead()
w, kept = w0, []
for _ in range(6):
    w, size = decay(w, 0.1)
    kept.append(size)                 # stays on the device; Python runs ahead
at_the_end = once(jnp.stack(kept)).tolist()

print("reads:", every.calls, "vs", once.calls, "| traces during both loops:", demo_traces["count"])
print("same numbers:", np.allclose(per_step, at_the_end))

# %% cell 7 [phase_watch]
class PhaseWatch:
    """Collect JAX's trace and compile events while a ``with`` block runs.

    JAX fires one monitoring event each time it turns a Python function into a jaxpr
    (named after the function) and another each time XLA compiles a program (named
    ``jit(<function>)``). Eager operations fire both for small programs of JAX's own, so
    build inputs before the block and run only what you are studying inside it.
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

# %% cell 8 [-]
def halve(v, scale):
    return v * scale * 0.5


halver = jax.jit(halve)
v3, v5 = jnp.arange(3.0), jnp.arange(5.0)
phases = [
    ("halver.trace(v3, 2.0)", lambda: halver.trace(v3, 2.0)),
    ("halver(v3, 2.0) after .trace()", lambda: halver(v3, 2.0)),
    ("halver(v3, 3.0), cached", lambda: halver(v3, 3.0)),
    ("halver.lower(v5, 2.0).compile()", lambda: halver.lower(v5, 2.0).compile()),
    ("halver(v5, 2.0) after that", lambda: halver(v5, 2.0)),
]
for label, thunk in phases:
    with PhaseWatch() as watch:
        thunk()
    print(f"{label:<34} traces={watch.traces} compiles={watch.compiles}")

# %% cell 11 [sgd_step]
def _loss(theta, x, y):
    r = x @ theta - y
    return jnp.mean(r ** 2)


@jax.jit
def sgd_step(theta, x, y, lr):
    loss, grad = jax.value_and_grad(_loss)(theta, x, y)
    return theta - lr * grad, loss

# %% cell 12 [check_step]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
x_check = jnp.array([[1.0, 0.0], [0.0, 2.0]])
y_check = jnp.array([1.0, 0.0])
theta_check, loss_check = sgd_step(jnp.zeros(2), x_check, y_check, 0.5)
assert isinstance(loss_check, jax.Array) and loss_check.shape == (), f"loss should be a device scalar, got {loss_check!r}"
assert np.isclose(np.asarray(loss_check), 0.5), f"loss at theta=0 is mean([1, 0]) = 0.5, got {loss_check}"
assert np.allclose(np.asarray(theta_check), [0.5, 0.0]), f"one step from 0 with lr=0.5 gives [0.5, 0], got {theta_check}"
_, loss_again = sgd_step(theta_check, x_check, y_check, 0.5)
assert np.isclose(np.asarray(loss_again), 0.125), f"the loss of the second step starts from the updated theta: {loss_again}"

# %% cell 15 [trainers]
def train_reading_every_step(theta, batches, lr, read):
    losses = []
    for x, y in batches:
        theta, loss = sgd_step(theta, x, y, lr)
        losses.append(read(loss))
    return theta, losses


def train_reading_once(theta, batches, lr, read):
    device_losses = []
    for x, y in batches:
        theta, loss = sgd_step(theta, x, y, lr)
        device_losses.append(loss)
    host = read(jnp.stack(device_losses))
    return theta, [float(v) for v in host]

# %% cell 16 [check_trainers]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
rng_check = np.random.default_rng(0)
batches_check = [(rng_check.uniform(-1, 1, (4, 3)).astype(np.float32), rng_check.uniform(-1, 1, 4).astype(np.float32))
                 for _ in range(5)]
theta_start = jnp.zeros(3)
every_read, once_read = CountingRead(), CountingRead()
theta_a, losses_a = train_reading_every_step(theta_start, batches_check, 0.1, every_read)
theta_b, losses_b = train_reading_once(theta_start, batches_check, 0.1, once_read)
assert every_read.calls == 5, f"train_reading_every_step called read {every_read.calls} times in 5 steps"
assert once_read.calls == 1, f"train_reading_once called read {once_read.calls} times, not once"
assert isinstance(losses_a, list) and len(losses_a) == 5 and all(isinstance(v, float) for v in losses_a), losses_a
assert isinstance(losses_b, list) and len(losses_b) == 5 and all(isinstance(v, float) for v in losses_b), losses_b
assert np.allclose(losses_a, losses_b) and np.allclose(np.asarray(theta_a), np.asarray(theta_b)), "the trainers disagree"
assert np.isclose(losses_a[0], float(np.mean(batches_check[0][1] ** 2))), "the first loss is at theta = 0"

# %% cell 19 [check_traces]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
sgd_step(jnp.zeros(3), *batches_check[0], 0.1)  # this signature is compiled now
with PhaseWatch() as watch:
    for lr in (0.1, 0.05, 0.2):
        sgd_step(jnp.ones(3), *batches_check[1], lr)
    train_reading_every_step(theta_start, batches_check, 0.3, CountingRead())
    train_reading_once(theta_start, batches_check, 0.3, CountingRead())
step_traces = [name for name in watch.traces if name not in ("stack", "concatenate", "broadcast_in_dim", "expand_dims")]
print("traces seen:", watch.traces)
assert not step_traces, f"new learning rates or data traced again: {step_traces}"

# %% cell 22 [phase_row]
import time


def phase_row(label, thunk):
    start = time.perf_counter()
    result = thunk()
    jax.block_until_ready(result) if isinstance(result, jax.Array) else None
    elapsed = time.perf_counter() - start
    if isinstance(result, jax.stages.Compiled):
        traced, compiled = True, True
    elif isinstance(result, (jax.stages.Traced, jax.stages.Lowered)):
        traced, compiled = True, False
    else:
        # a plain call: it was traced earlier, it compiled only if it was slow
        traced, compiled = False, elapsed > 2e-3
    return {"label": label, "traced": traced, "compiled": compiled,
            "traces": int(traced), "compiles": int(compiled)}

# %% cell 23 [check_ledger]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
def shrink(v, rate):
    return v - rate * v


shrinker = jax.jit(shrink)
v4 = jnp.arange(4.0)
ledger = [
    phase_row("trace only", lambda: shrinker.trace(v4, 0.5)),
    phase_row("call after trace", lambda: shrinker(v4, 0.5)),
    phase_row("cached call, new rate", lambda: shrinker(v4, 0.25)),
]
for row in ledger:
    print(row)
# (The self-check's asserts are left out here: this answer's compiled column is a guess from the time a
# call took, which a busy machine turns either way, and the corpus runs beside other work.)


# %% Part E, answered as the reference does (the same in every file that is not about Part E)
import logging as _logging


def diagnose(loop):
    messages = []

    class _Keep(_logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    jax_logger = _logging.getLogger("jax")
    keep, propagate = _Keep(), jax_logger.propagate
    jax_logger.addHandler(keep)
    jax_logger.propagate = False
    try:
        with jax.log_compiles(True):
            loop()
    finally:
        jax_logger.removeHandler(keep)
        jax_logger.propagate = propagate
    if any(message.startswith("Finished tracing") for message in messages):
        return "traces"
    if any(message.startswith("Finished XLA compilation") for message in messages):
        return "compiles"
    return "waits"
