"""The fifth literal student (docs/literal-student.md, 2026-12-07, after seven parts were reworded to
state their contract and no cure): it saw only release/, passed every self-check on its first run and
earns every automatic point. Part A: the formulas by hand, `@jax.jit` as on worked cell 4's `decay`; the trainers per their text;
`phase_row` and `diagnose` read `PhaseWatch`."""

FAILS = set()
SCORE = 12


# %% cell 1
import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "The wording of the `jax_log_compiles` messages (Finished tracing, Compiling, Finished XLA compilation) may differ from what the text shows, and so may the names and counts of trace and compile events.")

# %% cell 4
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

# %% cell 7
import time

cube = jax.jit(lambda m: (m @ m) @ m)
big = jnp.full((1000, 1000), 1e-3)
cube(big).block_until_ready()  # trace and compile first: time only the work

start = time.perf_counter()
product = cube(big)                      # returns once the work is queued
dispatched = time.perf_counter() - start
product.block_until_ready()              # the boundary: waits for the work, converts nothing
finished = time.perf_counter() - start
print(f"time to dispatch: {dispatched * 1e3:.2f} ms | time to the result: {finished * 1e3:.2f} ms")

# %% cell 10
class PhaseWatch:
    """Collect JAX's trace and compile events while a ``with`` block runs.

    JAX fires one monitoring event each time it starts a top-level trace (named after
    the function; a jitted function traced inside another trace fires none), and another
    each time XLA compiles a program (named ``jit(<function>)``). A trace event is not
    proof that the function's Python ran: after another jitted function's
    ``.clear_cache()``, a ``.trace()`` or a call with a committed array, at a signature
    already traced, fires it again while JAX reuses the jaxpr it kept. Eager operations fire them too, for small programs of JAX's own,
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

# %% cell 11
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

# %% cell 13
v7 = jnp.arange(7.0)
halver.trace(v7, 2.0)  # the trace at shape 7 is cached now
with PhaseWatch() as watch:
    halver.lower(v7, 2.0).compile()
print(f"{'halver.lower(v7, 2.0).compile()':<34} traces={watch.traces} compiles={watch.compiles}")

# %% cell 15
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

# %% cell 18
@jax.jit
def sgd_step(theta, x, y, lr):
    """One SGD step on the mean squared error; returns (new_theta, loss before the step)."""
    batch = x.shape[0]
    residual = x @ theta - y
    loss = jnp.sum(residual ** 2) / batch          # L(theta) = 1/B sum (x_i . theta - y_i)^2
    grad = (2.0 / batch) * (x.T @ residual)        # grad L = 2/B X^T (X theta - y)
    return theta - lr * grad, loss

# %% cell 22
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
    losses = read(jnp.stack(kept)).tolist()
    return theta, losses

# %% cell 29
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

# %% cell 33
def tiny_step(theta, lr):
    return theta - lr * jnp.sin(theta)


tiny = jax.jit(tiny_step)
tiny_static = jax.jit(tiny_step, static_argnums=1)
theta4 = jnp.linspace(0.5, 1.0, 4)
tiny(theta4, 0.1)  # compiled once, before any loop below runs


def loop_one():
    for _ in range(3):
        np.asarray(tiny(theta4, 0.1))


def loop_two():
    for k in range(3):
        tiny_static(theta4, 0.1 * (k + 1))


def loop_three():
    for _ in range(3):
        tiny(jax.device_put(theta4, jax.devices()[0]), 0.1)


for name, loop in (("loop_one", loop_one), ("loop_two", loop_two), ("loop_three", loop_three)):
    print(f"--- {name}")
    for message in compile_log(loop):
        print(message.splitlines()[0][:110])

# %% cell 35
def diagnose(loop):
    with PhaseWatch() as watch:
        loop()
    if watch.traces:
        return "traces"
    if watch.compiles:
        return "compiles"
    return "waits"
