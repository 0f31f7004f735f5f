"""Hana Sato: times the blocked call and marks "traced" when it took longer than 10 ms.
Wrong: after compiled_square_sum.trace(...) the next call compiles (slow) without tracing, so timing
says traced=True; the notebook says not to guess from timing.
(In the corpus the wall clock is replaced by the compile time JAX reports, so the verdict does not
depend on the machine's load: a call is "slow" exactly when it compiled.)"""

# Teacher's split per graded cell:
# test_rows (2): 1 = every row's "shape" is a tuple and "dtype" a string such as "float32";
#                1 = every row's "result" is a Python float equal to the call's value, and
#                    observed_call returns that same Python float.
# test_traces (3): 2 = "traced" is True exactly when this call of compiled_square_sum(x, scale) ran a
#                      Python trace (weak then strong scale, after a direct call, after .trace(),
#                      after clear_cache());
#                  1 = "trace_count" is trace_log["count"] read after the call (outside traces included).
# test_sixteen (1): a row made by observed_call("new length sixteen", x16, 1.0), x16 = float32 0..15:
#                   shape (16,), dtype "float32", result 1240.0.

TEACHER = {'test_rows': 2, 'test_traces': 1, 'test_sixteen': 1, 'test_signature': 2}
WHY = {'test_traces': '"traced" comes from timing: the call after .trace() compiles slowly without tracing and is marked traced=True (and a loaded machine can flip any row); trace_count is right (1/3).'}


# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'ledger_matches_jax_events'}
SCORE = 7
REVIEW = 'test_traces: the teacher took both points of the `traced` column; the properties keep one for repeated calls (`traced_only_on_new_signatures`), which this ledger marks right, and take `ledger_matches_jax_events` for the scenarios where it guesses wrong (2 left).'

# %% cell 1 [imports]
import jax
import jax.numpy as jnp
import numpy as np

# %% cell 3 [trace_watch]
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a
    jaxpr, named after that function. Eager operations emit one as well, because
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

# %% cell 6 [worked_example_counter]
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

# %% cell 8 [worked_example_host_reads]
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

# %% cell 10 [worked_example_pitfalls]
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

# %% cell 12 [ledger_setup]
trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    """The lesson's computation, sum(scale * x ** 2); scale is a runtime value."""
    trace_log["count"] += 1  # runs while JAX traces, never inside the compiled program
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []

# %% cell 14 [observed_call]
import time

# The time spent compiling during a call, as JAX reports it: the corpus's stand-in for the
# student's wall clock, which a loaded or a quiet machine flipped both ways (a cached call over the
# threshold, a first compile under it). A call is "slow" exactly when it compiled.
_compile_seconds = [0.0]


def _on_jax_event(event, duration_secs, **_):
    if event == "/jax/core/compile/backend_compile_duration":
        _compile_seconds[0] += duration_secs


jax.monitoring.register_event_duration_secs_listener(_on_jax_event)


def observed_call(label, x, scale):
    """Run compiled_square_sum(x, scale), record one ledger row in call_rows, return the result."""
    before = _compile_seconds[0]
    out = compiled_square_sum(x, scale).block_until_ready()
    traced = _compile_seconds[0] > before  # tracing (and compiling) is what makes a call slow
    result = float(out)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": traced, "trace_count": trace_log["count"], "result": result})
    return result

# %% cell 16 [controlled_calls]
x8 = jnp.arange(8, dtype=jnp.float32)
observed_call("first call", x8, 1.0)
observed_call("new values", x8 + 1.0, 1.0)
observed_call("new scale", x8, 2.0)
for row in call_rows:
    print(row)

# %% cell 18 [sixteen_call]
x16 = jnp.arange(16, dtype=jnp.float32)
# Prediction: shape (16,) is new, so traced=True; result = 0² + 1² + ... + 15² = 1240.0
observed_call("new length sixteen", x16, 1.0)
print(call_rows[-1])

# %% cell 20 [check_rows]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
labels = [row["label"] for row in call_rows[:3]]
assert labels == ["first call", "new values", "new scale"], f"the first three rows are labelled {labels}"
for row, expected in zip(call_rows[:3], (140.0, 204.0, 280.0)):
    assert isinstance(row["shape"], tuple) and row["shape"] == (8,), f"{row['label']}: shape {row['shape']!r}"
    assert row["dtype"] == "float32", f"{row['label']}: dtype {row['dtype']!r}, expected 'float32'"
    assert isinstance(row["result"], float) and row["result"] == expected, f"{row['label']}: result {row['result']!r}"
    assert row["static"] == {}, f"{row['label']}: this computation has no static choices"

count_before = len(call_rows)
matrix = jnp.arange(6, dtype=jnp.int32).reshape(2, 3)
returned = observed_call("int32 matrix", matrix, 2.0)
assert len(call_rows) == count_before + 1, "observed_call should append exactly one row"
row = call_rows[-1]
assert row["shape"] == (2, 3) and row["dtype"] == "int32", f"int32 matrix row: {row}"
assert row["result"] == 110.0 and returned == 110.0, f"int32 matrix: result {row['result']!r}, returned {returned!r}"

# %% cell 22 [check_traces]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
first, new_values, new_scale = call_rows[:3]
for row in (first, new_values, new_scale):
    assert isinstance(row["traced"], (bool, np.bool_)), f"{row['label']}: traced should be a bool, not {row['traced']!r}"
assert first["traced"], "the first call at shape (8,) traced, so its row should say so"
assert not new_values["traced"], "only the values changed: that call did not trace"
assert not new_scale["traced"], "scale is dynamic: changing it did not trace"
assert first["trace_count"] == new_values["trace_count"] == new_scale["trace_count"] >= 1

fresh_inputs = [jnp.ones(n, dtype=jnp.float32) for n in (5, 5, 7)]
for x in fresh_inputs:
    with TraceWatch() as watch:
        observed_call(f"fresh length {x.shape[0]}", x, 0.5)
    row = call_rows[-1]
    jax_traced = "scaled_square_sum" in watch.names
    assert bool(row["traced"]) == jax_traced, (
        f"length {x.shape[0]}: the row says traced={row['traced']}, JAX {'did' if jax_traced else 'did not'} trace"
    )
    assert row["trace_count"] == trace_log["count"], (
        f"length {x.shape[0]}: trace_count {row['trace_count']}, but trace_log has seen {trace_log['count']}"
    )

# %% cell 24 [check_sixteen]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
sixteen = [row for row in call_rows if row["label"] == "new length sixteen"]
assert sixteen, "no ledger row is labelled 'new length sixteen'"
row = sixteen[0]
assert row["shape"] == (16,) and row["dtype"] == "float32", f"shape {row['shape']!r}, dtype {row['dtype']!r}"
assert row["result"] == float(sum(i * i for i in range(16))), f"result {row['result']!r}, expected 1240.0"


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
