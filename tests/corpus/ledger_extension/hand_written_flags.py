"""Hand-writes the trace columns (never traced, count 1) instead of observing them."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"ledger_matches_jax_events"}
SCORE = 5
MESSAGE = r"JAX traced"

call_rows = []


@jax.jit
def _scaled_square_sum(x, scale):
    return jnp.sum(scale * x**2)


def observed_call(label, x, scale):
    result = _scaled_square_sum(x, scale)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": False, "trace_count": 1, "result": float(result)})
    return result


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)
