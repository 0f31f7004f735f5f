"""Literal student (literal student, issue 52), literal student: rows: observed_call reads trace_log before/after compiled_square_sum(x, scale), appends the dict with exactly the table's keys; 'Use trace_log["count"] before and after the call to decide "traced"'; traces: same code: traced = after > before, trace_count = after; sixteen: x16 = jnp.arange(16, dtype=jnp.float32); observed_call("new length sixteen", x16, 1.0); print(call_rows[-1]) as Part B spells out; signature: jax.tree.flatten((args, kwargs)) -> (str(structure), tuple(str(jax.typeof(leaf))), kwargs['power']); the two tools cell [28]/[29] names ('jax.typeof ... jax.tree.flatten'); checked the listed guesses with traced_again; pause_and_reason: inspect host reads that wait; ledger counts traces, no trace counter sees the wait; from 'The idea' paragraph"""

TEACHER = {}
WHY = {"rows": "observed_call reads trace_log before/after compiled_square_sum(x, scale), appends the dict with exactly the table's keys; 'Use trace_log[\"count\"] before and after the call to decide \"traced\"'", "traces": "same code: traced = after > before, trace_count = after", "sixteen": "x16 = jnp.arange(16, dtype=jnp.float32); observed_call(\"new length sixteen\", x16, 1.0); print(call_rows[-1]) as Part B spells out", "signature": "jax.tree.flatten((args, kwargs)) -> (str(structure), tuple(str(jax.typeof(leaf))), kwargs['power']); the two tools cell [28]/[29] names ('jax.typeof ... jax.tree.flatten'); checked the listed guesses with traced_again", "pause_and_reason": "inspect host reads that wait; ledger counts traces, no trace counter sees the wait; from 'The idea' paragraph"}

# %% cell 1
import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, the names and counts of JAX's trace and compile events, and JAX's error messages may differ from what the text describes.")

# %% cell 3
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, named after the
    function traced (a jitted function traced inside another trace emits none). The
    event is not proof that the function's Python ran: after another jitted function's
    ``.clear_cache()``, a ``.trace()`` or a call with a committed array, at a signature
    already traced, emits it again while JAX reuses the jaxpr it kept. Eager operations emit one as well, because
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

# %% cell 6
demo_traces = {"count": 0}


def centered_norm(x):
    """Length of x after subtracting its mean."""
    demo_traces["count"] += 1  # plain Python: runs only while JAX traces centered_norm
    return jnp.sqrt(jnp.sum((x - jnp.mean(x)) ** 2))


compiled_norm = jax.jit(centered_norm)

for label, x in [
    ("first call", jnp.ones(4)),
    ("new values", jnp.arange(4.0)),
    ("new shape", jnp.arange(6.0)),
    ("new dtype", jnp.arange(6, dtype=jnp.int32)),
]:
    before = demo_traces["count"]
    value = float(compiled_norm(x))
    print(f"{label:<11} shape={x.shape} dtype={x.dtype!s:<8} traced={demo_traces['count'] > before!s:<5} "
          f"traces so far={demo_traces['count']} result={value:.3f}")

# %% cell 8
import time


@jax.jit
def accumulate(total, batch):
    return total + jnp.sum(batch ** 2)


batches = [jnp.full((256,), float(i), dtype=jnp.float32) for i in range(5)]
accumulate(jnp.float32(0.0), batches[0])  # trace and compile before timing

start = time.perf_counter()
total, per_step_reads = jnp.float32(0.0), []
for batch in batches:
    total = accumulate(total, batch)
    per_step_reads.append(float(total))  # a host read every step
per_step_seconds = time.perf_counter() - start

start = time.perf_counter()
total = jnp.float32(0.0)
for batch in batches:
    total = accumulate(total, batch)
final_read = float(total)  # one host read at the end
final_seconds = time.perf_counter() - start

assert per_step_reads[-1] == final_read
print(f"per-step reads: {per_step_seconds * 1e3:.2f} ms, one final read: {final_seconds * 1e3:.2f} ms, result {final_read}")

# %% cell 10
demo_traces["count"] = 0
fresh = jnp.arange(3.0)
strong_half = jnp.float32(0.5)
steps = [
    ("trace only: compiled_norm.trace(fresh)", lambda: compiled_norm.trace(fresh)),
    ("call after .trace(): compiles, no trace", lambda: compiled_norm(fresh)),
    ("cached call", lambda: compiled_norm(fresh)),
    ("jax.clear_caches(), then the same call", lambda: (jax.clear_caches(), compiled_norm(fresh))),
]
for label, step in steps:
    before = demo_traces["count"]
    step()
    print(f"{label:<42} traced={demo_traces['count'] > before}")

weighted = jax.jit(lambda x, w: jnp.sum(w * x))
with TraceWatch() as watch:
    weighted(fresh, 0.5)          # weakly typed w
    weighted(fresh, strong_half)  # strong float32 w: same shape and dtype of x, a new trace
print("traces for a weak, then a strong scale:", watch.count)

# %% cell 12
trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    """The lesson's computation, sum(scale * x ** 2); scale is a runtime value."""
    trace_log["count"] += 1  # runs while JAX traces, never inside the compiled program
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []

# %% cell 14
def observed_call(label, x, scale):
    """Run compiled_square_sum(x, scale), record one ledger row in call_rows, return the result."""
    before = trace_log["count"]
    result = compiled_square_sum(x, scale)
    after = trace_log["count"]
    value = float(result)
    call_rows.append({
        "label": label,
        "shape": tuple(x.shape),
        "dtype": str(x.dtype),
        "static": {},
        "traced": after > before,
        "trace_count": after,
        "result": value,
    })
    return value

# %% cell 16
x8 = jnp.arange(8, dtype=jnp.float32)
observed_call("first call", x8, 1.0)
observed_call("new values", x8 + 1.0, 1.0)
observed_call("new scale", x8, 2.0)
for row in call_rows:
    print(row)

# %% cell 18
x16 = jnp.arange(16, dtype=jnp.float32)
observed_call("new length sixteen", x16, 1.0)
print(call_rows[-1])

# %% cell 27
power_log = {"count": 0}


def powered_sum(x, scale, *, power):
    """sum(scale * leaf ** power) over every array in x; power is static."""
    power_log["count"] += 1  # runs only while JAX traces
    return sum(jnp.sum(scale * leaf ** power) for leaf in jax.tree.leaves(x))


compiled_powered_sum = jax.jit(powered_sum, static_argnames=("power",))


def traced_again(first, second):
    """From a cleared cache, call compiled_powered_sum(*args, **kwargs) for `first`, then for `second`
    (each an (args, kwargs) pair); return whether the second call traced."""
    compiled_powered_sum.clear_cache()
    args, kwargs = first
    compiled_powered_sum(*args, **kwargs)
    before = power_log["count"]
    args, kwargs = second
    compiled_powered_sum(*args, **kwargs)
    return power_log["count"] > before

# %% cell 29
x3 = jnp.arange(3.0)
leaves, structure = jax.tree.flatten({"b": x3, "a": (x3, x3 * 2)})
print("leaves:", len(leaves), "| structure:", structure)
print("types:", jax.typeof(x3), jax.typeof(x3.astype(jnp.int32)), jax.typeof(jnp.ones((2, 2))))
print("new values, traced again:", traced_again(((x3, 1.0), {"power": 2}), ((x3 + 1.0, 1.0), {"power": 2})))
print("new shape, traced again: ", traced_again(((x3, 1.0), {"power": 2}), ((jnp.arange(4.0), 1.0), {"power": 2})))

# %% cell 31
def signature_of(args, kwargs):
    """A hashable value that is equal for two calls of compiled_powered_sum exactly when JAX reuses a program."""
    leaves, structure = jax.tree.flatten((args, kwargs))
    return (str(structure), tuple(str(jax.typeof(leaf)) for leaf in leaves), kwargs["power"])

# %% cell 36
compiled_powered_sum.clear_cache()
powered_rows, signatures_met = [], set()
for label, args, kwargs in [
    ("first call", (jnp.ones(3), 2.0), {"power": 2}),
    ("new values", (jnp.full(3, 5.0, dtype=jnp.float32), 3.0), {"power": 2}),
    ("new power only", (jnp.full(3, 5.0, dtype=jnp.float32), 3.0), {"power": 3}),
    ("first call again", (jnp.ones(3), 2.0), {"power": 2}),
]:
    predicted = signature_of(args, kwargs) not in signatures_met
    signatures_met.add(signature_of(args, kwargs))
    before = power_log["count"]
    compiled_powered_sum(*args, **kwargs)
    powered_rows.append({"label": label, "shape": tuple(np.shape(args[0])), "static": {"power": kwargs["power"]},
                         "traced": power_log["count"] > before, "predicted": predicted})
for row in powered_rows:
    print(row)


