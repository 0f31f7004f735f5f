"""Builds a new jitted lambda on every call: the ledger is honest, but every call traces."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"traced_only_on_new_signatures", "ledger_matches_jax_events"}  # and its rows observe another call
SCORE = 4
MESSAGE = r"traced again \(JAX saw 1 trace\(s\)\), although only values or scale changed"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []


def observed_call(label, x, scale):
    before = trace_log["count"]
    result = jax.jit(lambda x, scale: scaled_square_sum(x, scale))(x, scale)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": trace_log["count"] > before, "trace_count": trace_log["count"], "result": float(result)})
    return float(result)


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)
