"""Partially right: the trace bookkeeping is honest, but the result is stored and returned as the
0-d JAX array that compiled_square_sum gives back, not as a Python float, so the row does not
have the types the table asks for (and the host read the lesson talks about never happens here).
"""


TEACHER = {'test_rows': 1, 'test_traces': 3, 'test_sixteen': 1, 'test_signature': 2}


WHY = {
    'test_rows': 'result is kept (and returned) as a 0-d jax.Array instead of a Python float.',
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"rows_record_results"}
SCORE = 7


# %% cell 1 [imports] (provided, read-only)
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 3 [trace_watch] (provided, read-only)
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a
    jaxpr, named after that function. Eager operations emit one as well, named
    after their primitive (``add``, ``iota``), so build inputs before the block
    and call only the function you are studying inside it.
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


# %% cell 6 (provided)
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


# %% cell 8 (provided)
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


# %% cell 10 [ledger_setup] (provided, read-only)
trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    """The lesson's computation, sum(scale * x ** 2); scale is a runtime value."""
    trace_log["count"] += 1  # runs while JAX traces, never inside the compiled program
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []


# %% cell 12 [observed_call] (student answer)
def observed_call(label, x, scale):
    """Run compiled_square_sum(x, scale), record one ledger row in call_rows, return the result."""
    before = trace_log["count"]
    result = compiled_square_sum(x, scale)
    call_rows.append({
        "label": label,
        "shape": tuple(x.shape),
        "dtype": str(x.dtype),
        "static": {},
        "traced": trace_log["count"] > before,
        "trace_count": trace_log["count"],
        "result": result,
    })
    return result


# %% cell 14 [controlled_calls] (provided, read-only)
x8 = jnp.arange(8, dtype=jnp.float32)
observed_call("first call", x8, 1.0)
observed_call("new values", x8 + 1.0, 1.0)
observed_call("new scale", x8, 2.0)
for row in call_rows:
    print(row)


# %% cell 16 [sixteen_call] (student answer)
x16 = jnp.arange(16, dtype=jnp.float32)
observed_call("new length sixteen", x16, 1.0)
print(call_rows[-1])


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
