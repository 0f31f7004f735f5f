"""Decides `traced` by timing: a call slower than 5 ms must have traced. On CPU a trace plus a
compile is slow and a cached call fast, so this mostly agrees, but a compile without a trace
(after `compiled_square_sum.trace(...)`) is slow too, and timing says nothing about tracing.
(The wall clock is replaced by the compile time JAX reports, so the verdict does not depend on
the machine's load: a call is "slow" exactly when it compiled.)"""
import time

import jax
import jax.numpy as jnp

FAILS = {"ledger_matches_jax_events"}
SCORE = 7
MESSAGE = r"compiled_square_sum\.trace\(float32\[10\].*traced, not compiled.*\n\s+Got:\s+traced=True"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []

# The time spent compiling during a call, as JAX reports it: the corpus's stand-in for the
# student's wall clock, which a loaded or a quiet machine flipped both ways (a cached call over the
# threshold, a first compile under it). A call is "slow" exactly when it compiled.
_compile_seconds = [0.0]


def _on_jax_event(event, duration_secs, **_):
    if event == "/jax/core/compile/backend_compile_duration":
        _compile_seconds[0] += duration_secs


jax.monitoring.register_event_duration_secs_listener(_on_jax_event)


def observed_call(label, x, scale):
    before = _compile_seconds[0]
    result = float(compiled_square_sum(x, scale))
    traced = _compile_seconds[0] > before  # slow: it compiled
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": traced, "trace_count": trace_log["count"], "result": result})
    return result


observed_call("new length sixteen", jnp.arange(16, dtype=jnp.float32), 1.0)


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
