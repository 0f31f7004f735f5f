"""Marks every call as traced and counts calls, not traces."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"traced_only_on_new_signatures", "ledger_matches_jax_events"}
SCORE = 4
MESSAGE = r"marked as traced again"

call_rows = []


@jax.jit
def _scaled_square_sum(x, scale):
    return jnp.sum(scale * x**2)


def observed_call(label, x, scale):
    result = _scaled_square_sum(x, scale)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": True, "trace_count": len(call_rows) + 1, "result": float(result)})
    return result


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)
