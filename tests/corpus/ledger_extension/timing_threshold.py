"""Decides `traced` by timing: a call slower than 20 ms must have traced. On CPU a trace plus a
compile is slow and a cached call fast, so this mostly agrees, but a compile without a trace
(after `compiled_square_sum.trace(...)`) is slow too, and timing says nothing about tracing."""
import time

import jax
import jax.numpy as jnp

FAILS = {"ledger_matches_jax_events"}
SCORE = 5
MESSAGE = r"compiled_square_sum\.trace\(float32\[10\].*traced, not compiled.*\n\s+Got:\s+traced=True"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []


def observed_call(label, x, scale):
    start = time.perf_counter()
    result = float(compiled_square_sum(x, scale))
    traced = time.perf_counter() - start > 0.02  # 20 ms: a loaded grader must not flip a cached call
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": traced, "trace_count": trace_log["count"], "result": result})
    return result


observed_call("new length sixteen", jnp.arange(16, dtype=jnp.float32), 1.0)
